"""The time expressions of a question, read by the time grammar (:mod:`retrieval.timex`) against an explicit "now",
as the memory plans with them: calendar intervals, session references, soft hours and the readings to fall back on.

A question about a conversation looks back over what was said: it is read leaning to the past, with the memory's
conventions (:data:`retrieval.timex.QUESTION`: "last Friday" the latest Friday before today, "over the last 3 days"
today and the 3 days before it, "5 months ago" that calendar month, parts of the day wide). What the memory adds to
the grammar's reading (:func:`expressions`):

- a single named day carries the days either side of it (``nearby_intervals``), a reading tried when the day holds
  no rows (a day misremembered by one); "N days ago" also carries N x 24 hours back from now
  (``alternative_intervals``: someone who talked late on the 13th may call it "38 days ago" on the 22nd of the next
  month at 11:00);
- a weekday carries its name ("last Friday", else our last Friday: the plan's fallback);
- a part of the day is its day with soft hours ("this morning", "the evening of June 2": rows outside them are kept
  when none is inside), and so is a clock time, with an hour either side ("around 3 pm yesterday": 14:00 to
  17:00); "earlier today / this morning" is today before the latest session;
- session and message references become positions, ids and shifts relative to an anchor expression;
- what cannot be placed stays, with the reason, never guessed: a phrase the grammar cannot place ("February 30"), a
  vague one ("a few weeks back", "recently"), a time after now, a reference back to an earlier turn ("then", "that
  week"), and any time word the grammar did not read at all.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from retrieval.timex import QUESTION, Context, Conventions, Mention, normalise, read
from retrieval.timex import series as S
from retrieval.timex import values as V
from retrieval.timex.lexicon import MONTHS, WEEKDAYS
from retrieval.timex.reader import place_value
from retrieval.timex.rules.parts import part_name, weekday_of
from retrieval.timex.tense import lean_cue

__all__ = ["OPEN_START", "TimeExpression", "TimeResolver", "compose", "expressions", "normalise"]

# The start of an open range ("before May 8"): in UTC, as a zone's offset that long ago is its local mean time
# (Paris: +00:09:21), whose ISO 8601 text (seconds in the offset) pandas cannot read.
OPEN_START = datetime(1900, 1, 1, tzinfo=timezone.utc)

# Words that say a phrase is about time: one that no rule reads is reported, not dropped. A bare unit noun ("how
# many sessions", "what day") is a time reference only after a quantity ("a few weeks", "those days").
_CUE_MONTHS = "|".join(m for m in MONTHS if len(m) > 3 and m not in ("may", "march"))
CUES = re.compile(r"\b(?:\d+\s+\w+\s+ago|ago|yesterday|tomorrow|tonight|weekends?|mornings?|afternoons?|"
                  r"evenings?|(?:(?:a\s+)?(?:few|couple(?:\s+of)?|several|some|those|these|\d+)\s+(?:\w+\s+)?)"
                  r"(?:weeks?|months?|years?|days?|sessions?)|recently|lately|earlier|next|"
                  rf"{'|'.join(WEEKDAYS)}|{_CUE_MONTHS})\b")
# Cue words that name no period of their own ("what had she recently taken up"): beside a time the question does
# read, they belong to what it asks about, not to when.
VAGUE_CUES = frozenset({"recently", "lately", "earlier", "next", "ago"})
# Phrases whose day is another event's ("we left the next day"): references back, not days after now.
NARRATIVE_DAYS = re.compile(r"^the\s+(?:next|following)\s+(?:day|week|weekend|month)$|"
                            r"^the\s+(?:day|weekend|month|year)\s+(?:after|before)$|^the\s+week\s+after$")


@dataclass
class TimeExpression:
    """One resolved (or unresolvable) time expression of a question.

    ``intervals``: [start, end) pairs, tz-aware; ``session_positions``: (first, last), 1-based, negative from
    the end, inclusive; ``note``: how the phrase was read when that is not its plain reading; ``session_ids``:
    (first, last) values of the session column, inclusive; ``response_ids``: the same for the response index
    ("in response number 26"); ``hours``: a soft [lo, hi) hour range (a part of the day); ``before_latest_session``:
    drop the latest session (soft); ``alternative_intervals``: a second reading, used when ``intervals`` select no
    rows; ``nearby_intervals``: for one named day, the days either side of it, the last reading; ``anchor`` and
    ``session_shift``: the sessions at positions (first, last) relative to the anchor's sessions; ``anaphor``: what
    an unresolved "then" / "that week" / "the session after that" refers back to; ``choices``: the readings the
    grammar chose, with their reasons; ``value``: the grammar's value (what a reference back carries).
    """

    text: str
    span: tuple[int, int]
    kind: str
    intervals: list[tuple[datetime, datetime]] | None = None
    session_positions: tuple[int, int] | None = None
    session_ids: tuple[int, int] | None = None
    response_ids: tuple[int, int] | None = None
    hours: tuple[int, int] | None = None
    before_latest_session: bool = False
    alternative_intervals: list[tuple[datetime, datetime]] | None = None
    nearby_intervals: list[tuple[datetime, datetime]] | None = None
    weekday: str | None = None
    unresolved: str | None = None
    note: str | None = None
    anchor: TimeExpression | None = None
    session_shift: tuple[int, int] | None = None
    anaphor: str | None = None
    grain: str | None = None
    choices: tuple[str, ...] = ()
    value: object = None

    def to_dict(self) -> dict:
        d = {k: v for k, v in asdict(self).items()
             if v not in (None, False, ()) and k not in ("anchor", "value", "span")}
        for key in ("intervals", "alternative_intervals", "nearby_intervals"):
            if d.get(key):
                d[key] = [[a.isoformat(), b.isoformat()] for a, b in d[key]]
        if self.choices:
            d["choices"] = list(self.choices)
        if self.anchor is not None:
            d["anchor"] = self.anchor.to_dict()
        return d


class TimeResolver:
    """Reads the time expressions of a question against ``now`` (tz-aware), leaning to the past (or ``lean``: a
    question about a plan, :func:`question_lean`), with the memory's conventions (or ``conventions``)."""

    def __init__(self, now: datetime, conventions: Conventions = QUESTION, lean: str = "past"):
        if now.tzinfo is None:
            raise ValueError("now must be time-zone aware; localise it with the log's time zone")
        self.now, self.conventions, self.lean = now, conventions, lean

    def context(self) -> Context:
        return Context(self.now, lean=self.lean, conventions=self.conventions)

    def resolve(self, text: str) -> list[TimeExpression]:
        """Every time expression in ``text``, in order; unresolvable temporal phrases have ``unresolved`` set."""
        return expressions(text, self.context())


