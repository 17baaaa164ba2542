"""The benchmarks as Hugging Face datasets: rows and features, the three export formats read back, and the command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

datasets = pytest.importorskip("datasets")

from ctbls_fixtures import split_uids  # noqa: E402
from datasets import load_dataset, load_from_disk  # noqa: E402
from sqa_fixtures import sqa_folder  # noqa: E402

from retrieval.config import parse_config  # noqa: E402
from retrieval.data import export, hf_datasets  # noqa: E402
from retrieval.data.hf_datasets import BENCHMARKS, build, features, schema_table, write  # noqa: E402
from retrieval.data.jsonio import DataError  # noqa: E402
from tests.test_eval_temporal import zyphra_folder  # noqa: E402
from tests.test_train_dialogue_retriever import sample  # noqa: E402

AVAILABLE = [name for name, b in BENCHMARKS.items() if b.rows is not None]


@pytest.fixture(scope="module")
def tiny_root(tmp_path_factory) -> Path:
    """A data root with every benchmark's files: two OTT-QA tables (train, test), a Zyphra log, two LoCoMo samples,
    three SQA tables (train, dev, validation)."""
    root = tmp_path_factory.mktemp("root")
    (root / "ottqa").mkdir()
    (train_uid,), (test_uid,) = split_uids(1, "train"), split_uids(1, "test")
    tables = [{"uid": uid, "title": f"Title {uid}", "section_title": "Results", "section_text": "", "intro": "",
               "header": [["Team", []], ["Points", []]], "split": "dev",
               "data": [[["Reds", ["/wiki/Reds"]], ["3", []]], [["Blues", []], ["1", []]]]}
              for uid in (train_uid, test_uid)]
    questions = [{"question_id": f"{uid}-{i}", "question": f"question {i} on {uid}", "table_id": uid,
                  "answer-text": "3", "answer-node": [["3", [0, 1], None, "table"], ["x", [9, 9], None, "table"]]}
                 for uid in (train_uid, test_uid) for i in range(2)]
    questions.append({"question_id": "orphan", "question": "no table", "table_id": "missing", "answer-text": ""})
    (root / "ottqa" / "tables.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tables))
    (root / "ottqa" / "questions_dev.json").write_text(json.dumps(questions))
    zyphra_folder(root / "zyphra_temporal")
    samples = [sample("conv-a", ("Ann", "Bob")), sample("conv-b", ("Cy", "Di"))]
    for qa in (qa for s in samples for qa in s["qa"] if qa["category"] == 5):
        qa["adversarial_answer"] = "pottery"
    (root / "locomo").mkdir()
    (root / "locomo" / "locomo_open.json").write_text(json.dumps(samples))
    sqa_folder(root / "sqa")
    return root


def read_back(folder: Path, name: str, tmp_path: Path) -> dict[str, datasets.Dataset]:
    cache = str(tmp_path / "hf_cache")
    return {
        "disk": load_from_disk(str(folder / name)),
        "parquet": load_dataset("parquet", data_files=str(folder / f"{name}.parquet"), split="train", cache_dir=cache),
        "json": load_dataset("json", data_files=str(folder / f"{name}.jsonl"), split="train", cache_dir=cache),
        "json+features": load_dataset("json", data_files=str(folder / f"{name}.jsonl"), split="train",
                                      cache_dir=cache, features=features(name)),
    }


def check_round_trip(dataset, name: str, folder: Path, tmp_path: Path, inferred_json_features: bool = True) -> None:
    write(dataset, folder, name)
    rows = list(dataset)
    for fmt, back in read_back(folder, name, tmp_path).items():
        assert list(back) == rows, (name, fmt)
        if fmt != "json" or inferred_json_features:
            assert back.features == features(name), (name, fmt)


def test_tiny_rows_and_features(tiny_root):
    turns = build("ottqa-conversations", tiny_root, progress=False)
    assert turns.features == features("ottqa-conversations") and turns.num_rows == 4  # the orphan is dropped
    first, second = turns[0], turns[1]
    assert first["position"] == 0 and first["history"] == [] and first["split"] == "train"
    assert first["answer_cells"] == [{"row": 0, "column": 1}]  # the cell outside the table is dropped
    assert second["history"] == [{"question": first["question"], "answer": "3"}]
    assert {r["split"] for r in build("ottqa-conversations", tiny_root, "test", progress=False)} == {"test"}

    tables = build("ottqa-tables", tiny_root, progress=False)
    assert tables[0]["rows"] == [["Reds", "3"], ["Blues", "1"]] and tables[0]["links"][0] == [["/wiki/Reds"], []]
    assert tables[0]["header"] == ["Team", "Points"] and tables[0]["ottqa_split"] == "dev"

    temporal = build("zyphra-temporal", tiny_root, progress=False)
    (ambiguous,) = [r for r in temporal if r["kind"] == "ambiguous"]
    assert ambiguous["history"][0] == {"speaker": "Ann", "text": "I see in my calendar that we talked on May 12th."}
    assert ambiguous["relevant"] == [2, 3] and ambiguous["question"].endswith("discussed?")

    qa = build("locomo-qa", tiny_root, progress=False)
    assert qa.num_rows == 2 * 9 and set(qa["category"]) == {1, 2, 3, 4, 5}  # the unknown evidence id is dropped
    adversarial = [r for r in qa if r["category"] == 5][0]
    assert adversarial["answer"] is None and adversarial["adversarial_answer"] == "pottery"
    assert adversarial["evidence_turn_ids"] == ["D1:2"]
    assert qa[0]["answer"] == "pottery" and qa[0]["evidence"] == [0]

    logs = build("logs", tiny_root, progress=False)
    assert logs.num_rows == 4 + 2 * 8 and logs[0]["timestamp"] == "2023-05-05T09:00:00.000000+00:00"
    assert logs[0]["source"] == "zyphra" and logs[4]["log"] == "conv-a" and logs[4]["turn_id"] == "D1:1"

    sqa = build("sqa", tiny_root, progress=False)
    assert sqa.num_rows == 3 * 4 and sqa[0]["conversation_id"] == "nt-0_0" and sqa[0]["split"] == "train"
    assert sqa[1]["history"] == [{"question": "what are the venues?", "answer": 'The Dome, "Garden" Arena, Stadium'}]
    assert sqa[1]["answer_cells"] == [{"row": 0, "column": 2}, {"row": 2, "column": 2}]
    assert sqa[2]["answer_text"] == ["1990", "x"] and sqa[2]["answer_cells"] == [{"row": 0, "column": 0}]
    assert {r["split"] for r in build("sqa", tiny_root, "validation", progress=False)} == {"validation"}


@pytest.mark.parametrize("name", AVAILABLE)
def test_tiny_exports_read_back_as_the_same_rows(name, tiny_root, tmp_path):
    check_round_trip(build(name, tiny_root, progress=False), name, tmp_path / "out", tmp_path)


@pytest.mark.parametrize("name", AVAILABLE)
def test_real_slices_read_back_as_the_same_rows(name, data_dir, tmp_path):
    dataset = build(name, data_dir, max_rows=40, progress=False)
    assert dataset.num_rows == 40 and dataset.features == features(name)
    # a slice's first rows may hold only empty lists in a column (no history yet), which JSON alone cannot type
    check_round_trip(dataset, name, tmp_path / "out", tmp_path, inferred_json_features=False)


def test_every_column_is_documented_and_the_schema_table_lists_them():
    for name in AVAILABLE:
        spec = BENCHMARKS[name]
        assert spec.description and spec.license and all(doc for _, doc in spec.columns.values()), name
        table = schema_table(name)
        assert all(f"| `{column}` |" in table for column in spec.columns)
    assert "`list<{row: int64, column: int64}>`" in schema_table("ottqa-conversations")


def test_unavailable_and_wrong_splits_are_one_line_errors(tiny_root, monkeypatch):
    monkeypatch.setitem(BENCHMARKS, "later", hf_datasets.Benchmark("later", "", unavailable="no reader yet"))
    with pytest.raises(DataError, match="later: no reader yet"):
        build("later", tiny_root)
    with pytest.raises(DataError, match="sqa: no split 'test'; its splits are train, dev, validation"):
        build("sqa", tiny_root, "test")
    with pytest.raises(DataError, match="logs: no split 'train'; it has no splits"):
        build("logs", tiny_root, "train")
    with pytest.raises(DataError, match="its splits are train, val, test"):
        build("ottqa-tables", tiny_root, "dev")
    with pytest.raises(DataError, match="unknown dataset 'nope'"):
        build("nope", tiny_root)


def test_a_failed_export_leaves_the_earlier_files_and_no_staging(tiny_root, tmp_path, monkeypatch):
    out = tmp_path / "out"
    write(build("logs", tiny_root, progress=False), out, "logs")
    before = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    real = hf_datasets._write_format

    def fail_at_parquet(dataset, path, fmt):
        if fmt == "parquet":
            raise OSError("disk full")
        real(dataset, path, fmt)

    monkeypatch.setattr(hf_datasets, "_write_format", fail_at_parquet)
    with pytest.raises(OSError, match="disk full"):
        write(build("logs", tiny_root, max_rows=3, progress=False), out, "logs")
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == before  # nothing half-replaced, no staging
    assert load_from_disk(str(out / "logs")).num_rows == 20


# ---- the command -------------------------------------------------------------------------------------------
def test_export_command_writes_every_format_and_its_settings(tiny_root, tmp_path, capsys):
    out = tmp_path / "exports"
    result = export.main(["--dataset", "ottqa-conversations", "--output-dir", str(out), "--data-dir", str(tiny_root),
                          "--split", "test"])
    assert result["rows"] == 2
    assert sorted(p.name for p in out.iterdir()) == ["ottqa-conversations", "ottqa-conversations.config.yaml",
                                                     "ottqa-conversations.jsonl", "ottqa-conversations.parquet"]
    assert "ottqa-conversations: 2 rows" in capsys.readouterr().out
    config = out / "ottqa-conversations.config.yaml"
    assert yaml.safe_load(config.read_text())["split"] == "test"
    assert parse_config(export.ExportArguments, ["--config", str(config)]).split == "test"
    export.main(["--dataset", "logs", "--output-dir", str(out), "--data-dir", str(tiny_root), "--formats", "parquet"])
    assert (out / "logs.parquet").is_file() and not (out / "logs").exists()


@pytest.mark.parametrize("argv, message", [
    (["--dataset", "nope"], "argument --dataset: 'nope' is not one of"),
    (["--dataset", "sqa", "--split", "test"], "error: sqa: no split 'test'; its splits are train, dev, validation"),
    (["--dataset", "logs", "--split", "test"], "error: logs: no split 'test'; it has no splits"),
    (["--dataset", "logs", "--formats", "csv"], "argument --formats: 'csv' is not one of"),
])
def test_export_command_usage_errors_are_one_line(argv, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        export.main([*argv, "--output-dir", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and message in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_export_command_missing_data_is_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        export.run_cli(lambda: export.main(["--dataset", "zyphra-temporal", "--output-dir", str(tmp_path / "out"),
                                            "--data-dir", str(tmp_path / "nowhere")]))
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1
    assert err.startswith("error: ") and "nowhere/zyphra_temporal: not found" in err
    assert not (tmp_path / "out").exists()
