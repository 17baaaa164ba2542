"""Reading a corpus for a trend analysis: time-stamped documents (CSV / JSONL) or a conversation log, as a
conversation table, with every row that could not be placed in time counted and listed."""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

from models.encoder import Encoder
from retrieval.data.conversation_log import DEFAULT_SESSION_GAP, SESSION_KEY, Utterance, assign_sessions, load_log
from retrieval.data.jsonio import DataError, iter_jsonl, not_utf8, read_json
from retrieval.data.timestamps import (
    NAIVE_STAMP_ZONE,
    as_timezone,
    check_mode,
    instant,
    parse_timestamp,
    timestamp_problem,
)
from retrieval.memory.conversation_table import ConversationTable


@dataclass
class Corpus:
    """Time-stamped documents as a conversation table, and what could not be placed in time.

    ``skipped``: one ``{"where", "timestamp", "reason"}`` per row left out; ``source_ids``: response_idx ->
    the source's own id (a CSV ``id`` column, a LoCoMo ``dia_id``), for citing.
    """

    table: ConversationTable
    skipped: list[dict] = field(default_factory=list)
    source_ids: dict = field(default_factory=dict)
    path: str = ""

    @property
    def n_read(self) -> int:
        return len(self.table) + len(self.skipped)


def parse_document_time(raw: object, tz, timestamps: str = "strict") -> datetime | None:
    """A timestamp cell -> tz-aware datetime: epoch seconds (or milliseconds), in ``tz`` (None: UTC), or any text
    :func:`~retrieval.data.timestamps.parse_timestamp` reads in the ``timestamps`` mode; None when nothing reads
    it (:func:`~retrieval.data.timestamps.timestamp_problem` says why)."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, str) and re.fullmatch(r"\s*\d{9,13}(?:\.\d+)?\s*", raw):
        raw = float(raw)
    if isinstance(raw, int | float):
        if not np.isfinite(raw):
            return None
        seconds = raw / 1000 if raw > 1e11 else raw
        return datetime.fromtimestamp(seconds, timezone.utc).astimezone(tz or NAIVE_STAMP_ZONE)
    return parse_timestamp(raw, tz, timestamps)


def _read_rows(path: Path) -> list[tuple[str, dict]]:
    if path.suffix.lower() in (".csv", ".tsv"):
        if not path.is_file():
            raise DataError(f"{path}: file not found")
        try:
            with path.open(encoding="utf-8", newline="") as f:
                reader = csv.DictReader(f, delimiter="\t" if path.suffix.lower() == ".tsv" else ",")
                if reader.fieldnames is None or not {"text", "timestamp"} <= set(reader.fieldnames):
                    raise DataError(f"{path}: needs a header row with a 'text' and a 'timestamp' column (its "
                                    f"columns: {', '.join(reader.fieldnames or []) or 'none'})")
                return [(f"{path}:{n}", row) for n, row in enumerate(reader, start=2)]
        except UnicodeDecodeError as e:
            raise not_utf8(path, e) from e
    return [(f"{path}:{n}", obj) for n, obj in iter_jsonl(path)]


def documents_to_utterances(rows: Sequence[tuple[str, dict]], tz=None,
                            session_gap: timedelta = DEFAULT_SESSION_GAP, timestamps: str = "strict"
                            ) -> tuple[list[Utterance], list[dict], dict[int, str]]:
    """``(where, {text, timestamp, source?|speaker?, id?, session?})`` rows -> utterances in time order,
    the skipped rows (each with why: a relative stamp in the default "strict" ``timestamps`` mode is one), and
    response_idx -> source id. ``tz``: the zone to read every stamp in (None: as written, UTC when a stamp has
    none). A session column is used only when every kept row has one; otherwise sessions split at silences longer
    than ``session_gap``."""
    tz = None if tz is None else as_timezone(tz)
    check_mode(timestamps)
    kept, skipped = [], []
    for where, row in rows:
        text, raw = row.get("text"), row.get("timestamp")
        if not isinstance(text, str) or not text.strip():
            skipped.append({"where": where, "timestamp": raw, "reason": "no text"})
            continue
        stamp = parse_document_time(raw, tz, timestamps)
        if stamp is None:
            skipped.append({"where": where, "timestamp": raw, "reason": timestamp_problem(raw, timestamps, tz)[0]})
            continue
        kept.append((stamp, where, row))
    kept.sort(key=lambda x: instant(x[0]))  # stable: equal times keep file order
    given = [row.get("session") for _, _, row in kept]
    if kept and all(s not in (None, "") for s in given):
        try:
            sessions = [int(s) for s in given if s is not None]
        except (TypeError, ValueError) as e:
            raise DataError(f"a 'session' value is not an integer: {e}") from e
    else:
        sessions = assign_sessions([s for s, _, _ in kept], session_gap)
    utterances, source_ids = [], {}
    for i, ((stamp, where, row), session) in enumerate(zip(kept, sessions)):
        source = row.get("source", row.get("speaker")) or ""
        doc_id = str(row.get("id") or where)
        utterances.append(Utterance(i, session, str(source), stamp, row["text"], doc_id))
        source_ids[i] = doc_id
    return utterances, skipped, source_ids


def _conversation_rows(path: Path) -> list[tuple[str, dict]]:
    """A Zyphra-style log as document rows (per-turn ``date_time``), for logs whose reader refused a timestamp."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise DataError(f"{path}: only a Zyphra-style log (one conversation dict) can skip bad timestamps")
    rows = []
    for key in sorted(data, key=lambda k: int(m.group(1)) if (m := SESSION_KEY.fullmatch(k)) else -1):
        m = SESSION_KEY.fullmatch(key)
        if not m or not isinstance(data[key], list):
            continue
        for i, turn in enumerate(data[key]):
            rows.append((f"{path}: {key} turn {i}", {"text": turn.get("text"), "timestamp": turn.get("date_time"),
                                                    "speaker": turn.get("speaker"), "session": int(m.group(1)),
                                                    "id": turn.get("dia_id")}))
    return rows


