"""Readers for the OTT-QA layout: tables, linked passages and questions.

Files (see ``../shared/data/ottqa/SOURCE.md``): ``tables.jsonl`` (one table a line),
``passages_dev.jsonl`` (``{"table_id", "passages": {"/wiki/Page": intro}}``) and
``questions_dev.json`` (a list of questions naming their table and answer cells).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from retrieval.data.jsonio import DataError, iter_jsonl, read_json
from retrieval.data.paths import OTTQA_DIR
from retrieval.data.types import Cell, Table

logger = logging.getLogger(__name__)

DEFAULT_DATA_DIR = OTTQA_DIR


def _cell(raw: object, where: str) -> Cell:
    if isinstance(raw, str):  # some dumps store plain strings
        return Cell(raw)
    if isinstance(raw, list) and len(raw) == 2 and isinstance(raw[0], str):
        return Cell(raw[0], tuple(raw[1] or ()))
    raise DataError(f"{where}: malformed cell {raw!r}; expected [text, [links]]")


def parse_table(obj: dict, where: str = "table") -> Table:
    """Build a :class:`Table` from one OTT-QA table object; rejects tables without rows."""
    uid = obj.get("uid")
    if not uid:
        raise DataError(f"{where}: table has no 'uid'")
    where = f"{where} ({uid})"
    rows = obj.get("data")
    if not rows:
        raise DataError(f"{where}: table has no rows")
    header = [_cell(h, f"{where} header").text for h in obj.get("header", [])]
    return Table(
        uid=uid,
        title=obj.get("title", ""),
        header=header,
        rows=[[_cell(c, f"{where} row {i}") for c in row] for i, row in enumerate(rows)],
        section_title=obj.get("section_title", "") or "",
        section_text=obj.get("section_text", "") or "",
        intro=obj.get("intro", "") or "",
        split=obj.get("split"),
    )


def load_tables(path: str | Path) -> dict[str, Table]:
    """All tables of a ``tables.jsonl`` file, keyed by uid; a uid on two lines is a DataError naming both."""
    tables: dict[str, Table] = {}
    lines: dict[str, int] = {}
    for lineno, obj in iter_jsonl(path):
        table = parse_table(obj, f"{path}:{lineno}")
        if table.uid in lines:
            raise DataError(f"{path}:{lineno}: table uid {table.uid!r} is also the uid of line {lines[table.uid]}; "
                            "uids must be unique")
        tables[table.uid], lines[table.uid] = table, lineno
    return tables


def load_passages(path: str | Path) -> dict[str, str]:
    """Linked-page intros from ``passages_dev.jsonl``, keyed by link ("/wiki/Page")."""
    passages: dict[str, str] = {}
    for lineno, obj in iter_jsonl(path):
        if not isinstance(obj.get("passages"), dict):
            raise DataError(f"{path}:{lineno}: expected a 'passages' object")
        passages.update(obj["passages"])
    return passages


@dataclass
class Question:
    """An OTT-QA question: text, table, answer text and answer cells (row, col)."""

    question_id: str
    question: str
    table_id: str
    answer: str
    answer_cells: list[tuple[int, int]] = field(default_factory=list)


def load_questions(path: str | Path) -> list[Question]:
    """Questions in the format of ``questions_dev.json`` (a JSON list)."""
    data = read_json(path)
    if not isinstance(data, list):
        raise DataError(f"{path}: expected a JSON list of questions")
    questions = []
    for i, q in enumerate(data):
        try:
            cells = []
            for node in q.get("answer-node", []):
                row, col = node[1]
                if (int(row), int(col)) not in cells:
                    cells.append((int(row), int(col)))
            questions.append(
                Question(str(q["question_id"]), q["question"], q["table_id"], q.get("answer-text", ""), cells)
            )
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise DataError(f"{path}: question #{i} is malformed ({type(e).__name__}: {e})") from e
    return questions