def question_lean(question: str) -> str:
    """"future" for a question whose own tense is about a plan ("when are we going to her parents for Easter?",
    "what will we do on Friday?": :func:`retrieval.timex.tense.lean_of`), so its bare names are read forward; else
    "past": a question about a conversation looks back. A bare "'s" is no cue here: in a question it is mostly a
    possessive ("on St. Patrick's Day", "Maya's birthday"), and reading a name forward by mistake loses the period;
    nor is an infinitive: in a question it is a purpose or what someone did ("what yoga was she trying to stay
    fit?"), not the question's own tense."""
    lean, words, kind = lean_cue(question.strip().rstrip("?!. "))
    return "future" if lean == "future" and words != "'s" and kind != "infinitive" else "past"


_DATED_SESSION = re.compile(r"^(?:the|our)\s+(?:1|ones?|sessions?|discussions?|conversations?|chats?|talks?|meetings?)"
                            r"\s+(?=on\b|of\b)")
_ASKED = re.compile(r"\b(?:what|which)\s+$")  # the time word a question asks for: "what weekend was ...?"
_FREQUENCY = re.compile(r"\b(?:every|each|once|twice|\d+\s+times)\s+(?:(?:a|an|per|other|single)\s+)?$")
_PREPOSITION = re.compile(r"\b(?:on|in|during|over|at|throughout|around|roughly|approximately|circa|"
                          r"sometime\s+in|some\s+time\s+in)\s+$")


