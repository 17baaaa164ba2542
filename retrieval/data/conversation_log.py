"""Readers for long conversation logs: Zyphra's TemporalMemoryDataset, LoCoMo, and a plain JSONL chat log.

Every reader returns a list of :class:`Utterance`, one per turn, in order, with a time-zone-aware
timestamp and a session number. Formats:

- Zyphra (``ConversationData/<id>.json``): LoCoMo's ``conversation`` dict whose turns carry
  ``date_time`` ("01:56:04 AM on Monday 08 May, 2023") and ``response_number``.
- LoCoMo (``locomo10.json`` sample, or its ``conversation`` dict): one timestamp per session
  ("1:56 pm on 8 May, 2023"); turns have none, so every turn takes its session's time plus one
  second per turn (documented fallback: order is kept, dates are exact, clock times approximate).
- JSONL: one ``{"speaker", "text", "timestamp", "session"?}`` object a line; ``timestamp`` in ISO 8601.
  Without ``session``, a new session starts after a silence longer than ``session_gap`` (default 30 minutes).

Timestamps must be absolute unless ``timestamps="lenient"`` (or a strptime format) says otherwise; what each mode
reads, and which zone a stamp is read in, is :mod:`retrieval.data.timestamps`. Missing, relative or invalid
timestamps raise :class:`~retrieval.data.jsonio.DataError` naming the file, the turn and the raw value, unless
``on_bad_time="previous"``, which gives the turn the previous turn's time (and logs it).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from pathlib import Path

from retrieval.data.jsonio import DataError, iter_jsonl, read_json
from retrieval.data.timestamps import (  # noqa: F401  (the formats and parse_timestamp: imported from here too)
    LOCOMO_SESSION_TIMES,
    ZYPHRA_TIME,
    as_timezone,
    check_mode,
    instant,
    parse_timestamp,
    read_timestamp,
    timestamp_problem,
)

logger = logging.getLogger(__name__)

SESSION_KEY = re.compile(r"session_(\d+)")
DEFAULT_SESSION_GAP = timedelta(minutes=30)
BAD_TIME_POLICIES = ("error", "previous")


@dataclass(frozen=True)
class Utterance:
    """One turn of a long conversation: the row of a conversation table before its metadata columns."""

    response_idx: int
    session: int
    speaker: str
    timestamp: datetime  # time-zone aware
    text: str
    turn_id: str = ""  # the source's id ("D1:3" in LoCoMo), kept for evidence lookup


class _TimeReader:
    """Reads a log's timestamps (``timestamps`` mode, zone ``tz``) and applies the bad-timestamp policy: raise
    naming the place, the raw value and why, or reuse the previous turn's time."""

    def __init__(self, policy: str, tz: str | tzinfo | None, timestamps: str):
        if policy not in BAD_TIME_POLICIES:
            raise ValueError(f"on_bad_time must be one of {BAD_TIME_POLICIES}")
        self.policy, self.timestamps = policy, check_mode(timestamps)
        self.tz = None if tz is None else as_timezone(tz)
        self.previous: datetime | None = None

    def __call__(self, raw: object, where: str) -> datetime:
        parsed = parse_timestamp(raw, self.tz, self.timestamps)
        if parsed is None:
            _, why = timestamp_problem(raw, self.timestamps, self.tz)
            if self.policy == "error" or self.previous is None:
                raise DataError(f"{where}: missing or unparseable timestamp {raw!r}: {why}")
            logger.warning("%s: unparseable timestamp %r (%s); using the previous turn's time", where, raw, why)
            parsed = self.previous
        self.previous = parsed
        return parsed


def _sessions(conversation: dict, where: str) -> list[tuple[int, list[dict]]]:
    found = []
    for key, turns in conversation.items():
        m = SESSION_KEY.fullmatch(key)
        if m and isinstance(turns, list) and turns:
            found.append((int(m.group(1)), turns))
    if not found:
        raise DataError(f"{where}: no non-empty 'session_N' lists; not a LoCoMo-style conversation")
    return sorted(found)


