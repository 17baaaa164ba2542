"""When what an utterance talks about happened: its own time expressions resolved against its timestamp.

"I went to a LGBTQ support group yesterday", said on 8 May 2023, happened on 7 May 2023. Every utterance of a
conversation table gets an event-time interval at ingest (:func:`event_columns`), read by the time grammar
(:mod:`retrieval.timex`) with the memory's utterance conventions (:data:`retrieval.timex.UTTERANCE`), "now" being
the utterance's own timestamp and the lean its own tense: a plan ("the dentist is on the 14th", "we're moving next
March") reads forward, a story ("the race was on the 5th") back.

- An utterance with no time expression has **no** event time (not its timestamp): answers fall back to the
  timestamp themselves, and say so.
- An expression that cannot be placed leaves the text and no event time; the phrase is kept in ``event_note``
  ("unresolved: ...") and counted (:func:`event_counts`), as is a time word the grammar does not read at all.
  Vague phrases ("recently", "a while ago", "in the next few weeks") get no interval either (noted "vague"); "a few
  years ago" gets a fuzzy span, never a precise date ("a few": 2 to 5 units, "a couple": 2 to 3).
- A length ("for 4 years", "7 years now", "since 2016", "for a decade", "it's been 5 years since", "for the past few
  months") dates the start of what it
  measures in the length's unit (4 years back: that year) and keeps the length (``duration``).
- When an utterance holds several expressions, the first that resolves to an interval is its event time, except
  that a phrase naming the day it was said ("today", "this morning") gives way to any other, and a length ("for 2
  days") to any other but such a day ("we stayed for 2 days last week": last week, lasting 2 days).
- A time in a clause that denies its event ("he never showed on Thursday, then turned up Friday", "we didn't go on
  Monday but on Tuesday", "it was meant to be yesterday but I started today") gives way to one in a clause that does
  not; alone, it stands (it is still what the utterance is about), marked ``denied``.
- A game's score after a verb of scoring ("won 3-1 this morning", "drew 2-2 on Saturday") is no range of hours.
- A time of the day dates the day ("yesterday morning": yesterday). Granularity: day, week, weekend, month,
  season, year, fuzzy, or ``span`` for any other stretch.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import pandas as pd

from retrieval.memory.time_resolver import CUES, NARRATIVE_DAYS, VAGUE_CUES
from retrieval.timex import UTTERANCE, Context, Mention, read
from retrieval.timex import calendar as cal
from retrieval.timex import values as V

EVENT_COLUMNS = ("event_start", "event_end", "event_granularity", "event_phrase", "event_duration", "event_note")
SAME_DAY_KINDS = ("day", "today", "earlier_today", "now")  # phrases that name the day the utterance was said
LENGTH_KINDS = ("duration", "fuzzy_length")  # "for 2 days", "for the past few months": a length, a start only by it
GRAINS = {"day": "day", "week": "week", "weekend": "weekend", "month": "month", "season": "season", "year": "year",
          "hour": "day", "minute": "day", "second": "day", "part_of_day": "day"}
# A length's words around a duration: "for 4 years", "going on three years", "been married eleven years" (a state
# after "been"), "4 years now", "ten years in and still going", "been vegan for a couple of years"; the words that
# hedge a length ("about", "well over", "the best part of", "like") leave it as stated
_HEDGES = ("about", "around", "over", "almost", "nearly", "roughly", "approximately", "like", "close to",
           "more than", "less than", "under", "just", "just over", "just under", "well over", "a little over",
           "a bit over", "the best part of", "the better part of")
_HEDGE = "|".join(h.replace(" ", r"\s+") for h in sorted(_HEDGES, key=len, reverse=True))
_ABOUT = rf"(?:(?:{_HEDGE})\s+)?"
_FOR = re.compile(rf"\b(?:for\s+{_ABOUT}(?:the\s+(?:last|past)\s+)?|(?:going|coming\s+up)\s+on\s+{_ABOUT}"
                  rf"|been\s+(?!(?:{_HEDGE}|for|in)\b)[a-z]+\s+{_ABOUT})$")
_NOW = re.compile(r"^\s*(?:now|already|and\s+counting|so\s+far|in(?=\s*(?:$|[,.!?;:]|and\b|now\b|already\b)))\b")
_GAP = re.compile(r"\b(?:in|been|for)\s+$")  # "we haven't spoken in a few weeks": a gap, no anchor
# "it's been 5 years since I moved here": a length up to the day it was said, its start the event after "since"
_BEEN = re.compile(rf"\bbeen\s+{_ABOUT}$")
_SINCE = re.compile(r"^\s*since\b")
# a game's score after a verb of scoring ("won 3-1 this morning", "we drew 2-2 on saturday"): no range of hours
_SCORE = re.compile(r"(?i)\b((?:won|lost|drew|draw|beat|beaten|tied|scored?|finished|ended)"
                    r"(?:\s+(?:it|us|them|him|her))?\s+)\d{1,2}\s*[-\u2013]\s*\d{1,2}\b(?!\s*(?:am|pm|a\.m|p\.m|:|o'?clock))")
# a clause's start (a phrase's clause runs from the last of these before it) and the words that deny its event
_CLAUSE_START = re.compile(r"[,;:.!?]|\b(?:then|but|and|so|while|because|though)\b")
_DENIED = re.compile(r"\b(?:never|not|didn'?t|don'?t|doesn'?t|won'?t|wasn'?t|weren'?t|isn'?t|aren'?t|can'?t|"
                     r"couldn'?t|wouldn'?t|haven'?t|hasn'?t|hadn'?t|cannot|"
                     r"(?:was|were)\s+(?:meant|supposed|going)\s+to)\b")  # a plan that did not happen as told


def _denied(norm: str, start: int) -> bool:
    """Whether the clause a phrase starting at ``start`` of ``norm`` stands in denies its event before it ("he never
    showed on thursday")."""
    clause = norm[max((m.end() for m in _CLAUSE_START.finditer(norm, 0, start)), default=0):start]
    return _DENIED.search(clause) is not None


@dataclass(frozen=True)
class EventTime:
    """An interval ``[start, end)`` (tz-aware), its granularity, the phrase that gave it and, for a length, the
    duration ``(low, high, unit)``."""

    start: datetime
    end: datetime
    granularity: str
    phrase: str
    kind: str
    duration: tuple[float, float, str] | None = None
    note: str | None = None


@dataclass
class EventReading:
    """What an utterance says about its time: the event time (or None), and the phrases left without one."""

    time: EventTime | None
    unresolved: list[str] = field(default_factory=list)
    vague: list[str] = field(default_factory=list)
    denied: bool = False  # the time stands in a clause that denies its event (the only time there was)

    @property
    def note(self) -> str | None:
        parts = [f"unresolved: {u}" for u in self.unresolved] + [f"vague: {v}" for v in self.vague]
        if self.time is not None and self.time.note:
            parts.append(self.time.note)
        return "; ".join(parts) or None


# Texts in which nothing was read: whether the grammar reads anything does not depend on the day the text was
# said, so such a text (most utterances; every repeat of one in a long log) is not read again. Bounded.
_TIMELESS: dict[str, None] = {}
TIMELESS_MAX = 200_000


def read_event_time(text: str, said_at: datetime) -> EventReading:
    """The event time of ``text`` said at ``said_at`` (tz-aware): see the module's conventions."""
    if said_at.tzinfo is None:
        raise ValueError("an utterance's timestamp must be time-zone aware to resolve its time expressions")
    if text in _TIMELESS:
        return EventReading(None)
    norm, read_mentions = mention_events(text, said_at)
    result, timed = EventReading(None), list[EventTime]()
    denied: list[bool] = []  # whether each of timed stands in a clause that denies its event
    taken = [False] * len(norm)
    last_end = -1  # where the phrase of timed[-1] ends
    for m, found in read_mentions:
        taken[m.span[0]:m.span[1]] = [True] * (m.span[1] - m.span[0])
        if isinstance(found, EventTime) and timed and _next_day_joined(norm[last_end:m.span[0]], timed[-1], found):
            timed[-1] = EventTime(timed[-1].start, found.end, "span", f"{timed[-1].phrase} and {found.phrase}",
                                  "days")
        elif isinstance(found, EventTime):
            timed.append(found)
            denied.append(_denied(norm, m.span[0]))
        if isinstance(found, EventTime):
            last_end = m.span[1]
        elif found == "vague":
            result.vague.append(m.text)
        elif found:
            result.unresolved.append(found)
    for cue in CUES.finditer(norm):
        if not any(taken[cue.start():cue.end()]) and cue.group(0) not in VAGUE_CUES:
            result.unresolved.append(f"{cue.group(0)!r} (no rule resolves the time word {cue.group(0)!r})")
    if not read_mentions and not result.unresolved and len(_TIMELESS) < TIMELESS_MAX:
        _TIMELESS[text] = None
    if timed:
        told = [e for e, no in zip(timed, denied) if not no] or timed  # a time whose event is denied gives way
        result.denied = all(denied)
        best = next((e for e in told if e.kind not in SAME_DAY_KINDS + LENGTH_KINDS),
                    next((e for e in told if e.kind not in SAME_DAY_KINDS), told[0]))
        length = next((e.duration for e in [best] + timed if e.duration), None)
        result.time = EventTime(best.start, best.end, best.granularity, best.phrase, best.kind, length, best.note)
    return result


_AND = re.compile(r"\s*(?:,\s*)?(?:and|&)\s*")


def _next_day_joined(between: str, last: EventTime, found: EventTime) -> bool:
    """Whether ``found`` is the day after ``last``, the time read just before it, joined to it by "and" (``between``:
    the text between the two phrases): "today and tomorrow", "Saturday and Sunday", one stretch of two days."""
    return (last.granularity == found.granularity == "day" and last.end == found.start
            and _AND.fullmatch(between) is not None)


def mention_events(text: str, said_at: datetime, lean: str | None = None
                   ) -> tuple[str, list[tuple[Mention, EventTime | str | None]]]:
    """``text`` as the grammar normalised it (the mentions' spans index it) and each time phrase it reads, with what
    the phrase says of the event's time under the conventions above: an :class:`EventTime`, "vague", the reason it
    has none, or None. ``lean`` ("past", "future") places every phrase on that side instead of its sentence's."""
    reading = read(_SCORE.sub(r"\1scoreline", text), Context(said_at, lean=lean, conventions=UTTERANCE))
    return reading.normalised, [(m, _event(m, reading.normalised, said_at)) for m in reading.mentions]


def _units_back(said: datetime, unit: str, n: int) -> tuple[datetime, datetime]:
    """The ``unit`` ``n`` units before the day ``said`` (a week: the 7 days ``[D-7n, D-7n+7)``)."""
    day = cal.floor(said.replace(tzinfo=None), "day")
    if unit == "day":
        start = day - timedelta(days=n)
        return start, start + timedelta(days=1)
    if unit == "week":
        start = day - timedelta(days=7 * n)
        return start, start + timedelta(days=7)
    return cal.unit(day, unit, -n)


def _aware(span: tuple[datetime, datetime], said: datetime) -> tuple[datetime, datetime]:
    return span[0].replace(tzinfo=said.tzinfo), span[1].replace(tzinfo=said.tzinfo)


def _event(m: Mention, norm: str, said: datetime) -> EventTime | str | None:
    """A mention as an event time; "vague"; the reason it has none; or None (nothing to say)."""
    v, before, after = m.value, norm[:m.span[0]], norm[m.span[1]:]
    if isinstance(v, V.Vague):
        return "vague"
    if isinstance(v, V.Duration):
        return _length(m, v, before, after, said)
    if isinstance(v, (V.SessionRef, V.Now)):
        return None  # "now", "currently": the moment it was said, which the timestamp already is
    if isinstance(v, V.Anaphor) or NARRATIVE_DAYS.match(m.text):
        return f"{m.text!r} (refers to a time named before it)"
    duration = getattr(v, "duration", None)  # a shift's, a window's or a vague phrase's
    if isinstance(duration, V.Duration) and duration.fuzzy:
        return _fuzzy(m, v, duration.parts[0][0], duration.fuzzy, said)
    if m.interval is None or not isinstance(v, V.Time):  # only a time is placed
        return m.unresolved or f"{m.text!r} (could not be placed)"
    start, end = m.interval
    grain = _granularity(v, m)
    kind = _event_kind(v)
    if grain == "day" and end - start < timedelta(days=1):  # a time of the day dates the day
        start = start.replace(hour=0, minute=0, second=0, microsecond=0)
        end = start + timedelta(days=1)
    if isinstance(v, V.Bound) and v.prep in ("by", "until") and V.grain_of(v.base) in ("day", "week", "month"):
        return _deadline(m, v, end, said)
    if isinstance(v, V.Bound) and v.prep == "since" and grain == "span":
        base = GRAINS.get(V.grain_of(v.base), "span")
        return _since(m, base, start, said) or EventTime(start, end, grain, m.text, kind)
    return EventTime(start, end, grain, m.text, kind)


# What "since X" measures its length in, by X's granularity, and how long X itself is in that unit.
_SINCE_UNITS = {"year": ("year", 1), "season": ("month", 3), "month": ("month", 1), "week": ("week", 1),
                "weekend": ("day", 2), "day": ("day", 1)}


def _since(m: Mention, base: str, start: datetime, said: datetime) -> EventTime | None:
    """"since 2016", "since January", "since last summer", "since Monday": dated by the time it starts from (that
    year, month, season, week or day), with the length from it up to when it was said, in its unit."""
    if base not in _SINCE_UNITS:
        return None
    unit, size = _SINCE_UNITS[base]
    if unit == "year":
        n, end = said.year - start.year, start.replace(year=start.year + 1)
    elif unit == "month":
        n, end = (said.year - start.year) * 12 + said.month - start.month, cal.add_months(start, size)
    else:
        days = (said.date() - start.date()).days
        n, end = days // (7 if unit == "week" else 1), start + timedelta(days=7 * size if unit == "week" else size)
    return EventTime(start, end, base, m.text, "duration", (n, n, unit))


def _deadline(m: Mention, v: V.Bound, end: datetime, said: datetime) -> EventTime:
    """"Due by Friday", "you have until the 30th": what is dated is the deadline, the bound's last day, week or
    month (the last day of "the end of the month"), not everything before it."""
    unit = "day" if isinstance(v.base, V.Part) and v.base.part == "end" else V.grain_of(v.base)
    last = end - timedelta(microseconds=1)
    if unit == "month":
        start = last.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    else:
        start = (end - timedelta(days=1 if unit == "day" else 7)).replace(hour=0, minute=0, second=0, microsecond=0)
    return EventTime(start, end, unit, m.text, "deadline", note=f"{m.text!r}: a deadline, dated by its last {unit}")


def _granularity(v: V.Time, m: Mention) -> str:
    if isinstance(v, V.Part) and v.part in ("earlier", "later", "rest"):
        return GRAINS.get(V.grain_of(v.base), "span")
    return GRAINS.get(m.grain or "", "span")


def _event_kind(v: V.Time) -> str:
    if isinstance(v, V.Relative) and v.grain == "day" and v.offset == 0:
        return "day"
    if isinstance(v, V.Part) and v.part == "earlier" and isinstance(v.base, V.Relative) and v.base.grain == "day":
        return "earlier_today"
    if isinstance(v, V.Within) and isinstance(v.coarse, V.Relative) and v.coarse.grain == "day" and \
            v.coarse.offset == 0:
        return "today"
    return v.kind


def _length(m: Mention, d: V.Duration, before: str, after: str, said: datetime) -> EventTime | str | None:
    """"for 4 years", "7 years now": the start, that many units back, and the length; a gap without an anchor
    ("in a few weeks", "been a couple of days") is vague; any other bare length says nothing of when."""
    unit, n = d.parts[0]
    fuzzy = d.fuzzy
    if unit == "decade":  # "for a decade", "a couple of decades now": in years
        unit, n, fuzzy = "year", 10 * n, fuzzy and (10 * fuzzy[0], 10 * fuzzy[1])
    if len(d.parts) != 1 or unit not in ("day", "week", "month", "year"):
        return None
    low, high = fuzzy or (int(n), int(n))
    # "it's been 5 years since": a length; "it's been a couple of days since we chatted" stays a vague gap
    lead = _FOR.search(before) or (_BEEN.search(before) if _SINCE.match(after) and not fuzzy else None)
    trail = _NOW.match(after)
    if lead or trail:
        phrase = (lead.group(0) if lead else "") + m.text + (trail.group(0) if trail else "")
        if fuzzy:
            first = _units_back(said, unit, high)[0]
            last = cal.floor(said.replace(tzinfo=None), "day")
            return EventTime(*_aware((first, last), said), "fuzzy", phrase, "fuzzy_length", (low, high, unit),
                             note=f"{phrase!r}: a length of {low} to {high} {unit}s up to the day it was said")
        whole, grain, back = _counted(unit, n)
        if back is None:
            return None
        return EventTime(*_aware(_units_back(said, grain, back), said), grain, phrase, "duration",
                         (whole, whole, unit))
    if fuzzy and _GAP.search(before):
        return "vague"
    return None


_FINER = {"year": ("month", 12), "month": ("day", 30.4375), "week": ("day", 7)}


def _counted(unit: str, n: float) -> tuple[float, str, int | None]:
    """A stated length ``n`` ``unit``s as (the length, the grain its start is counted back in, how many of that
    grain): whole lengths in their own unit; a fraction ("two and a half years", "half a year") in the next finer
    one (30 months, 6 months; a month and a half: 46 days); half a day, none."""
    if n == int(n):
        return int(n), unit, int(n)
    finer = _FINER.get(unit)
    if finer is None:
        return n, unit, None
    return n, finer[0], round(n * finer[1])


def _fuzzy(m: Mention, v: object, unit: str, fuzzy: tuple[int, int], said: datetime) -> EventTime | str:
    """"a few years ago" (``fuzzy`` (low, high) counts of ``unit``): 2 to 5 years before the day it was said,
    granularity fuzzy; ahead ("in the next few weeks") it is a plan, vague."""
    low, high = fuzzy
    sign = getattr(v, "sign", -1)  # a shift's or a window's direction; a vague phrase's is back
    if sign > 0 or unit not in ("day", "week", "month", "year"):
        return "vague"
    if isinstance(v, V.Window):  # "over the last few months": a length up to the day
        first = _units_back(said, unit, high)[0]
        return EventTime(*_aware((first, cal.floor(said.replace(tzinfo=None), "day")), said), "fuzzy", m.text,
                         "fuzzy_length", (low, high, unit),
                         note=f"{m.text!r}: a length of {low} to {high} {unit}s up to the day it was said")
    first, _ = _units_back(said, unit, high)
    _, last = _units_back(said, unit, low)
    return EventTime(*_aware((first, last), said), "fuzzy", m.text, "fuzzy", (low, high, unit),
                     note=f"{m.text!r}: {low} to {high} {unit}s before the day it was said, not a precise date")


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