def expressions(text: str, context: Context) -> list[TimeExpression]:
    """The memory's reading of the time expressions of ``text`` (see the module's docstring); a time's text takes
    the preposition before it ("on october 13th"), as the rewrite that carries it needs."""
    reading = read(text, context)
    norm = reading.normalised
    found = [to_expression(m, context) for m in reading.mentions]
    for e in found:
        dated = _DATED_SESSION.match(e.text)  # "the conversation on May 8": the day, as the question names it
        if dated is not None and e.intervals:
            e.span = (e.span[0] + dated.end(), e.span[1])
            e.text = norm[e.span[0]:e.span[1]]
        prep = _PREPOSITION.search(norm, 0, e.span[0])
        if e.intervals and prep is not None and not re.match(r"(?:on|in|during|over|at|from|between|since|around)\b",
                                                             e.text):
            e.span = (prep.start(), e.span[1])
            e.text = norm[e.span[0]:e.span[1]]
    for i, e in enumerate(found):  # "on October 13th and the weekend after": counted from the time just before
        anchor = next((a for a in reversed(found[:i]) if a.intervals), None)
        if anchor is not None and anchor.intervals and e.intervals is None and NARRATIVE_DAYS.match(e.text):
            period = narrative_period(e.text, anchor.intervals)
            if period[0] > context.reference:
                e.unresolved = f"{e.text!r} (counted from {anchor.text!r}) lies after now"
                continue
            e.intervals, e.kind, e.unresolved = [period], "narrative", None
            e.note = f"{e.text!r} counted from {anchor.text!r}"
    taken = [False] * len(norm)
    for e in found:
        taken[e.span[0]:e.span[1]] = [True] * (e.span[1] - e.span[0])
    for m in CUES.finditer(norm):  # a time word no rule read, unless it is what the question asks ("what weekend")
        if not any(taken[m.start():m.end()]) and not _ASKED.search(norm, 0, m.start()):
            found.append(TimeExpression(m.group(0), m.span(), "unresolved",
                                        unresolved=f"no rule resolves the time word {m.group(0)!r}"))
    for e in found:  # "every couple of months", "once a week": how often, not when
        if e.kind == "unresolved" and _FREQUENCY.search(norm, 0, e.span[0]):
            e.kind, e.unresolved = "frequency", f"{e.text!r} says how often, not when"
    return sorted(found, key=lambda x: x.span)


def narrative_period(text: str, anchor: list[tuple[datetime, datetime]]) -> tuple[datetime, datetime]:
    """The period of a :data:`NARRATIVE_DAYS` phrase counted from an anchor's [start, end): the day, the
    Monday-to-Sunday week, the Saturday-Sunday weekend, the calendar month after its end or before its start."""
    start, end = min(a for a, _ in anchor), max(b for _, b in anchor)
    unit = re.findall(r"day|weekend|week|month|year", text)[0]
    after = "before" not in text
    edge = end if after else start
    day = datetime.combine((edge if after else edge - timedelta(microseconds=1)).date(), datetime.min.time(),
                           tzinfo=edge.tzinfo)
    if unit == "day":
        return day, day + timedelta(days=1)
    if unit in ("week", "weekend"):
        first = 0 if unit == "week" else 5  # Monday, Saturday
        shift = (first - day.weekday()) % 7 if after else -((day.weekday() - first) % 7)
        begin = day + timedelta(days=shift)
        if not after and unit == "week":
            begin -= timedelta(days=7)
        return begin, begin + timedelta(days=7 if unit == "week" else 2)
    if unit == "month":
        first_day = day.replace(day=1)
        if after and first_day < day:
            first_day = (first_day + timedelta(days=32)).replace(day=1)
        begin = first_day if after else (start.replace(day=1) - timedelta(days=1)).replace(day=1, hour=0, minute=0,
                                                                                        second=0, microsecond=0)
        return begin, (begin + timedelta(days=32)).replace(day=1)
    year = (day.year if (day.month, day.day) == (1, 1) else day.year + 1) if after else day.year - 1
    return day.replace(year=year, month=1, day=1), day.replace(year=year + 1, month=1, day=1)


