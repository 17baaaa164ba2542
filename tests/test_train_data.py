"""Training examples through ``datasets``: the tokenised path gives the text path's batches and weights, bit for bit."""

from __future__ import annotations

import pytest
import torch
from accelerate.state import AcceleratorState

pytest.importorskip("datasets")

from models.dual_encoder import DualEncoder  # noqa: E402
from models.losses import InBatchContrastiveLoss  # noqa: E402
from train import data  # noqa: E402
from train.args import TrainingArguments  # noqa: E402
from train.data import (  # noqa: E402
    PAIR_FIELDS,
    TRIPLET_FIELDS,
    PairCollator,
    TokenizedPairCollator,
    TokenizedTripletCollator,
    tokenized_examples,
)
from train.loop import make_accelerator, train  # noqa: E402
from train.triplets import TripletCollator  # noqa: E402

WORDS = "the reds won the cup in nineteen ninety two after a long season of away games and home draws".split()


def text(i: int, n: int) -> str:
    return " ".join(WORDS[(i + k) % len(WORDS)] for k in range(n))


def pairs(n: int = 12, negatives: bool = True) -> list[dict]:
    out = []
    for i in range(n):
        pair = {"query": text(i, 2 + i % 5), "document": text(3 * i, 4 + (7 * i) % 40), "doc_id": i}
        if negatives:  # 0 to 2 negatives: a batch's documents are ragged
            pair["negatives"] = [text(i + j, 3 + j * 9) for j in range(i % 3)]
            pair["negative_ids"] = [100 + i + j for j in range(i % 3)]
        out.append(pair)
    return out


def triplets(n: int = 10, k: int = 3) -> list[dict]:
    return [{"anchor": text(i, 3 + i % 9), "positive": text(2 * i, 2 + i % 4), "pos_id": i,
             "negatives": [text(i + j, 1 + (i * j) % 30) for j in range(k)],
             "neg_ids": [50 + i * k + j for j in range(k)]}
            for i in range(n)]


@pytest.fixture()
def encoder(tiny_backbone) -> DualEncoder:
    enc = DualEncoder.from_backbone(tiny_backbone, max_query_length=6, max_document_length=20)
    enc.config.query_prefix, enc.config.document_prefix = "query: ", "passage: "  # prefixes and truncation both
    return enc


def same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], dict) or hasattr(a[key], "keys"):
            same(dict(a[key]), dict(b[key]))
        else:
            assert a[key].dtype == b[key].dtype and torch.equal(a[key], b[key]), key


@pytest.mark.parametrize("negatives", [True, False])
def test_tokenized_pairs_collate_to_the_text_collators_batches(encoder, tmp_path, negatives):
    examples = pairs(negatives=negatives)
    dataset = tokenized_examples(examples, encoder, PAIR_FIELDS, tmp_path)
    assert len(dataset) == len(examples) and dataset["doc_id"] == [p["doc_id"] for p in examples]  # same order
    assert "query" not in dataset.column_names and "query_input_ids" in dataset.column_names
    for batch in ([0, 1, 2, 3], [5, 11, 2], [7], list(range(12))):
        same(PairCollator(encoder)([examples[i] for i in batch]),
             TokenizedPairCollator(encoder)(dataset.__getitems__(batch)))


def test_tokenized_triplets_collate_to_the_text_collators_batches(encoder, tmp_path):
    examples = triplets()
    dataset = tokenized_examples(examples, encoder, TRIPLET_FIELDS, tmp_path)
    for batch in ([0, 1, 2], [9, 4], list(range(10))):
        same(TripletCollator(encoder)([examples[i] for i in batch]),
             TokenizedTripletCollator(encoder)(dataset.__getitems__(batch)))


def test_tokenisation_is_cached_by_content(encoder, tmp_path, monkeypatch):
    examples = pairs()
    first = tokenized_examples(examples, encoder, PAIR_FIELDS, tmp_path)
    (cached,) = {f["filename"] for f in first.cache_files}
    monkeypatch.setattr(data, "_tokenize", lambda *a: lambda batch: pytest.fail("tokenised again"))
    again = tokenized_examples(examples, encoder, PAIR_FIELDS, tmp_path)
    assert {f["filename"] for f in again.cache_files} == {cached} and list(again) == list(first)
    monkeypatch.undo()
    changed = tokenized_examples(examples[:-1], encoder, PAIR_FIELDS, tmp_path)
    encoder.config.max_document_length = 21
    longer = tokenized_examples(examples, encoder, PAIR_FIELDS, tmp_path)
    assert len({cached, *(f["filename"] for d in (changed, longer) for f in d.cache_files)}) == 3


def _train(tiny_backbone, out, dataset, collator_cls, steps: int = 3) -> dict[str, torch.Tensor]:
    AcceleratorState._reset_state(True)
    args = TrainingArguments(output_dir=str(out), model_name_or_path=tiny_backbone, per_device_train_batch_size=4,
                             max_train_steps=steps, learning_rate=1e-3, num_warmup_steps=1, max_document_length=20)
    accelerator = make_accelerator(args)
    encoder = DualEncoder.from_backbone(tiny_backbone, max_document_length=20)
    examples = dataset(encoder) if callable(dataset) else dataset
    loss_fn = InBatchContrastiveLoss(0.05)

    def compute_loss(model, batch):
        return loss_fn(model(batch["query"], "query"), model(batch["document"], "document"), batch["doc_id"])

    train(args, accelerator, encoder, examples, collator_cls(encoder), compute_loss)
    return {k: v.detach().clone() for k, v in encoder.state_dict().items()}


def test_training_through_datasets_gives_the_same_weights_bit_for_bit(tiny_backbone, tmp_path):
    examples = pairs(16)
    direct = _train(tiny_backbone, tmp_path / "direct", examples, PairCollator)
    through = _train(tiny_backbone, tmp_path / "datasets",
                     lambda enc: tokenized_examples(examples, enc, PAIR_FIELDS, tmp_path / "cache"),
                     TokenizedPairCollator)
    start = DualEncoder.from_backbone(tiny_backbone).state_dict()
    assert direct.keys() == through.keys()
    assert all(torch.equal(direct[k], through[k]) for k in direct)
    assert any(not torch.equal(direct[k], start[k]) for k in direct)  # it trained


def test_the_training_scripts_cache_where_every_cache_goes(monkeypatch, tmp_path):
    from retrieval.config import parse_config
    from train.dialogue_retriever import DialogueRetrieverArguments
    from train.dtr import DTRArguments
    from train.state_tracker import StateTrackerArguments

    monkeypatch.setenv("CTBLS_CACHE_DIR", str(tmp_path))
    for cls in (DTRArguments, DialogueRetrieverArguments, StateTrackerArguments):
        args = parse_config(cls, [])
        assert data.tokenized_cache(args.cache_dir) == tmp_path / "tokenized", cls.__name__
        assert data.tokenized_cache(parse_config(cls, ["--cache-dir", ""]).cache_dir) is None


def test_without_a_cache_folder_nothing_is_written(encoder, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    dataset = tokenized_examples(pairs(), encoder, PAIR_FIELDS, None)
    assert dataset.cache_files == [] and not list(tmp_path.iterdir())
    same(PairCollator(encoder)(pairs()[:5]), TokenizedPairCollator(encoder)(dataset.__getitems__(list(range(5)))))