def read_zyphra_log(path: str | Path, tz: str | tzinfo | None = None, on_bad_time: str = "error",
                    timestamps: str = "strict") -> list[Utterance]:
    """Utterances of a Zyphra ``ConversationData/<id>.json`` log, ordered by response number."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise DataError(f"{path}: expected a JSON object with session_N keys")
    read_time = _TimeReader(on_bad_time, tz, timestamps)
    out = []
    for session, turns in _sessions(data, str(path)):
        for i, turn in enumerate(turns):
            where = f"{path}: session_{session} turn {i} ({turn.get('dia_id', '?')})"
            if "text" not in turn or "response_number" not in turn:
                raise DataError(f"{where}: turn lacks 'text' or 'response_number'")
            stamp = read_time(turn.get("date_time"), where)
            out.append(Utterance(int(turn["response_number"]), session, str(turn.get("speaker", "")), stamp,
                                 turn["text"], str(turn.get("dia_id", ""))))
    out.sort(key=lambda u: u.response_idx)
    return out


def read_locomo_conversation(conversation: dict, tz: str | tzinfo | None = None, where: str = "locomo",
                             on_bad_time: str = "error", timestamps: str = "strict") -> list[Utterance]:
    """Utterances of one LoCoMo ``conversation`` dict; turn times = session time + 1 s per turn."""
    read_time = _TimeReader(on_bad_time, tz, timestamps)
    out: list[Utterance] = []
    for session, turns in _sessions(conversation, where):
        start = read_time(conversation.get(f"session_{session}_date_time"), f"{where}: session_{session}_date_time")
        for i, turn in enumerate(turns):
            if "text" not in turn:
                raise DataError(f"{where}: session_{session} turn {i}: no 'text'")
            out.append(Utterance(len(out), session, str(turn.get("speaker", "")), start + timedelta(seconds=i),
                                 turn["text"], str(turn.get("dia_id", ""))))
    return out


def read_locomo_samples(path: str | Path) -> list[dict]:
    """The samples of a ``locomo10.json``-style file (a JSON list of {"sample_id", "conversation", "qa"})."""
    data = read_json(path)
    if not isinstance(data, list):
        raise DataError(f"{path}: expected a JSON list of LoCoMo samples")
    for i, sample in enumerate(data):
        if not isinstance(sample, dict) or "conversation" not in sample:
            raise DataError(f"{path}: sample {locomo_sample_id(sample, i)} has no 'conversation'")
    return data


def locomo_sample_id(sample: object, position: int) -> str:
    """A sample's ``sample_id``, else its position in the file."""
    return str(sample.get("sample_id", position)) if isinstance(sample, dict) else str(position)


def locomo_sample_utterances(sample: dict, where: str = "locomo", position: int = 0, tz: str | tzinfo | None = None,
                             timestamps: str = "strict") -> list[Utterance]:
    """The utterances of one LoCoMo sample (a {"sample_id", "conversation", ...} dict), errors naming ``where``."""
    return read_locomo_conversation(sample["conversation"], tz, f"{where}: {locomo_sample_id(sample, position)}",
                                    timestamps=timestamps)


def read_locomo(path: str | Path, tz: str | tzinfo | None = None,
                timestamps: str = "strict") -> dict[str, list[Utterance]]:
    """Every sample of a ``locomo10.json``-style file: sample_id -> utterances."""
    return {locomo_sample_id(sample, i): locomo_sample_utterances(sample, str(path), i, tz, timestamps)
            for i, sample in enumerate(read_locomo_samples(path))}


def assign_sessions(stamps: list[datetime], gap: timedelta = DEFAULT_SESSION_GAP) -> list[int]:
    """Session numbers (1-based) for ordered timestamps: a new session after a silence longer than ``gap``
    (elapsed time, so a DST change is no silence)."""
    sessions, current = [], 1
    for i, t in enumerate(stamps):
        if i and instant(t) - instant(stamps[i - 1]) > gap:
            current += 1
        sessions.append(current)
    return sessions


