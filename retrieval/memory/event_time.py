"""When what an utterance talks about happened: its own time expressions resolved against its timestamp.

"I went to a LGBTQ support group yesterday", said on 8 May 2023, happened on 7 May 2023. Every utterance of a
conversation table gets an event-time interval at ingest (:func:`event_columns`), with the time resolver the
questions use (:class:`~retrieval.memory.time_resolver.TimeResolver`), its rules preceded by the utterance-side
ones of :mod:`retrieval.memory.time_rules_events`, "now" being the utterance's own timestamp.

- An utterance with no time expression has **no** event time (not its timestamp): answers fall back to the
  timestamp themselves, and say so.
- An expression no rule resolves leaves the text and no event time; the phrase is kept in ``event_note``
  ("unresolved: ...") and counted (:func:`event_counts`). Vague phrases ("recently", "a while ago") get no
  interval either (noted "vague"); "a few years ago" gets a fuzzy span, never a precise date.
- When an utterance holds several expressions, the first that resolves to an interval is its event time, except
  that a phrase naming the day it was said ("today", "this morning") gives way to any other, and a length ("for 2
  days") to any other but such a day ("we stayed for 2 days last week": last week, lasting 2 days).
- Granularity: the rule's own (day, week, weekend, month, season, year, fuzzy), else read from the interval's
  shape (one day, seven days, a calendar month or year; any other length is a ``span``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import pandas as pd

from retrieval.memory.time_resolver import TimeExpression, TimeResolver
from retrieval.memory.time_rules import RULES
from retrieval.memory.time_rules_events import EVENT_RULES

EVENT_COLUMNS = ("event_start", "event_end", "event_granularity", "event_phrase", "event_duration", "event_note")
SAME_DAY_KINDS = ("day", "today", "earlier_today")  # phrases that name the day the utterance was said
LENGTH_KINDS = ("duration", "fuzzy_length")  # "for 2 days", "for the past few months": a length, a start only by it


@dataclass(frozen=True)
class EventTime:
    """An interval ``[start, end)`` (tz-aware), its granularity, the phrase that gave it and, for a length, the
    duration ``(low, high, unit)``."""

    start: datetime
    end: datetime
    granularity: str
    phrase: str
    kind: str
    duration: tuple[int, int, str] | None = None
    note: str | None = None


@dataclass
class EventReading:
    """What an utterance says about its time: the event time (or None), and the phrases left without one."""

    time: EventTime | None
    unresolved: list[str] = field(default_factory=list)
    vague: list[str] = field(default_factory=list)

    @property
    def note(self) -> str | None:
        parts = [f"unresolved: {u}" for u in self.unresolved] + [f"vague: {v}" for v in self.vague]
        if self.time is not None and self.time.note:
            parts.append(self.time.note)
        return "; ".join(parts) or None


def granularity_of(expr: TimeExpression, start: datetime, end: datetime) -> str:
    """The rule's granularity, else the interval's shape: day, week (7 days), month, year, or span."""
    if getattr(expr, "granularity", None):
        return expr.granularity
    days = (end.date() - start.date()).days
    if days == 1:
        return "day"
    if days == 7:
        return "week"
    if start.day == 1 and end.day == 1 and start.time() == end.time():
        months = (end.year - start.year) * 12 + end.month - start.month
        if months == 1:
            return "month"
        if months == 12 and start.month == 1:
            return "year"
    return "span"


def event_rules() -> list:
    """The utterance-side rules, then the question rules (read now: either list may have grown since import)."""
    return EVENT_RULES + RULES


# Texts in which no rule and no time word matches: whether a pattern matches does not depend on the day the text
# was said, so such a text (most utterances; every repeat of one in a long log) is not resolved again. Bounded.
_TIMELESS: dict[str, None] = {}
TIMELESS_MAX = 200_000


def read_event_time(text: str, said_at: datetime) -> EventReading:
    """The event time of ``text`` said at ``said_at`` (tz-aware): see the module's conventions."""
    if said_at.tzinfo is None:
        raise ValueError("an utterance's timestamp must be time-zone aware to resolve its time expressions")
    if text in _TIMELESS:
        return EventReading(None)
    expressions = TimeResolver(said_at, rules=event_rules()).resolve(text)
    if not expressions and len(_TIMELESS) < TIMELESS_MAX:
        _TIMELESS[text] = None
    reading = EventReading(None)
    timed: list[TimeExpression] = []
    for e in expressions:
        if e.unresolved:
            reading.unresolved.append(f"{e.text!r} ({e.unresolved})")
        elif e.kind == "vague":
            reading.vague.append(e.text)
        elif e.intervals:
            timed.append(e)
    if timed:
        best = next((e for e in timed if e.kind not in SAME_DAY_KINDS + LENGTH_KINDS),
                    next((e for e in timed if e.kind not in SAME_DAY_KINDS), timed[0]))
        length = next((e.duration for e in [best] + timed if getattr(e, "duration", None)), None)
        start, end = best.intervals[0][0], best.intervals[-1][1]
        reading.time = EventTime(start, end, granularity_of(best, start, end), best.text, best.kind, length,
                                 best.note)
    return reading


def event_columns(texts: Sequence[str], timestamps: Sequence[datetime]) -> dict[str, list]:
    """The event-time columns (:data:`EVENT_COLUMNS`) of utterances ``texts`` said at ``timestamps``."""
    cols: dict[str, list] = {c: [] for c in EVENT_COLUMNS}
    for text, ts in zip(texts, timestamps):
        reading = read_event_time(text, pd.Timestamp(ts).to_pydatetime())
        t = reading.time
        cols["event_start"].append(t.start if t else pd.NaT)
        cols["event_end"].append(t.end if t else pd.NaT)
        cols["event_granularity"].append(t.granularity if t else None)
        cols["event_phrase"].append(t.phrase if t else None)
        cols["event_duration"].append(t.duration if t else None)
        cols["event_note"].append(reading.note)
    tz = pd.Timestamp(timestamps[0]).tz if len(timestamps) else None
    for c in ("event_start", "event_end"):
        # a tz-aware column even when every value is NaT, so a memory's store keeps it as timestamps
        cols[c] = pd.DatetimeIndex(pd.to_datetime(cols[c], utc=True)).tz_convert(tz)
    return cols


def event_counts(frame: pd.DataFrame) -> dict[str, int]:
    """Rows with an event time, rows whose time phrase could not be resolved (and no event time), vague only."""
    has = frame["event_start"].notna()
    note = frame["event_note"].fillna("")
    return {"rows": len(frame), "with_event_time": int(has.sum()),
            "unresolved_no_event_time": int((~has & note.str.contains("unresolved: ")).sum()),
            "vague_only": int((~has & note.str.contains("vague: ") & ~note.str.contains("unresolved: ")).sum())}


def event_time_of(row: pd.Series) -> EventTime | None:
    """A table row's event time, or None."""
    if pd.isna(row.get("event_start")):
        return None
    return EventTime(row["event_start"].to_pydatetime(), row["event_end"].to_pydatetime(), row["event_granularity"],
                     row["event_phrase"], "stored", row.get("event_duration"))


def day_of(ts: datetime) -> tuple[datetime, datetime]:
    """The calendar day holding ``ts``, as ``[start, end)`` in its zone."""
    start = ts.replace(hour=0, minute=0, second=0, microsecond=0)
    return start, start + timedelta(days=1)
