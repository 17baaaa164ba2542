import numpy as np
import pytest
import torch
from sentence_transformers import SentenceTransformer

from models.dual_encoder import DualEncoder, load_encoder
from models.pooling import pool


def test_mean_pooling_ignores_padding():
    tokens = torch.tensor([[[1.0, 1.0], [3.0, 3.0], [100.0, 100.0]]])
    mask = torch.tensor([[1, 1, 0]])
    assert torch.equal(pool(tokens, mask, "mean"), torch.tensor([[2.0, 2.0]]))
    assert torch.equal(pool(tokens, mask, "max"), torch.tensor([[3.0, 3.0]]))
    assert torch.equal(pool(tokens, mask, "cls"), torch.tensor([[1.0, 1.0]]))


def test_padding_does_not_change_embeddings(tiny_backbone):
    enc = DualEncoder.from_backbone(tiny_backbone)
    alone = enc.encode_queries(["a short text"])
    batched = enc.encode_queries(["a short text", "a much longer text that forces padding of the first one"])
    assert np.allclose(alone[0], batched[0], atol=1e-5)
    assert np.allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize("shared", [True, False])
def test_save_load_round_trip_and_sentence_transformers(tiny_backbone, tmp_path, shared):
    enc = DualEncoder.from_backbone(tiny_backbone, shared=shared, max_document_length=32)
    if not shared:  # make the towers differ, as after training
        with torch.no_grad():
            next(enc.document_model.parameters()).add_(0.5)
    texts = ["first table about films", "second"]
    enc.save_pretrained(tmp_path / "ckpt")
    back = DualEncoder.from_pretrained(tmp_path / "ckpt")
    assert back.config == enc.config and back.identity == enc.identity
    for a, b in zip(enc.state_dict().values(), back.state_dict().values()):
        assert torch.equal(a, b)
    assert np.array_equal(enc.encode_documents(texts), back.encode_documents(texts))
    st_path = tmp_path / "ckpt" if shared else tmp_path / "ckpt" / "document_encoder"
    st = SentenceTransformer(str(st_path), device="cpu")
    assert np.allclose(st.encode(texts), enc.encode_documents(texts), atol=1e-5)
    if not shared:
        assert not np.allclose(enc.encode_queries(texts), enc.encode_documents(texts))


def test_from_pretrained_rejects_plain_folder(tiny_backbone):
    with pytest.raises(FileNotFoundError, match="not a dual encoder checkpoint"):
        DualEncoder.from_pretrained(tiny_backbone)


def test_load_encoder_takes_a_checkpoint_or_a_backbone(tiny_backbone, tmp_path):
    trained = DualEncoder.from_backbone(tiny_backbone, max_document_length=32)
    with torch.no_grad():
        next(trained.query_model.parameters()).add_(0.5)
    trained.save_pretrained(tmp_path / "ckpt")
    loaded = load_encoder(str(tmp_path / "ckpt"))  # a checkpoint: its weights and settings
    assert loaded.identity == trained.identity and loaded.config.max_document_length == 32
    fresh = load_encoder(tiny_backbone)  # a backbone: a fresh dual encoder with the default settings
    assert fresh.config.base_model == tiny_backbone and fresh.identity != trained.identity
