"""Zyphra's TemporalMemoryDataset layout: ``ConversationData/<log>.json`` and ``TestData/<kind>/<subtype>.json``.

Each test file is ``{"file_indexes": [...], "file_<log>": [{"questions": [...], "relevant_docs": [...]}, ...]}``.
A time or time+content question's versions are strings; an ambiguous question's versions are short
dialogues (lists of ``{"speaker", "text"}``) whose last turn is the request. Every version is one test
question with the item's relevant response numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from retrieval.data.jsonio import DataError, read_json

KINDS = {"time_qs": "time", "content_time_qs": "time+content", "ambiguous_time_qs": "ambiguous"}


@dataclass(frozen=True)
class TemporalQuestion:
    """One version of one test item: the question (and, for ambiguous ones, the turns before it)."""

    log: str
    kind: str  # "time", "time+content" or "ambiguous"
    subtype: str  # the file's name without "test_": "dates", "rel_session", ...
    item: int
    version: int
    question: str
    history: tuple[dict, ...]
    relevant: frozenset[int]


def log_paths(data_dir: str | Path) -> dict[str, Path]:
    """log id -> ConversationData file."""
    folder = Path(data_dir) / "ConversationData"
    if not folder.is_dir():
        raise DataError(f"{folder}: not found; Zyphra's folder (--zyphra-dir) must hold ConversationData/ and "
                        "TestData/")
    paths = {p.stem: p for p in sorted(folder.glob("*.json"))}
    if not paths:
        raise DataError(f"{folder}: no .json logs")
    return paths


def _version(raw: object, where: str) -> tuple[str, tuple[dict, ...]]:
    if isinstance(raw, str):
        return raw, ()
    if isinstance(raw, list) and raw and all(isinstance(t, dict) and isinstance(t.get("text"), str) for t in raw):
        return raw[-1]["text"], tuple(raw[:-1])
    raise DataError(f"{where}: a question version must be a string or a list of {{'speaker', 'text'}} turns")


def read_questions(data_dir: str | Path, logs: set[str] | None = None) -> list[TemporalQuestion]:
    """Every question version of every test file under ``TestData/``, for the given logs (default: all)."""
    root = Path(data_dir) / "TestData"
    if not root.is_dir():
        raise DataError(f"{root}: not found; the questions' folder (--zyphra-dir, or --questions-dir when given) "
                        "must hold TestData/")
    out = []
    for path in sorted(root.glob("*/*.json")):
        kind = KINDS.get(path.parent.name)
        if kind is None:
            continue
        subtype = "content" if kind == "time+content" else re.sub(r"^test_", "", path.stem)
        data = read_json(path)
        if not isinstance(data, dict):
            raise DataError(f"{path}: expected an object with file_<log> keys")
        for key, items in data.items():
            m = re.fullmatch(r"file_(\w+)", key)
            if not m or key == "file_indexes" or (logs is not None and m.group(1) not in logs):
                continue
            for i, item in enumerate(items):
                where = f"{path}: {key}[{i}]"
                if not isinstance(item, dict) or "questions" not in item or "relevant_docs" not in item:
                    raise DataError(f"{where}: needs 'questions' and 'relevant_docs'")
                relevant = frozenset(int(r) for r in item["relevant_docs"])
                for v, raw in enumerate(item["questions"]):
                    text, history = _version(raw, f"{where} version {v}")
                    out.append(TemporalQuestion(m.group(1), kind, subtype, i, v, text, history, relevant))
    if not out:
        raise DataError(f"{root}: no questions found for logs {sorted(logs) if logs else 'any'}")
    return out
