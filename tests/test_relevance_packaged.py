"""The packaged relevance model, the memory commands' default (``--relevance auto``): it loads, it is for the
packaged encoder, a memory of another encoder is answered by the hand-tuned ranking (and told), and the slow test
trains it again from the open data and finds the same weights."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest
from test_train_dialogue_retriever import sample

from models.dual_encoder import load_encoder
from retrieval.data.jsonio import DataError
from retrieval.data.paths import LOCOMO_FILE, ZYPHRA_DIR
from retrieval.memory import temporal_memory
from retrieval.memory.relevance.features import FEATURES
from retrieval.memory.relevance.model import RelevanceModel
from retrieval.memory.relevance.rerank import (
    AUTO,
    NO_MODEL,
    PACKAGED,
    PACKAGED_MODEL,
    RELEVANCE_RULE,
    Reranker,
    second_stage,
    use_relevance,
)
from retrieval.memory.temporal_memory import TemporalMemory
from retrieval.memory.when_answer import EVIDENCE_RULE
from train import memory_relevance

PACKAGED_ENCODER = RelevanceModel.load(PACKAGED_MODEL).training["encoder"]


def test_the_packaged_model_loads_with_this_versions_features_and_its_card():
    model = RelevanceModel.load(PACKAGED_MODEL)
    assert model.features == FEATURES
    assert PACKAGED_ENCODER.startswith("packaged:minilm|mean|")
    assert model.training["questions"] > 1000 and len(model.training["conversations"]) >= 10
    card = (PACKAGED_MODEL / "README.md").read_text()
    assert "--relevance packaged" in card and PACKAGED_ENCODER in card


def test_the_encoder_decides_whether_a_model_fits():
    model = RelevanceModel.load(PACKAGED_MODEL)
    name, pooling, digest = PACKAGED_ENCODER.split("|")
    assert model.fits_encoder(PACKAGED_ENCODER)
    assert model.fits_encoder(f"{name}|{pooling}|0123456789abcdef|bfloat16-weights")  # its bf16 cast
    assert not model.fits_encoder(f"{name}|{pooling}|0123456789abcdef")  # other weights under the same name
    assert not model.fits_encoder(f"runs/encoder|{pooling}|{digest}")
    assert not model.fits_encoder(f"{name}|cls|{digest}")


def test_auto_is_the_packaged_model_for_its_encoder_and_the_hand_tuned_ranking_otherwise(caplog):
    second, rule = second_stage(AUTO, EVIDENCE_RULE, PACKAGED_ENCODER)
    assert isinstance(second, Reranker) and rule == RELEVANCE_RULE
    with caplog.at_level(logging.WARNING):
        second, rule = second_stage(AUTO, EVIDENCE_RULE, "tiny|mean|0123456789abcdef")
    assert second is None and rule == EVIDENCE_RULE
    assert "hand-tuned ranking answers" in caplog.text and "tiny|mean|0123456789abcdef" in caplog.text
    assert second_stage(NO_MODEL, EVIDENCE_RULE, PACKAGED_ENCODER) == (None, EVIDENCE_RULE)
    assert second_stage(None, EVIDENCE_RULE) == (None, EVIDENCE_RULE)


def test_packaged_or_a_folder_is_refused_for_another_encoder(tmp_path):
    with pytest.raises(DataError, match="packaged relevance model was trained on the scores of encoder"):
        second_stage(PACKAGED, EVIDENCE_RULE, "tiny|mean|0123456789abcdef")
    RelevanceModel.load(PACKAGED_MODEL).save(tmp_path / "mine")
    with pytest.raises(DataError, match=f"relevance model {tmp_path / 'mine'} was trained"):
        second_stage(str(tmp_path / "mine"), EVIDENCE_RULE, "tiny|mean|0123456789abcdef")
    with pytest.raises(DataError, match="no relevance model here"):
        second_stage(str(tmp_path / "none_here"), EVIDENCE_RULE, PACKAGED_ENCODER)


@pytest.fixture(scope="module")
def tiny_log(tmp_path_factory):
    path = tmp_path_factory.mktemp("log") / "locomo.json"
    path.write_text(json.dumps([sample("conv-1", ("Ann", "Bob"))]))
    return path


def test_a_memory_of_another_encoder_is_asked_with_the_hand_tuned_ranking(tiny_backbone, tiny_log, capsys):
    encoder = load_encoder(tiny_backbone)
    memory = use_relevance(TemporalMemory.from_file(tiny_log, encoder=encoder), AUTO)
    assert memory.relevance is None and memory.evidence_rule == EVIDENCE_RULE
    with pytest.raises(DataError, match="not this memory's"):
        use_relevance(memory, PACKAGED)
    # the command line: auto answers (the hand-tuned ranking), packaged is refused with the reason
    assert temporal_memory.main(["ask", "--log", str(tiny_log), "--encoder", tiny_backbone, "--cache-dir", "",
                                 "What did Ann say?"]) == 0
    assert temporal_memory.main(["ask", "--log", str(tiny_log), "--encoder", tiny_backbone, "--cache-dir", "",
                                 "--relevance", PACKAGED, "What did Ann say?"]) == 2
    assert "packaged relevance model was trained on the scores of encoder" in capsys.readouterr().err


@pytest.mark.slow
def test_training_again_gives_the_packaged_weights(tmp_path):
    """The packaged folder is what `python -m train.memory_relevance --config configs/memory_relevance.yaml
    --package-dir retrieval/memory/relevance/packaged` writes today (minutes: the open data's rankings)."""
    if not (LOCOMO_FILE.is_file() and ZYPHRA_DIR.is_dir()):
        pytest.skip("the open data (../shared/data) is not beside the repository")
    assert load_encoder(None).identity == PACKAGED_ENCODER
    assert memory_relevance.main(["--config", "configs/memory_relevance.yaml", "--output-dir", str(tmp_path / "m"),
                                  "--package-dir", str(tmp_path / "p")]) == 0
    fresh, shipped = RelevanceModel.load(tmp_path / "p"), RelevanceModel.load(PACKAGED_MODEL)
    # the same weights up to the solver's tolerance (lbfgs stops within 1e-4 of its gradient; the card prints three
    # decimals): the float sums of a fresh extraction move the 300 products' weights by about 1e-5
    np.testing.assert_allclose(fresh.coef, shipped.coef, atol=1e-4)
    losses = [t.pop("inner_log_loss_by_form") for t in (fresh.training, shipped.training)]
    assert losses[0].keys() == losses[1].keys()
    assert all(abs(losses[0][k] - losses[1][k]) < 1e-3 for k in losses[0])  # a weak L2 converges less tightly
    assert (fresh.cut, fresh.threshold, fresh.training) == (shipped.cut, shipped.threshold, shipped.training)
