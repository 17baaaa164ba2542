"""Table operations over a conversation table, as a JSON-serialisable plan, executed with pandas.

A plan is a short list of operations applied in order to the rows of a conversation table:

- ``{"op": "between", "column": "timestamp", "ranges": [[lo, hi], ...]}``: keep rows inside any range,
  ``lo <= value < hi`` (``"inclusive": "both"`` for ``lo <= value <= hi``); timestamps as ISO strings.
- ``{"op": "filter", "column": "speaker", "cmp": "==", "value": "John"}``: cmp in ==, !=, <, <=, >, >=, in, contains.
- ``{"op": "overlaps", "ranges": [[lo, hi], ...]}``: keep rows whose event time (``event_start``, ``event_end``:
  when what the utterance talks about happened) overlaps a range, and rows without one said inside a range.
- ``{"op": "nth", "group": "session", "start": 3, "end": 3}``: keep the groups (sessions, dates, ...) at
  positions start..end (1-based, negative from the end) in time order: "the third conversation in May",
  "20 sessions ago" (start = end = -20).
- ``{"op": "order", "by": "timestamp", "ascending": false}`` and ``{"op": "head", "n": 5}``.
- ``{"op": "count", "by": "month"}``: rows per group (kept aside; rows unchanged).
- ``{"op": "first_nonempty", "options": [[op, ...], ...]}``: the first of several readings (each a list of
  filter ops) that keeps any rows ("3 days ago" as a calendar day, else as 72 to 96 hours before now, else the
  days beside that day); when none does, the trace says so. Inside an option, ``{"op": "widen", "group":
  "session"}`` brings back every row (of the option's input) of each session that still has one.
- ``{"op": "shift", "group": "session", "start": -1, "end": -1, "anchor": [op, ...]}``: the groups at positions
  start..end relative to the groups the ``anchor`` ops keep (negative: before the anchor's first group, positive:
  after its last), counted among the surviving rows: "the session right before the one on May 8" (-1, -1), "the
  two conversations after our third" (1, 2). The anchor is a list of filter ops (``first_nonempty`` included).
- ``{"op": "rank", "query": "...", "k": 5}``: the k rows most similar to the query (dense index), best first;
  ``"prefer": {"column": "speaker", "value": "John"}`` gives the matching rows a small prior in the ranking;
  ``"margin": m`` keeps, of those k, only the rows scored within m times the spread of their scores (best minus
  k-th) of the best.

Any operation may carry ``"soft": true``: it is skipped, and the skip noted, when it would leave no rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np
import pandas as pd

CMPS = ("==", "!=", "<", "<=", ">", ">=", "in", "contains")
REQUIRED = {
    "between": ("column", "ranges"),
    "filter": ("column", "cmp", "value"),
    "nth": ("group", "start", "end"),
    "overlaps": ("ranges",),
    "order": ("by",),
    "head": ("n",),
    "count": ("by",),
    "rank": ("query", "k"),
    "first_nonempty": ("options",),
    "widen": ("group",),
    "shift": ("group", "start", "end", "anchor"),
}
FILTER_OPS = ("between", "filter", "nth", "overlaps")
OPTIONAL = {"between": ("inclusive",), "order": ("ascending",), "rank": ("prefer", "margin")}

# A ranker maps (query, k, candidate ids) to [(id, score)], best first; a rank op with "prefer" also passes
# ``prefer=`` the candidate ids matching it, which the ranker gives a small prior, and one with "margin" passes
# ``margin=`` (the ranker cuts its list there).
Ranker = Callable[[str, int, Sequence[int]], list[tuple[int, float]]]


@dataclass
class Plan:
    """What a planner decided: the operations, the resolved time expressions, notes on every fallback, the zone
    whose days the calendar words meant (set by whoever chose it, e.g. TemporalMemory.ask), and how the question
    was read (who, when, what)."""

    ops: list[dict]
    notes: list[str] = field(default_factory=list)
    planner: str = "rule"
    expressions: list[dict] = field(default_factory=list)
    zone: str | None = None
    reading: dict = field(default_factory=dict)  # who / when / what, as the planner read them

    def to_dict(self) -> dict:
        return {"planner": self.planner, "reading": self.reading, "ops": self.ops, "notes": self.notes,
                "expressions": self.expressions, "zone": self.zone}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), default=str)


@dataclass
class Execution:
    """The surviving rows (in result order), per-row scores for ranked rows, group counts, and a trace."""

    rows: pd.DataFrame
    scores: dict[int, float] = field(default_factory=dict)
    counts: dict[str, dict] = field(default_factory=dict)
    trace: list[str] = field(default_factory=list)

    @property
    def ids(self) -> list[int]:
        return self.rows.index.tolist()


def validate_ops(ops: object, columns: Sequence[str], top_level: bool = True) -> list[str]:
    """Problems with a plan (an empty list when it is valid): unknown ops, columns, keys or value types."""
    if not isinstance(ops, list):
        return [f"a plan is a list of operations, got {type(ops).__name__}"]
    errors = []
    for i, op in enumerate(ops):
        if not isinstance(op, dict) or op.get("op") not in REQUIRED:
            errors.append(f"op {i}: expected an object with 'op' in {sorted(REQUIRED)}, got {op!r}")
            continue
        name = op["op"]
        missing = [k for k in REQUIRED[name] if k not in op]
        extra = set(op) - {"op", "soft", *REQUIRED[name], *OPTIONAL.get(name, ())}
        if missing:
            errors.append(f"op {i} ({name}): missing {missing}")
        if extra:
            errors.append(f"op {i} ({name}): unknown keys {sorted(extra)}")
        for key in ("column", "group", "by"):
            if key in op and op[key] not in columns:
                errors.append(f"op {i} ({name}): unknown column {op[key]!r}; columns are {list(columns)}")
        if "prefer" in op and not (isinstance(op["prefer"], dict) and set(op["prefer"]) == {"column", "value"}
                                   and op["prefer"]["column"] in columns):
            errors.append(f"op {i} ({name}): prefer must be {{'column': <a column>, 'value': V}}")
        if "margin" in op and (not isinstance(op["margin"], int | float) or isinstance(op["margin"], bool)
                               or op["margin"] < 0):
            errors.append(f"op {i} ({name}): margin must be a number >= 0")
        if name == "filter" and op.get("cmp") not in CMPS:
            errors.append(f"op {i} (filter): cmp must be one of {CMPS}")
        if name == "between" and not (isinstance(op.get("ranges"), list)
                                      and all(isinstance(r, list | tuple) and len(r) == 2 for r in op["ranges"])):
            errors.append(f"op {i} (between): ranges must be a list of [low, high] pairs")
        for key in ("start", "end", "n", "k"):
            if key in op and (not isinstance(op[key], int) or isinstance(op[key], bool)):
                errors.append(f"op {i} ({name}): {key} must be an integer")
        if name == "nth" and 0 in (op.get("start"), op.get("end")):
            errors.append(f"op {i} (nth): positions are 1-based (negative from the end); 0 is not one")
        if name == "first_nonempty":
            options = op.get("options")
            if not isinstance(options, list) or not options or any(
                    not isinstance(o, list) or not o or any(not isinstance(x, dict) or x.get("op") not in
                                                            (*FILTER_OPS, "widen") for x in o) for o in options):
                errors.append(f"op {i} (first_nonempty): options must be non-empty lists of {FILTER_OPS} or "
                              "widen ops")
            else:
                errors += [f"op {i} option: {e}" for o in options for e in validate_ops(o, columns, False)]
        if name == "shift":
            anchor = op.get("anchor")
            if not isinstance(anchor, list) or not anchor or any(
                    not isinstance(x, dict) or x.get("op") not in (*FILTER_OPS, "first_nonempty") for x in anchor):
                errors.append(f"op {i} (shift): anchor must be a non-empty list of {FILTER_OPS} or first_nonempty ops")
            else:
                errors += [f"op {i} anchor: {e}" for e in validate_ops(anchor, columns)]
            if isinstance(op.get("start"), int) and isinstance(op.get("end"), int) and not (
                    op["start"] <= op["end"] and (op["end"] < 0 or op["start"] > 0)):
                errors.append(f"op {i} (shift): start <= end, both negative (before the anchor) or both positive")
        if name == "widen" and top_level:
            errors.append(f"op {i} (widen): only inside a first_nonempty option")
    return errors


def _coerce(frame: pd.DataFrame, column: str, value):
    if column == "timestamp" and isinstance(value, str):
        ts = pd.Timestamp(value)
        return ts.tz_localize(frame["timestamp"].dt.tz) if ts.tzinfo is None else ts
    return value


def _between(frame: pd.DataFrame, op: dict) -> np.ndarray:
    col, inclusive = frame[op["column"]], op.get("inclusive", "left")
    mask = np.zeros(len(frame), dtype=bool)
    for lo, hi in op["ranges"]:
        lo, hi = _coerce(frame, op["column"], lo), _coerce(frame, op["column"], hi)
        mask |= col.between(lo, hi, inclusive=inclusive).to_numpy()
    return mask


def _filter(frame: pd.DataFrame, op: dict) -> np.ndarray:
    col, cmp, value = frame[op["column"]], op["cmp"], _coerce(frame, op["column"], op["value"])
    if cmp == "in":
        return col.isin(value if isinstance(value, list) else [value]).to_numpy()
    if cmp == "contains":
        return col.astype(str).str.contains(str(value), case=False, regex=False).to_numpy()
    ops = {"==": col.__eq__, "!=": col.__ne__, "<": col.__lt__, "<=": col.__le__, ">": col.__gt__, ">=": col.__ge__}
    return ops[cmp](value).to_numpy()


def _nth(frame: pd.DataFrame, pos: np.ndarray, op: dict, trace: list[str]) -> np.ndarray:
    """Positions (of ``pos``) whose group is among the groups start..end, in order of first appearance in time."""
    values = frame[op["group"]].to_numpy()
    times = frame["timestamp"].dt.tz_convert("UTC").dt.tz_localize(None).to_numpy()
    order = pos[np.argsort(times[pos], kind="stable")]
    groups = pd.unique(values[order])
    n = len(groups)
    start, end = (p if p > 0 else n + 1 + p for p in (op["start"], op["end"]))
    if not (1 <= start <= n and 1 <= end <= n):
        trace.append(f"nth {op['group']} {op['start']}..{op['end']}: only {n} {op['group']} value(s) here")
    keep = groups[max(start, 1) - 1:max(end, 0)]
    return pos[np.isin(values[pos], keep)]


def _overlaps(frame: pd.DataFrame, op: dict) -> np.ndarray:
    """Rows whose event interval overlaps a range, or (without an event time) whose timestamp lies in one."""
    has = frame["event_start"].notna().to_numpy()
    mask = np.zeros(len(frame), dtype=bool)
    for lo, hi in op["ranges"]:
        lo, hi = _coerce(frame, "timestamp", lo), _coerce(frame, "timestamp", hi)
        event = (frame["event_start"] < hi).to_numpy() & (frame["event_end"] > lo).to_numpy()
        said = frame["timestamp"].between(lo, hi, inclusive="left").to_numpy()
        mask |= np.where(has, event, said)
    return mask


def _apply_filter(frame: pd.DataFrame, pos: np.ndarray, op: dict, trace: list[str]) -> np.ndarray:
    if op["op"] == "between":
        return pos[_between(frame, op)[pos]]
    if op["op"] == "overlaps":
        return pos[_overlaps(frame, op)[pos]]
    if op["op"] == "filter":
        return pos[_filter(frame, op)[pos]]
    return _nth(frame, pos, op, trace)


def day_span(start: str, end: str) -> str:
    """The calendar days of an ISO [start, end) range, as "2023-05-08" or "2023-05-08 to 2023-05-14"."""
    first, last = start[:10], (datetime.fromisoformat(end) - timedelta(microseconds=1)).date().isoformat()
    return first if first >= last else f"{first} to {last}"


FALLBACK_NOTE = "no rows in the period read first"  # an answer says this first (answer_notes.WARNINGS)


def describe_option(option: Sequence[dict]) -> str:
    """A reading tried after the first, in words: its days, else its filters."""
    parts = []
    for op in option:
        if op["op"] == "between" and op["column"] == "timestamp":
            parts.append("the rows of " + ", ".join(day_span(a, b) for a, b in op["ranges"]))
        elif op["op"] == "filter" and op["column"] == "weekday":
            parts.append(f"the latest {op['value']} in the memory")
        elif op["op"] == "widen":
            parts.append(f"their whole {op['group']}s")
    return " with ".join(parts) or "the next reading"


def _first_nonempty(frame: pd.DataFrame, before: np.ndarray, op: dict, trace: list[str]) -> np.ndarray:
    for i, option in enumerate(op["options"]):
        pos = before
        for sub in option:
            pos = (before[np.isin(frame[sub["group"]].to_numpy()[before], frame[sub["group"]].to_numpy()[pos])]
                   if sub["op"] == "widen" else _apply_filter(frame, pos, sub, trace))
        if len(pos):
            if i:
                trace.append(f"first_nonempty: option {i + 1} used, the earlier ones left no rows")
                trace.append(f"{FALLBACK_NOTE}: kept {describe_option(option)} instead")
            return pos
    trace.append(f"first_nonempty: none of the {len(op['options'])} options kept any rows")
    return pos


def _shift(frame: pd.DataFrame, pos: np.ndarray, op: dict, trace: list[str]) -> np.ndarray:
    """Positions of the groups start..end relative to the anchor's groups, among the groups of ``pos``."""
    anchor = pos
    for sub in op["anchor"]:
        anchor = (_first_nonempty(frame, anchor, sub, trace) if sub["op"] == "first_nonempty"
                  else _apply_filter(frame, anchor, sub, trace))
    if not len(anchor):
        trace.append("shift: the anchor kept no rows, so there is nothing before or after it")
        return anchor
    values = frame[op["group"]].to_numpy()
    times = frame["timestamp"].dt.tz_convert("UTC").dt.tz_localize(None).to_numpy()
    groups = list(pd.unique(values[pos[np.argsort(times[pos], kind="stable")]]))
    at = [groups.index(g) for g in pd.unique(values[anchor]) if g in groups]
    base = min(at) if op["start"] < 0 else max(at)
    lo, hi = max(base + op["start"], 0), min(base + op["end"], len(groups) - 1)
    if lo > hi:
        trace.append(f"shift {op['group']} {op['start']}..{op['end']}: no {op['group']} there")
    return pos[np.isin(values[pos], groups[lo:hi + 1])]


