"""End-to-end tests of train/dtr.py on tiny data and a tiny encoder."""

import json
import shutil
from pathlib import Path

import pytest
import torch
from accelerate.state import AcceleratorState
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
