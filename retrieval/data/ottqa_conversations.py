"""The conversational benchmark we can build from OTT-QA.

The questions about one table, in file order, form one conversation: the first turn
must find the table, every turn must find its answer cell given the turns before it
and their answers. Tables are split deterministically into train/val/test by a hash
of their uid, so no test table is ever seen in training.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field

from retrieval.data.jsonio import DataError
from retrieval.data.ottqa import Question
from retrieval.data.types import Conversation, Table, Turn

SPLITS = ("train", "val", "test")
# Percent of tables per split: train 70, val 10, test 20.
SPLIT_BOUNDS = {"train": (0, 70), "val": (70, 80), "test": (80, 100)}


def table_split(uid: str) -> str:
    """Deterministic split of a table: the first 8 hex digits of sha1(uid), mod 100."""
    bucket = int(hashlib.sha1(uid.encode("utf-8")).hexdigest()[:8], 16) % 100
    for name, (lo, hi) in SPLIT_BOUNDS.items():
        if lo <= bucket < hi:
            return name
    raise AssertionError(bucket)


@dataclass
class BenchmarkReport:
    """What was dropped while building conversations, so evaluations can report it."""

    missing_table: int = 0
    targets_outside_table: int = 0
    turns_without_target: int = 0
    missing_table_ids: Counter = field(default_factory=Counter)

    def as_dict(self) -> dict:
        return {
            "questions_with_missing_table": self.missing_table,
            "answer_cells_outside_table": self.targets_outside_table,
            "turns_without_valid_answer_cell": self.turns_without_target,
        }


def build_conversations(
    questions: list[Question],
    tables: dict[str, Table],
    split: str | None = None,
    report: BenchmarkReport | None = None,
) -> list[Conversation]:
    """Group questions by table into conversations, keeping only tables of ``split``.

    Questions whose table is missing are counted in ``report`` (not raised); answer
    cells outside the table are dropped from the turn's targets and counted.
    """
    report = report if report is not None else BenchmarkReport()
    by_table: dict[str, list[Turn]] = {}
    for q in questions:
        if split is not None and table_split(q.table_id) != split:
            continue
        table = tables.get(q.table_id)
        if table is None:
            report.missing_table += 1
            report.missing_table_ids[q.table_id] += 1
            continue
        targets = [(r, c) for r, c in q.answer_cells if table.cell(r, c) is not None]
        report.targets_outside_table += len(q.answer_cells) - len(targets)
        if not targets:
            report.turns_without_target += 1
        by_table.setdefault(q.table_id, []).append(
            Turn(turn_id=q.question_id, query=q.question, answer=q.answer, table_id=q.table_id, targets=targets)
        )
    return [Conversation(conv_id=uid, table_id=uid, turns=turns) for uid, turns in by_table.items()]


def require_conversations(conversations: list[Conversation], questions: list[Question], split: str | None,
                          questions_path: object, tables_path: object) -> list[Conversation]:
    """``conversations`` when there are any; else a DataError naming both files and saying what was found.

    An evaluation over no questions would print zeros over nothing and exit as if it had measured something.
    """
    if conversations:
        return conversations
    of_split = f" (split {split})" if split else ""
    if not questions:
        raise DataError(f"{questions_path}: no questions")
    in_split = sum(split is None or table_split(q.table_id) == split for q in questions)
    if not in_split:
        raise DataError(f"{questions_path}: none of its {len(questions):,} questions is about a table of split "
                        f"{split} (tables are split by a hash of their uid)")
    raise DataError(f"{questions_path}: 0 of {in_split:,} questions name a table in {tables_path}{of_split}")
