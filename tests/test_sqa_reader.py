"""SQA's reader: sequences as conversations, literals parsed safely, our table split, errors naming file and line."""

from __future__ import annotations

from collections import Counter

import pytest
from sqa_fixtures import HEADER, sqa_folder, table_names

from retrieval.data.jsonio import DataError
from retrieval.data.sqa import SPLITS, load_sqa, read_table, table_split


def test_sequences_are_conversations_ordered_by_position(tmp_path):
    data = load_sqa(sqa_folder(tmp_path / "sqa"))
    assert len(data.conversations) == 6 and len(data.tables) == 3
    first = data.conversations[0]
    assert first.conv_id == "nt-0_0" and [t.turn_id for t in first.turns] == ["nt-0_0_0", "nt-0_0_1", "nt-0_0_2"]
    assert [t.query for t in first.turns][:2] == ["what are the venues?", "which of those were in atlanta?"]
    assert first.turns[0].targets == [(0, 2), (1, 2), (2, 2)] and first.turns[1].targets == [(0, 2), (2, 2)]
    assert data.answer_texts["nt-0_0_0"] == ["The Dome", '"Garden" Arena', "Stadium"]
    assert first.turns[1].answer == "The Dome, Stadium"
    table = data.tables[first.table_id]
    assert table.title == "Concerts 0" and table.header == ["Year", "City", "Venue"]
    assert table.cell(1, 2).text == '"Garden" Arena'  # WikiTableQuestions' backslash-escaped quote


def test_cells_outside_the_table_are_dropped_and_counted(tmp_path):
    data = load_sqa(sqa_folder(tmp_path / "sqa"))
    third = data.conversations[0].turns[2]
    assert third.targets == [(0, 0)] and data.answer_texts[third.turn_id] == ["1990", "x"]
    assert data.report == Counter({"answer_cells_outside_table": 3, "turns_without_answer_cell": 0})


def test_split_by_table_keeps_each_table_in_one_split(tmp_path):
    root = sqa_folder(tmp_path / "sqa")
    for split in SPLITS:
        data = load_sqa(root, split)
        assert {t.split for t in data.tables.values()} == {split} and len(data.conversations) == 2
    with pytest.raises(DataError, match="no split 'test'"):
        load_sqa(root, "test")
    shares = Counter(table_split(f"{i}_{j}.csv") for i in range(200, 205) for j in range(400))
    assert abs(shares["train"] / 2000 - 0.8) < 0.03 and abs(shares["validation"] / 2000 - 0.1) < 0.02


@pytest.mark.parametrize("bad, message", [
    ("nt-9\t0\t0\tq\ttable_csv/{t}\t['(0, 2)'\t['x']\n", "answer_coordinates is not a Python literal"),
    ("nt-9\t0\t0\tq\ttable_csv/{t}\t['(0, -2)']\t['x']\n", "is not '\\(row, col\\)'"),
    ("nt-9\t0\t0\tq\ttable_csv/{t}\t['(0, 2)']\t__import__('os')\n", "answer_text is not a Python literal"),
    ("nt-9\tzero\t0\tq\ttable_csv/{t}\t['(0, 2)']\t['x']\n", "annotator and position must be integers"),
    ("nt-9\t0\t0\tq\ttable_csv/{t}\t'(0, 2)'\t['x']\n", "answer_coordinates must be a list"),
])
def test_a_malformed_row_names_file_and_line(tmp_path, bad, message):
    root = sqa_folder(tmp_path / "sqa")
    (table,) = table_names(1, "train")
    with (root / "train.tsv").open("a", encoding="utf-8") as f:
        f.write(bad.format(t=table))
    with pytest.raises(DataError, match=rf"train\.tsv:14: .*{message}"):
        load_sqa(root)


def test_gaps_in_positions_missing_columns_and_files_are_named(tmp_path):
    root = sqa_folder(tmp_path / "sqa")
    (table,) = table_names(1, "train")
    with (root / "train.tsv").open("a", encoding="utf-8") as f:
        f.write(f"nt-7\t0\t1\tq\ttable_csv/{table}\t['(0, 0)']\t['1990']\n")
    with pytest.raises(DataError, match=r"train\.tsv:14: sequence nt-7 \(annotator 0\) has positions \[1\]"):
        load_sqa(root)
    (root / "other.tsv").write_text(HEADER.replace("\tanswer_text", ""))
    with pytest.raises(DataError, match=r"other\.tsv:1: header lacks column\(s\) answer_text"):
        load_sqa(root, questions=root / "other.tsv")
    with pytest.raises(DataError, match="nope.csv: file not found"):
        read_table(root / "table_csv" / "nope.csv")


def test_the_real_files_load(data_dir):
    data = load_sqa(data_dir / "sqa")
    assert len(data.conversations) == 5041 and len(data.tables) == 797
    assert sum(len(c.turns) for c in data.conversations) == 14541
    assert data.report["answer_cells_outside_table"] < 60  # see the reader's docstring
    by_split = {s: len(load_sqa(data_dir / "sqa", s).tables) for s in SPLITS}
    assert by_split == {"train": 625, "dev": 94, "validation": 78}