def _day(now: datetime, d) -> tuple[datetime, datetime]:
    start = datetime.combine(d, datetime.min.time(), tzinfo=now.tzinfo)
    return start, start + timedelta(days=1)


def _open(t: datetime) -> datetime:
    return OPEN_START if t.replace(tzinfo=None) <= datetime(1900, 1, 1) else t


def to_expression(m: Mention, context: Context) -> TimeExpression:
    """One grammar mention as the memory's expression (what it does not read, a bare length, comes back
    unresolved)."""
    now, v = context.reference, m.value
    base: dict[str, Any] = dict(text=m.text, span=m.span, choices=tuple(c.text() for c in m.choices), value=v)
    if isinstance(v, V.SessionRef):
        return session_expression(m, v, context, base)
    if NARRATIVE_DAYS.match(m.text):
        return TimeExpression(**base, kind="unresolved", unresolved=f"{m.text!r} counts from a time named before it")
    if isinstance(v, V.Anaphor):
        return TimeExpression(**base, kind="anaphor", anaphor=v.refers,
                              unresolved=f"{m.text!r} refers to a time named in an earlier turn, and no earlier turn "
                                         "names one")
    if isinstance(v, V.Vague) or isinstance(v, V.Duration):
        return TimeExpression(**base, kind="unresolved", unresolved=f"no rule resolves the time word {m.text!r}")
    if _fuzzy(v):
        return TimeExpression(**base, kind="unresolved", unresolved=f"{m.text!r} is vague: no precise period")
    if m.interval is None or not isinstance(v, V.Time):  # only a time is placed
        return TimeExpression(**base, kind=m.kind, unresolved=m.unresolved or f"could not read {m.text!r}")
    start, end = _open(m.interval[0]), m.interval[1]
    if start > now:
        return TimeExpression(**base, kind=v.kind, unresolved=f"{m.text!r} lies after now")
    e = TimeExpression(**base, kind=_kind(v), intervals=[(start, end)], grain=m.grain)
    _memory_readings(e, v, m, context, (start, end))
    return e


def _fuzzy(v: object) -> bool:
    d = getattr(v, "duration", None)
    return isinstance(d, V.Duration) and d.fuzzy is not None


def _kind(v: V.Time) -> str:
    if isinstance(v, V.Shifted) and isinstance(v.base, V.Now):
        return "relative_" + v.duration.finest if v.duration.finest in ("day", "week", "month", "year") else "relative"
    if isinstance(v, V.Relative):
        return {0: {"day": "day"}.get(v.grain, v.grain)}.get(v.offset, f"relative_{v.grain}")
    return v.kind


def _memory_readings(e: TimeExpression, v: V.Time, m: Mention, context: Context,
                     interval: tuple[datetime, datetime]) -> None:
    """What the memory adds to a time placed at ``interval``: the days beside a named day, elapsed time for "N days
    ago", the weekday's name, soft hours for a part of the day, and "before the latest session" for "earlier
    today"."""
    now = context.reference
    start, end = interval
    one_day = m.grain == "day" and end - start <= timedelta(days=1, hours=1)
    days_back = _days_back(v)
    if days_back is not None:
        e.alternative_intervals = [(now - timedelta(days=days_back + 1), now - timedelta(days=days_back))]
    if one_day and (days_back is not None or isinstance(v, (V.Recurring, V.Absolute, V.Checked, V.Shifted))) \
            and v.kind not in ("weekday",):
        d = start.date()
        e.nearby_intervals = [_day(now, d - timedelta(days=1)), _day(now, d + timedelta(days=1))]
    weekday = _weekday(v)
    if weekday is not None and one_day:
        e.weekday = WEEKDAYS[weekday].capitalize()
        e.kind = "weekday"
    if m.grain in ("hour", "minute", "second") and not isinstance(v, V.Now):
        # a clock time ("around 3 pm yesterday"): its day, and the hours about it as soft hours (rows then are
        # kept first; the whole day when none is)
        first = max(0, start.hour - 1)
        last = min(24, end.hour + (1 if (end.minute or end.second) else 0) + 1 if end.date() == start.date() else 24)
        e.intervals, e.hours, e.kind = [_day(now, start.date())], (first, max(last, first + 1)), "clock"
        return
    part = _part(v)
    if part is not None:  # the day, and the part as soft hours
        e.hours = context.conventions.hours(part.split()[-1])
        e.intervals = [_day(now, start.date())]
        e.kind = "today" if start.date() == now.date() else "part_of_day"
    if isinstance(v, V.Part) and v.part == "earlier" and _is_today(v.base):
        e.kind, e.before_latest_session = "earlier_today", True
        e.intervals = [_day(now, now.date())]
        inner = _part(v.base)
        e.hours = context.conventions.hours(inner.split()[-1]) if inner else None
    for c in m.choices:
        if c.what in ("range", "weekday") and ("later end first" in c.why or "does not match" in c.why):
            e.note = f"{m.text!r}: {c.why}"


