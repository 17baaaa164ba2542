import json
from pathlib import Path

import pytest

from retrieval.ctbls.table_text import table_text
from retrieval.data.hybridialogue import load_hybridialogue
from retrieval.data.jsonio import DataError
from retrieval.data.ottqa import load_passages, load_questions, load_tables, parse_table
from retrieval.data.ottqa_conversations import BenchmarkReport, build_conversations, table_split

FIXTURES = Path(__file__).parent / "fixtures"

TABLE = {"uid": "T1", "title": "Films", "section_title": "Roles", "section_text": "", "intro": "An actor.",
         "header": [["Year", []], ["Title", []]],
         "data": [[["1997", []], ["Eek", ["/wiki/Eek"]]], [["2003", []], ["Lilo", []]]]}


def write_jsonl(path: Path, objs: list) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objs))
    return path


def test_tables_cells_links_and_text(tmp_path):
    tables = load_tables(write_jsonl(tmp_path / "t.jsonl", [TABLE]))
    t = tables["T1"]
    assert t.header == ["Year", "Title"] and t.n_rows == 2 and t.n_cols == 2
    assert t.cell(0, 1).links == ("/wiki/Eek",) and t.cell(5, 0) is None
    assert table_text(t, "paper") == "Films . Roles . An actor."
    assert table_text(t, "header") == "Films . Roles . Year | Title . An actor."


def test_malformed_line_names_file_and_line(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(TABLE) + "\n{not json\n")
    with pytest.raises(DataError, match=r"t\.jsonl:2"):
        load_tables(path)


def test_empty_table_is_rejected_clearly():
    with pytest.raises(DataError, match="T9.*no rows"):
        parse_table({**TABLE, "uid": "T9", "data": []})


def test_missing_file_is_named(tmp_path):
    with pytest.raises(DataError, match="nope.json: file not found"):
        load_questions(tmp_path / "nope.json")


def test_missing_table_and_outside_cell_are_counted(tmp_path):
    tables = load_tables(write_jsonl(tmp_path / "t.jsonl", [TABLE]))
    qs = [{"question_id": "a", "question": "q1", "table_id": "T1", "answer-text": "Eek",
           "answer-node": [["Eek", [0, 1], None, "table"], ["x", [9, 9], None, "table"]]},
          {"question_id": "b", "question": "q2", "table_id": "GONE", "answer-text": "", "answer-node": []},
          {"question_id": "c", "question": "q3", "table_id": "T1", "answer-text": "Lilo",
           "answer-node": [["Lilo", [1, 1], None, "table"]]}]
    (tmp_path / "q.json").write_text(json.dumps(qs))
    report = BenchmarkReport()
    convs = build_conversations(load_questions(tmp_path / "q.json"), tables, None, report)
    assert len(convs) == 1 and [t.turn_id for t in convs[0].turns] == ["a", "c"]
    assert convs[0].turns[0].targets == [(0, 1)]
    assert report.as_dict() == {"questions_with_missing_table": 1, "answer_cells_outside_table": 1,
                                "turns_without_valid_answer_cell": 0}


def test_split_is_deterministic_and_roughly_70_10_20():
    splits = [table_split(f"table_{i}") for i in range(5000)]
    assert splits == [table_split(f"table_{i}") for i in range(5000)]
    share = {s: splits.count(s) / len(splits) for s in ("train", "val", "test")}
    assert abs(share["train"] - 0.7) < 0.03 and abs(share["val"] - 0.1) < 0.02 and abs(share["test"] - 0.2) < 0.03


def test_passages(tmp_path):
    p = write_jsonl(tmp_path / "p.jsonl", [{"table_id": "T1", "passages": {"/wiki/Eek": "A cartoon."}}])
    assert load_passages(p) == {"/wiki/Eek": "A cartoon."}


def test_hybridialogue_reader():
    data = load_hybridialogue(FIXTURES / "hybridialogue_small.json")
    (conv,) = data.conversations
    assert conv.table_id == "Nonso_Anozie_1" and [t.turn_id for t in conv.turns] == ["t1", "t2"]
    assert conv.turns[1].targets == [(0, 1)] and conv.turns[0].targets == []
    assert data.turn_candidates["t2"] == ["c_cell01", "c_cell02", "c_par"]
    assert data.candidates["c_cell02"].text == "Role is Robert"


def test_real_ottqa_files_load(data_dir):
    questions = load_questions(data_dir / "ottqa" / "questions_dev.json")
    assert len(questions) == 1781 and all(q.answer_cells for q in questions)


def test_duplicate_table_uid_names_both_lines(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", [TABLE, {**TABLE, "uid": "T2"}, {**TABLE, "title": "Later"}])
    with pytest.raises(DataError, match=r"t\.jsonl:3: table uid 'T1' is also the uid of line 1"):
        load_tables(path)
