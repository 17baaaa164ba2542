"""The phrasing bank: its size and layout, its gold rows from a log's metadata, and its independence from the
planner (the generator imports nothing of retrieval.memory)."""

from __future__ import annotations

import ast
import json
import random
from datetime import date
from pathlib import Path

import pytest

from experiments import temporal_bank as bank
from retrieval.data.paths import ZYPHRA_DIR
from retrieval.data.zyphra_temporal import read_questions

ROOT = Path(__file__).resolve().parents[1]
BANK = ROOT / "eval" / "bank"


def turn(speaker: str, stamp: str, n: int) -> dict:
    return {"speaker": speaker, "text": f"line {n}", "date_time": stamp, "response_number": str(n)}


@pytest.fixture
def log() -> bank.Log:
    # Mon 8 May, Thu 11 May (two sessions: 09:00 and 15:00), Fri 9 June
    stamps = [["09:00:00 AM on Monday 08 May, 2023"] * 2, ["09:00:00 AM on Thursday 11 May, 2023"] * 2,
              ["03:00:00 PM on Thursday 11 May, 2023"] * 2, ["10:00:00 AM on Friday 09 June, 2023"] * 2]
    data, n = {"speaker_a": "Ann", "speaker_b": "Bob"}, 0
    for s, pair in enumerate(stamps, start=1):
        data[f"session_{s}"] = []
        for i, stamp in enumerate(pair):
            data[f"session_{s}"].append(turn("Ann" if i == 0 else "Bob", stamp, n))
            n += 1
    return bank.Log("t", data)


def test_gold_rows_come_from_the_logs_metadata(log):
    rng = random.Random(0)
    assert log.now.date() == date(2023, 6, 9) and log.sessions == [1, 2, 3, 4]
    assert list(bank.FAMILIES["last_time"][2](log, rng)) == [({}, [6, 7])]
    parts = {(s["part"], s["dnum"]): g for s, g in bank.fam_part_of_day(log, rng)}
    assert all(g == {("afternoon", 11): [4, 5], ("morning", 11): [2, 3], ("morning", 8): [0, 1],
                     ("morning", 9): [6, 7]}[k] for k, g in parts.items()) and len(parts) == 3
    # days with one session only are anchors: 8 May (nothing before it), 9 June (after the two of 11 May)
    before = {s["d"]: g for s, g in bank.fam_session_shift(log, rng, -1)}
    assert list(before.values()) == [[4, 5]] and "June" in next(iter(before))
    speaker = list(bank.fam_speaker(log, random.Random(3), bank.fam_days))
    who = {r.idx: r.speaker for r in log.rows}
    assert speaker and all(g and {who[i] for i in g} == {s["n"]} for s, g in speaker)  # one participant's rows
    assert list(bank.fam_since(log, rng, weekday=True)) == []  # nothing in the six days before the 9th of June


def test_the_generator_shares_no_code_with_the_planner():
    for module in ("temporal_bank.py", "bank_phrases.py"):
        tree = ast.parse((ROOT / "experiments" / module).read_text())
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        assert not any(m and m.startswith("retrieval.memory") for m in imported), module


def test_the_committed_bank_is_in_zyphras_layout_and_big_enough():
    files = sorted(BANK.glob("TestData/*/test_*.json"))
    assert len(files) >= 30
    items, logs = 0, set()
    for path in files:
        data = json.loads(path.read_text())
        for log in data["file_indexes"]:
            entries = data[f"file_{log}"]
            assert entries and all(e["relevant_docs"] and e["questions"] for e in entries)
            items, logs = items + len(entries), logs | {str(log)}
    assert items >= 400 and len(logs) >= 6 and set(bank.DEV_LOGS) < logs
    questions = read_questions(BANK, logs)
    assert {q.kind for q in questions} == {"time", "ambiguous"}


@pytest.mark.skipif(not (ZYPHRA_DIR / "ConversationData" / "26.json").exists(), reason="needs the Zyphra logs")
def test_the_committed_bank_is_what_the_generator_writes(tmp_path):
    assert bank.main(["--zyphra-dir", str(ZYPHRA_DIR), "--output", str(tmp_path)]) == 0
    for path in sorted(BANK.glob("TestData/*/*.json")):
        assert json.loads(path.read_text()) == json.loads((tmp_path / path.relative_to(BANK)).read_text()), path.name