def read_jsonl_log(path: str | Path, tz: str | tzinfo | None = None, session_gap: timedelta = DEFAULT_SESSION_GAP,
                   on_bad_time: str = "error", timestamps: str = "strict") -> list[Utterance]:
    """A JSONL chat log of ``{"speaker", "text", "timestamp", "session"?}`` lines, in file order."""
    read_time = _TimeReader(on_bad_time, tz, timestamps)
    records: list[tuple[dict, datetime, int]] = []
    for lineno, obj in iter_jsonl(path):
        where = f"{path}:{lineno}"
        for key in ("speaker", "text"):
            if not isinstance(obj.get(key), str):
                raise DataError(f"{where}: missing or non-string {key!r}")
        raw = obj.get("timestamp")
        stamp = read_time(raw, where)
        if records and instant(stamp) < instant(records[-1][1]):
            before = records[-1]
            naive = [read_timestamp(r, timestamps) for r in (before[0].get("timestamp"), raw)]
            mixed = len({t.tzinfo is None for t in naive if t is not None}) > 1
            raise DataError(f"{where}: timestamp {raw!r} is earlier than the line before (line {before[2]}: "
                            f"{before[0].get('timestamp')!r}, read as {before[1].isoformat()}); "
                            "the log must be in order" + ("; one of the two has no UTC offset and is read in "
                                                          f"{stamp.tzinfo}: write its offset" if mixed else ""))
        records.append((obj, stamp, lineno))
    if not records:
        raise DataError(f"{path}: no utterances")
    given = [obj.get("session") for obj, _, _ in records]
    if all(s is None for s in given):
        sessions = assign_sessions([s for _, s, _ in records], session_gap)
    elif any(s is None for s in given):
        lineno = records[given.index(None)][2]
        raise DataError(f"{path}:{lineno}: 'session' is missing here but given on other lines")
    else:
        sessions = [int(s) for s in given if s is not None]  # every line gives one
    return [Utterance(i, sess, obj["speaker"], stamp, obj["text"], str(obj.get("id", i)))
            for i, ((obj, stamp, _), sess) in enumerate(zip(records, sessions))]


def detect_format(path: str | Path) -> str:
    """"jsonl", "locomo" (a list of samples) or "zyphra" (one conversation dict), from the file."""
    path = Path(path)
    if path.suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    with path.open(encoding="utf-8", errors="replace") as f:  # the reader that follows says if it is not UTF-8
        head = f.read(256).lstrip()[:1]
    return "locomo" if head == "[" else "zyphra"


def load_log(path: str | Path, fmt: str = "auto", tz: str | tzinfo | None = None, sample: str | None = None,
             session_gap: timedelta = DEFAULT_SESSION_GAP, on_bad_time: str = "error",
             timestamps: str = "strict") -> list[Utterance]:
    """Read any supported log; for a LoCoMo file, ``sample`` names the conversation (default: the first).
    ``tz``: the zone to read every stamp in (None: as written, UTC when a stamp has none); ``timestamps``:
    "strict", "lenient" or a strptime format (:mod:`retrieval.data.timestamps`)."""
    fmt = detect_format(path) if fmt == "auto" else fmt
    if fmt == "jsonl":
        return read_jsonl_log(path, tz, session_gap, on_bad_time, timestamps)
    if fmt == "zyphra":
        return read_zyphra_log(path, tz, on_bad_time, timestamps)
    if fmt == "locomo":
        samples = read_locomo(path, tz, timestamps)
        if sample is None:
            return next(iter(samples.values()))
        if sample not in samples:
            raise DataError(f"{path}: no sample {sample!r}; have {sorted(samples)}")
        return samples[sample]
    raise ValueError(f"unknown log format {fmt!r}; use auto, zyphra, locomo or jsonl")
