"""No evaluation over nothing: questions that name no table of the tables file, a split without tables or
questions, a ``--passages`` file that is not there and a temporal question folder lacking some kinds end
with one line naming the input (or, for the temporal kinds, score what is there)."""

from __future__ import annotations

import json
import shutil
import sys

import pytest
from ctbls_fixtures import split_uids, write_checkpoints, write_tiny_ottqa
from reliability_helpers import one_line_error

from eval import response, retrieval, state_tracking, temporal
from retrieval.ctbls import chat
from retrieval.data.jsonio import DataError
from retrieval.data.ottqa import load_questions
from retrieval.data.ottqa_conversations import require_conversations


@pytest.fixture
def orphans(tmp_path):
    """Tiny OTT-QA files whose questions all name tables (of split test) that the tables file does not hold."""
    data = write_tiny_ottqa(tmp_path / "ottqa")
    rows = [json.loads(line) for line in (data / "tables.jsonl").read_text().splitlines()]
    for row, uid in zip(rows, split_uids(2 * len(rows))[len(rows):]):
        row["uid"] = uid  # other tables of the same split
    (data / "tables.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return data


def files(data, **extra) -> list[str]:
    argv = ["--tables", str(data / "tables.jsonl"), "--questions", str(data / "questions_dev.json"), "--cache-dir", ""]
    return argv + [x for k, v in extra.items() for x in (f"--{k}", v)]


@pytest.mark.parametrize("command", [retrieval, state_tracking])
def test_no_question_names_a_table(orphans, tmp_path, capsys, command):
    out = tmp_path / "results.json"
    err = one_line_error(capsys, command.main, [*files(orphans), "--output", str(out)])
    assert err == (f"error: {orphans / 'questions_dev.json'}: 0 of 6 questions name a table in "
                   f"{orphans / 'tables.jsonl'} (split test)")
    assert not out.exists()  # no report of zeros over nothing


def test_response_eval_and_chat_refuse_it_too(orphans, capsys):
    err = one_line_error(capsys, response.main, [*files(orphans), "--dtr", "d", "--tracker", "t", "--passages", ""])
    assert "0 of 6 questions name a table in" in err
    err = one_line_error(capsys, chat.main, [*files(orphans), "--dtr", "d", "--tracker", "t", "--llm", "none",
                                             "--passages", "", "--split", "val", "--once", "hi"])
    assert err == f"error: {orphans / 'tables.jsonl'}: none of its 3 tables is in split val"


def test_the_split_and_the_file_are_named(tmp_path):
    data = write_tiny_ottqa(tmp_path / "ottqa")
    questions = load_questions(data / "questions_dev.json")
    with pytest.raises(DataError, match=r"questions_dev.json: none of its 6 questions is about a table of split val"):
        require_conversations([], questions, "val", data / "questions_dev.json", data / "tables.jsonl")
    with pytest.raises(DataError, match=r"questions_dev.json: 0 of 6 questions name a table in \S+tables.jsonl$"):
        require_conversations([], questions, None, data / "questions_dev.json", data / "tables.jsonl")


def test_turns_without_an_answer_cell_are_not_scored_as_zero(tmp_path, capsys):
    data = write_tiny_ottqa(tmp_path / "ottqa")
    questions = json.loads((data / "questions_dev.json").read_text())
    for q in questions:
        q["answer-node"] = [[q["answer-text"], [99, 0], None, "table"]]  # outside every table
    (data / "questions_dev.json").write_text(json.dumps(questions))
    err = one_line_error(capsys, state_tracking.main, files(data))
    assert err.endswith("questions_dev.json: none of the 6 questions about tables in "
                        f"{data / 'tables.jsonl'} (split test) has an answer cell inside its table")


@pytest.mark.parametrize("command", [state_tracking, response])
def test_a_passages_file_that_is_not_there_is_an_error(tmp_path, capsys, command):
    data = write_tiny_ottqa(tmp_path / "ottqa")
    missing = tmp_path / "passages.jsonl"
    checkpoints = ["--dtr", "d", "--tracker", "t"] if command is response else []
    err = one_line_error(capsys, command.main, [*files(data), *checkpoints, "--passages", str(missing)])
    assert err == f"error: {missing}: file not found"


def test_chat_refuses_a_passages_file_that_is_not_there(tiny_backbone, tmp_path, capsys):
    data = write_tiny_ottqa(tmp_path / "ottqa")
    dtr, tracker = write_checkpoints(tiny_backbone, tmp_path / "ckpt")
    missing = tmp_path / "passages.jsonl"
    err = one_line_error(capsys, chat.main, [*files(data), "--dtr", str(dtr), "--tracker", str(tracker),
                                             "--llm", "none", "--passages", str(missing), "--once", "hi"])
    assert err == f"error: {missing}: file not found"


def test_no_passages_is_said_with_an_empty_value(tiny_backbone, tmp_path):
    data = write_tiny_ottqa(tmp_path / "ottqa")
    results = state_tracking.main([*files(data), "--baseline", tiny_backbone, "--passages", ""])
    assert results["_data"]["turns_scored"] == 6 and results["_data"]["cells"]["links_without_passage"] == 9


def test_chat_ends_bad_input_with_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["ctbls-chat", "--dtr", str(tmp_path / "nothing"), "--tracker", "t",
                                      "--llm", "none", "--tables", str(write_tiny_ottqa(tmp_path) / "tables.jsonl"),
                                      "--passages", ""])
    with pytest.raises(SystemExit) as stop:
        chat.cli()
    assert stop.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == (f"error: {tmp_path / 'nothing'}: no such folder (a Dense Table Retriever checkpoint folder, "
                       "written by train/dtr.py or DenseTableRetriever.save_pretrained)")
    assert "Traceback" not in "\n".join(err)


def test_chat_history_file_errors_name_the_file(tmp_path):
    bad = tmp_path / "history.json"
    bad.write_text('{"query": "hi"}')
    with pytest.raises(DataError, match=r"history.json: expected a JSON list of turns"):
        chat.read_history(bad)
    bad.write_text("[1, 2")
    with pytest.raises(DataError, match=r"history.json: invalid JSON at line 1"):
        chat.read_history(bad)


def test_eval_temporal_scores_the_kinds_it_has(tmp_path, tiny_backbone, capsys):
    from tests.test_eval_temporal import zyphra_folder

    folder = zyphra_folder(tmp_path / "data")
    shutil.rmtree(folder / "TestData" / "content_time_qs")  # a user's own file: time questions only
    shutil.rmtree(folder / "TestData" / "ambiguous_time_qs")
    out = tmp_path / "report.json"
    code = temporal.main(["--zyphra-dir", str(folder), "--encoder", tiny_backbone, "--cache-dir", "",
                          "--semantic-ks", "1", "--output", str(out)])
    printed = capsys.readouterr().out
    assert code == 0 and "== time questions" in printed and "== time+content" not in printed
    assert "(no time+content, no ambiguous questions in this run: those sections are left out)" in printed
    report = json.loads(out.read_text())
    assert report["n_questions"] == 3 and report["results"]["rule"]["time"]["dates"]["recall"] == 100.0
    assert all(set(kinds) == {"time"} for kinds in report["results"].values())
