"""End-to-end tests of train/dtr.py on tiny data and a tiny encoder."""

import json
import shutil
from pathlib import Path

import pytest
import torch
from accelerate.state import AcceleratorState
from card_checks import check_card, epoch_records
from ctbls_fixtures import split_uids
from safetensors.torch import load_file

from retrieval.ctbls.table_retriever import DenseTableRetriever, TableTextSettings
from train import dtr


@pytest.fixture(scope="module")
def tiny_ottqa(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("data")
    (root / "ottqa").mkdir()
    tables, questions = [], []
    for split, n in (("train", 8), ("val", 2)):
        for k, uid in enumerate(split_uids(n, split)):
            tables.append({"uid": uid, "title": f"{uid} season {k}", "section_title": "Results", "intro": "",
                           "section_text": "", "header": [["Team", []], ["Points", []]],
                           "data": [[[f"team{k}", []], [str(k), []]]]})
            questions.append({"question_id": uid, "question": f"how many points did team{k} get in {uid}",
                              "table_id": uid, "answer-text": str(k),
                              "answer-node": [[str(k), [0, 1], None, "table"]]})
    (root / "ottqa" / "tables.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tables))
    (root / "ottqa" / "questions_dev.json").write_text(json.dumps(questions))
    return root


def run(tiny_backbone, data, out, *extra):
    AcceleratorState._reset_state(True)
    return dtr.main(["--data-dir", str(data), "--output-dir", str(out), "--model-name-or-path", tiny_backbone,
                     "--per-device-train-batch-size", "2", "--max-train-steps", "6", "--checkpointing-steps", "2",
                     "--learning-rate", "1e-3", "--num-warmup-steps", "1", "--val-distractors", "3",
                     "--max-document-length", "32", "--cache-dir", str(Path(out).parent / "cache"), *extra])


def test_training_writes_results_and_loadable_checkpoint(tiny_backbone, tiny_ottqa, tmp_path):
    results = run(tiny_backbone, tiny_ottqa, tmp_path / "run")
    out = tmp_path / "run"
    written = json.loads((out / "all_results.json").read_text())
    assert written["steps"] == 6 and len(written["epochs"]) == 2 and "mrr@10" in written["epochs"][0]
    assert results["steps"] == 6
    assert (out / "config.yaml").is_file() and (out / "model.safetensors").is_file()
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == ["step_2", "step_4", "step_6"]
    retriever = DenseTableRetriever.from_pretrained(out)
    assert retriever.settings.representation == "header"
    first = load_file(out / "last" / "model.safetensors")
    assert any(not torch.equal(v, load_file(Path(tiny_backbone) / "model.safetensors")[k])
               for k, v in first.items() if k in load_file(Path(tiny_backbone) / "model.safetensors"))


def test_every_model_folder_appears_with_its_table_text(tiny_backbone, tiny_ottqa, tmp_path):
    out = tmp_path / "run"
    run(tiny_backbone, tiny_ottqa, out, "--table_representation", "header_rows", "--max_intro_words", "5")
    for folder in (out, out / "last"):  # the kept model and the last one, each with the run's settings
        assert DenseTableRetriever.from_pretrained(folder).settings == TableTextSettings("header_rows", 5)
    assert all((p / "history.json").is_file() for p in (out / "checkpoints").iterdir())
    assert not list(out.rglob(".*"))  # no staging folder or partial file left behind


def test_a_run_stopped_while_saving_its_model_leaves_nothing_to_load(tiny_backbone, tiny_ottqa, tmp_path,
                                                                     monkeypatch):
    def stop(settings, folder):  # the weights are written; the run stops before the table text
        raise KeyboardInterrupt("stopped while saving the best model")

    monkeypatch.setattr(TableTextSettings, "save", stop)
    out = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        run(tiny_backbone, tiny_ottqa, out)
    assert (out / "checkpoints" / "step_2").is_dir()  # it stopped at the first validation, after a checkpoint
    assert not [p.name for p in out.iterdir() if p.name not in ("checkpoints", "config.yaml")]
    with pytest.raises(FileNotFoundError, match="run: no table_retriever.json"):
        DenseTableRetriever.from_pretrained(out)  # never the weights with the default table text


def test_resumed_run_ends_with_the_same_weights(tiny_backbone, tiny_ottqa, tmp_path):
    run(tiny_backbone, tiny_ottqa, tmp_path / "full")
    run(tiny_backbone, tiny_ottqa, tmp_path / "stopped")
    # Simulate a run stopped after step 2: only the step-2 state survives.
    for name in ("step_4", "step_6"):
        shutil.rmtree(tmp_path / "stopped" / "checkpoints" / name)
    shutil.rmtree(tmp_path / "stopped" / "last")
    results = run(tiny_backbone, tiny_ottqa, tmp_path / "stopped", "--resume-from-checkpoint", "latest")
    assert results["steps"] == 6
    a = load_file(tmp_path / "full" / "last" / "model.safetensors")
    b = load_file(tmp_path / "stopped" / "last" / "model.safetensors")
    assert a.keys() == b.keys()
    for k in a:
        assert torch.allclose(a[k], b[k], atol=1e-6), k


def test_config_overrides_are_typed(tmp_path):
    from retrieval.config import parse_config

    cfg = tmp_path / "c.yaml"
    cfg.write_text("num_train_epochs: 3\nlearning_rate: 1.0e-4\n")
    args = parse_config(dtr.DTRArguments, ["--config", str(cfg), "--num-train-epochs", "1",
                                           "--max-train-steps", "none", "--shared-encoder", "false"])
    assert args.num_train_epochs == 1 and args.learning_rate == 1e-4
    assert args.max_train_steps is None and args.shared_encoder is False
    with pytest.raises(SystemExit):
        parse_config(dtr.DTRArguments, ["--num-train-epochs", "many"])


def test_hard_negatives_are_mined_and_collated(tiny_backbone, tiny_ottqa, tmp_path):
    from models.dual_encoder import DualEncoder
    from retrieval.ctbls.table_text import table_text
    from retrieval.data.ottqa import load_tables
    from train.data import PairCollator

    args = dtr.DTRArguments(data_dir=str(tiny_ottqa), hard_negatives=2)
    tables = load_tables(args.data_file("tables"))
    pairs = dtr.build_pairs(args, tables, dtr.TableTextSettings())
    uids = sorted(tables)
    for p in pairs:
        assert len(p["negatives"]) == 2 and p["doc_id"] not in p["negative_ids"]
        assert p["negatives"][0] == table_text(tables[uids[p["negative_ids"][0]]])
    batch = PairCollator(DualEncoder.from_backbone(tiny_backbone))(pairs[:3])
    assert batch["query"]["input_ids"].shape[0] == 3 and batch["document"]["input_ids"].shape[0] == 9
    assert batch["doc_id"][:3].tolist() == [p["doc_id"] for p in pairs[:3]]
    results = run(tiny_backbone, tiny_ottqa, tmp_path / "hn", "--hard-negatives", "1", "--max-train-steps", "2")
    assert results["steps"] == 2


@pytest.mark.parametrize("shared", [True, False])
def test_every_model_folder_has_a_card_whose_snippets_run_as_written(tiny_backbone, tiny_ottqa, tmp_path,
                                                                     monkeypatch, shared):
    monkeypatch.chdir(tmp_path)  # a relative --output-dir, as in the README's commands
    run(tiny_backbone, tiny_ottqa, "runs/dtr", "--shared-encoder", str(shared).lower())
    out = tmp_path / "runs" / "dtr"
    best, last = epoch_records(out)
    for folder, record in ((out, best), (out / "last", last)):
        meta = check_card(folder, tmp_path, record, ["OTT-QA"], shared)
        assert "base_model" not in meta  # a local backbone folder has no hub id
    card = (out / "README.md").read_text()
    assert 'SentenceTransformer("runs/dtr' in card and "representation `header`" in card
    assert "all_results.json" in card and "the best validation mrr@10" in card
    assert not (out / "checkpoints" / "step_2" / "README.md").exists()  # resumable states carry none


def test_each_step_loss_is_logged_and_drawn_and_survives_a_resume(tiny_backbone, tiny_ottqa, tmp_path):
    full = run(tiny_backbone, tiny_ottqa, tmp_path / "full")
    assert [s for s, _ in full["train_loss"]] == [1, 2, 3, 4, 5, 6]
    assert full["epochs"][-1]["loss"] == full["train_loss"][-1][1]
    png = (tmp_path / "full" / "training_curves.png").read_bytes()
    assert png.startswith(b"\x89PNG")
    shutil.rmtree(tmp_path / "full" / "checkpoints" / "step_6")  # stopped after step 4
    resumed = run(tiny_backbone, tiny_ottqa, tmp_path / "full", "--resume-from-checkpoint", "latest")
    assert [s for s, _ in resumed["train_loss"]] == [1, 2, 3, 4, 5, 6]
    assert [v for _, v in resumed["train_loss"]] == pytest.approx([v for _, v in full["train_loss"]], abs=1e-6)