def _days_back(v: V.Time) -> int | None:
    """N for "N days ago", "yesterday", "the day before yesterday"."""
    if isinstance(v, V.Shifted) and isinstance(v.base, V.Now) and v.sign < 0 and v.duration.parts == (
            ("day", v.duration.parts[0][1]),) and v.duration.parts[0][1] == int(v.duration.parts[0][1]):
        return int(v.duration.parts[0][1])
    if isinstance(v, V.Relative) and v.grain == "day" and v.offset < 0 and v.count == 1:
        return -v.offset
    return None


def _weekday(v: V.Time) -> int | None:
    return weekday_of(v)


def _part(v: V.Time) -> str | None:
    """The part of the day a time names, alone or on a day ("this morning", "the evening of June 2")."""
    name = part_name(v)
    if name:
        return name
    series = getattr(v, "fine", None) or getattr(v, "series", None)
    return _part_in(series) if series is not None else None


def _part_in(series) -> str | None:
    if isinstance(series, S.Daily) and series.grain == "part_of_day":
        return series.name
    if isinstance(series, S.Intersect):
        return _part_in(series.a) or _part_in(series.b)
    return None


def _is_today(v: V.Time) -> bool:
    """Whether a time is today, or a part of today ("earlier in the morning": this morning)."""
    if isinstance(v, V.Relative):
        return v.grain == "day" and v.offset == 0
    if isinstance(v, V.Recurring) and _part(v):
        return True
    if isinstance(v, V.Within):
        return _is_today(v.coarse)
    return False


def session_expression(m: Mention, v: V.SessionRef, context: Context, base: dict) -> TimeExpression:
    """A session or message reference; a shift carries its anchor, itself read as an expression."""
    e = TimeExpression(**base, kind=v.kind, session_positions=v.positions, session_ids=v.ids, response_ids=v.responses,
                       session_shift=v.shift)
    if v.anchor is None:
        return e
    anchor = _anchor_expression(v.anchor, m, context)
    if anchor is None or anchor.unresolved:
        e.unresolved = f"{m.text!r}: its anchor could not be read"
    e.anchor = anchor
    return e


def compose(value: V.Time, now: datetime, text: str, span: tuple[int, int],
            conventions: Conventions = QUESTION) -> TimeExpression:
    """A time composed from parts the grammar read elsewhere (the week of a day an earlier turn named), placed as a
    question's expression of ``text`` at ``span``."""
    context = Context(now, lean="past", conventions=conventions)
    placed = place_value(value, context, text)
    placed.span = span
    return to_expression(placed, context)


_ANCHOR_TEXT = re.compile(r"^.*?\b(?:before|after|following|preceding|prior\s+to|leading\s+up\s+to)\s+"
                          r"(?:(?:the\s+1|the\s+ones|ours|our\s+\w+|the\s+\w+|we\s+(?:\w+\s+)?\w+)\s+(?=on\b|of\b))?")


def _anchor_expression(value: object, m: Mention, context: Context) -> TimeExpression | None:
    """The anchor of a shift ("the session right before | the one on May 8"), read as an expression of its own;
    its text is what follows the shift's words."""
    text = _ANCHOR_TEXT.sub("", m.text)
    placed = place_value(value, context, text)
    placed.span = (m.span[1] - len(text), m.span[1])
    return to_expression(placed, context)