def load_corpus(path: str | Path, encoder: Encoder | None = None, fmt: str = "auto", tz: str | None = None,
                sample: str | None = None, cache_dir: str | Path | None = None, session_gap_minutes: float = 30,
                timestamps: str = "strict") -> Corpus:
    """Read documents (CSV / JSONL, ``fmt="documents"``) or a conversation log (Zyphra / LoCoMo .json) into a
    conversation table, embedding the texts with ``encoder`` (cached in ``cache_dir``). ``timestamps``: "strict"
    (absolute stamps only; others are skipped and listed), "lenient" or a strptime format
    (:mod:`retrieval.data.timestamps`); ``tz``: the zone of the calendar (None: the documents', else UTC)."""
    path = Path(path)
    gap = timedelta(minutes=session_gap_minutes)
    if fmt == "auto":
        fmt = "log" if path.suffix.lower() == ".json" else "documents"
    skipped: list[dict] = []
    if fmt == "documents":
        utterances, skipped, source_ids = documents_to_utterances(_read_rows(path), tz, gap, timestamps)
    elif fmt in ("log", "zyphra", "locomo"):
        try:
            utterances = load_log(path, "auto" if fmt == "log" else fmt, tz, sample, gap, timestamps=timestamps)
            source_ids = {u.response_idx: u.turn_id for u in utterances if u.turn_id}
        except DataError as e:
            if "timestamp" not in str(e):
                raise
            utterances, skipped, source_ids = documents_to_utterances(_conversation_rows(path), tz, gap, timestamps)
    else:
        raise ValueError(f"unknown document format {fmt!r}; use auto, documents, log, zyphra or locomo")
    if not utterances:
        raise DataError(f"{path}: no document with text and a readable timestamp ({len(skipped)} skipped)")
    table = ConversationTable.from_utterances(utterances, encoder, cache_dir, tz=tz)
    return Corpus(table, skipped, source_ids, str(path))

