"""README's results table: written by the evaluations (eval/results.py), rendered from results/ (eval/results_table.py),
and checked against README."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shlex
from datetime import datetime
from pathlib import Path

import pytest

from eval import results_table
from eval.results import Headline, file_digest, read_rows, record, write_results
from retrieval.data.jsonio import DataError

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "results"


@dataclasses.dataclass
class Settings:
    data_file: str
    k: int = 10


def _results_file(folder: Path, name: str, ours: float, data: Path) -> Path:
    rows = [Headline("Table retrieval: a test", "MRR@10", ours, {"BM25": 0.5}, "a paper's 0.8 (another pool)")]
    path = folder / f"{name}.json"
    write_results(str(path), "python -m eval.retrieval", ["--k", "3"], Settings(str(data)), lambda: rows, [data])
    return path


def test_readme_table_is_the_one_the_results_files_render():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert results_table.current(readme, REPO / "README.md") == results_table.render(RESULTS), \
        "README's results table differs from results/*.json: python -m eval.results_table --write README.md"


def test_a_results_file_says_where_its_figures_came_from(tmp_path):
    data = tmp_path / "questions.jsonl"
    data.write_text('{"q": 1}\n')
    saved = json.loads(_results_file(tmp_path, "dtr", 0.75, data).read_text())
    assert saved["command"] == "python -m eval.retrieval --k 3"
    assert saved["settings"] == {"data_file": str(data), "k": 10}
    assert saved["data"] == [{"path": str(data), "bytes": 9, "sha256": hashlib.sha256(b'{"q": 1}\n').hexdigest()}]
    assert saved["commit"] is None or len(saved["commit"]) == 40
    assert datetime.fromisoformat(saved["date"]).tzinfo is not None
    assert read_rows(saved) == [Headline("Table retrieval: a test", "MRR@10", 0.75, {"BM25": 0.5},
                                         "a paper's 0.8 (another pool)")]


def test_a_folder_digest_changes_with_any_file(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.json").write_text("1")
    before = file_digest(tmp_path / "a")
    (tmp_path / "a" / "x.json").write_text("2")
    assert file_digest(tmp_path / "a")["sha256"] != before["sha256"]
    assert before["files"] == 1


def test_check_fails_when_a_figure_changes_and_write_mends_it(tmp_path, capsys):
    folder, data = tmp_path / "results", tmp_path / "d.txt"
    folder.mkdir()
    data.write_text("x")
    _results_file(folder, "dtr", 0.75, data)
    readme = tmp_path / "README.md"
    readme.write_text(f"# A\n\n{results_table.render(folder)}\n\nafter\n")
    assert results_table.main(["--results-dir", str(folder), "--check", str(readme)]) == 0
    assert "| **0.750** | BM25 0.500 | a paper's 0.8 (another pool) |" in readme.read_text()
    _results_file(folder, "dtr", 0.70, data)  # a rerun moved the figure
    assert results_table.main(["--results-dir", str(folder), "--check", str(readme)]) == 1
    assert results_table.main(["--results-dir", str(folder), "--write", str(readme)]) == 0
    assert results_table.main(["--results-dir", str(folder), "--check", str(readme)]) == 0
    text = readme.read_text()
    assert "**0.700**" in text and text.startswith("# A\n") and text.endswith("\nafter\n")


def test_rows_follow_the_table_order_then_names(tmp_path):
    data = tmp_path / "d.txt"
    data.write_text("x")
    for name in ("zz_extra", "temporal", "dtr"):
        _results_file(tmp_path, name, 0.5, data)
    assert [p.stem for p in results_table.results_files(tmp_path)] == ["dtr", "temporal", "zz_extra"]


def test_a_run_without_a_headline_row_writes_no_results_file(tmp_path):
    asked = []
    write_results(None, "python -m eval.x", [], Settings("d"), lambda: asked.append(1) or [], [])
    assert asked == []  # no --results: the rows are not even computed
    with pytest.raises(DataError, match="no headline row"):
        write_results(str(tmp_path / "x.json"), "python -m eval.x", [], Settings("d"), lambda: [], [])
    assert not (tmp_path / "x.json").exists()
    with pytest.raises(DataError, match="no such folder"):
        results_table.render(tmp_path / "missing")


def test_a_broken_results_file_is_named(tmp_path):
    (tmp_path / "dtr.json").write_text('{"rows": [{"task": "t"}]}')
    with pytest.raises(DataError, match="dtr.json: not a results file"):
        results_table.render(tmp_path)
    readme = tmp_path / "README.md"
    readme.write_text("no table here\n")
    with pytest.raises(DataError, match="no results table"):
        results_table.current(readme.read_text(), readme)


@pytest.mark.parametrize("path", sorted(RESULTS.glob("*.json")), ids=lambda p: p.name)
def test_every_committed_results_file_can_be_rerun(path):
    """Each file names a command of ours, whose files (configs, chats) are in the repository, and its data."""
    saved = json.loads(path.read_text())
    argv = shlex.split(saved["command"])
    assert argv[:2] == ["python", "-m"] and argv[2].startswith("eval."), saved["command"]
    for arg in argv[3:]:
        if arg.startswith(("configs/", "eval/")):
            assert (REPO / arg).exists(), f"{path.name}: {arg} is not in the repository"
    assert saved["commit"] and saved["data"] and all(d["sha256"] for d in saved["data"])
    assert read_rows(saved), f"{path.name}: no rows"


def test_record_takes_the_command_line_when_none_is_given(monkeypatch, tmp_path):
    monkeypatch.setattr("sys.argv", ["x", "--k", "2"])
    saved = record("python -m eval.x", None, Settings("d"), [], [])
    assert saved["command"] == "python -m eval.x --k 2" and saved["rows"] == [] and saved["data"] == []