def execute(ops: list[dict], frame: pd.DataFrame, ranker: Ranker | None = None) -> Execution:
    """Apply a validated plan to ``frame`` (a conversation table's rows); rank ops need a ``ranker``.

    Filters are evaluated as pandas column predicates over the whole frame and intersected with the
    surviving row positions, so each op costs one vectorised comparison and the rows are taken once.
    """
    pos = np.arange(len(frame))  # surviving rows, as positions in result order
    out = Execution(frame)
    for op in ops:
        name, before = op["op"], pos
        if name in FILTER_OPS:
            pos = _apply_filter(frame, pos, op, out.trace)
        elif name == "first_nonempty":
            pos = _first_nonempty(frame, before, op, out.trace)
        elif name == "shift":
            pos = _shift(frame, pos, op, out.trace)
        elif name == "order":
            values = frame[op["by"]].iloc[pos]
            pos = pos[np.argsort(values.to_numpy(), kind="stable")]
            pos = pos if op.get("ascending", True) else pos[::-1]
        elif name == "head":
            pos = pos[:op["n"]]
        elif name == "count":
            out.counts[op["by"]] = frame[op["by"]].iloc[pos].value_counts(sort=False).sort_index().to_dict()
        elif name == "rank":
            pos = _rank(frame, pos, op, ranker, out)
        else:
            raise ValueError(f"unknown op {name!r}")
        if op.get("soft") and len(pos) == 0 and len(before):
            out.trace.append(f"skipped soft {json.dumps(op, default=str)}: it would leave no rows")
            pos = before
        out.trace.append(f"{name}: {len(before)} -> {len(pos)} rows")
    out.rows = frame.iloc[pos]
    return out


def _rank(frame: pd.DataFrame, pos: np.ndarray, op: dict, ranker: Ranker | None, out: Execution) -> np.ndarray:
    if ranker is None:
        raise ValueError("the plan ranks rows but no ranker was given")
    ids = frame.index[pos].tolist()
    extra = {}
    if "prefer" in op:
        match = frame[op["prefer"]["column"]].iloc[pos].to_numpy() == op["prefer"]["value"]
        extra["prefer"] = [i for i, m in zip(ids, match) if m]
    if op.get("margin") is not None:
        extra["margin"] = op["margin"]
    hits = ranker(op["query"], op["k"], ids, **extra) if len(pos) else []
    out.scores = {i: s for i, s in hits}
    return frame.index.get_indexer([i for i, _ in hits])
