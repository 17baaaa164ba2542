"""The time rules: each a compiled pattern beside the handler that turns its match into a :class:`TimeExpression`.

Rules are tried in the order they are defined here; a match that overlaps text an earlier rule took is
skipped, so the longer and more specific phrases come first ("the day before yesterday" before
"yesterday", "the last 3 sessions" before "the last session"). A handler may return an expression with
``unresolved`` set (a phrase it recognises but cannot place: "next Friday"), which still takes its text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import date, datetime, timedelta

from retrieval.memory.time_calendar import OPEN_START, Calendar, add_months
from retrieval.memory.time_patterns import (
    BARE_MONTH,
    DATE,
    DATED_SESSION,
    MON_Y,
    MONTHS,
    NUM,
    PARTS_OF_DAY,
    PREP,
    RESP,
    RESP_NUM,
    SESS,
    TO,
    WEEKDAYS,
    YR,
)


@dataclass
class TimeExpression:
    """One resolved (or unresolvable) time expression of a question.

    ``intervals``: [start, end) pairs, tz-aware; ``session_positions``: (first, last), 1-based, negative from
    the end, inclusive; ``note``: how the phrase was read when that is not its plain reading (a range whose ends
    come in reverse order); ``session_ids``: (first, last) values of the session column, inclusive;
    ``response_ids``: the same for the response index ("in response number 26"); ``hours``:
    a soft [lo, hi) hour range (a part of the day); ``before_latest_session``: drop the latest session (soft);
    ``alternative_intervals``: a second reading, used when ``intervals`` select no rows; ``nearby_intervals``:
    for one named day, the days either side of it, the last reading when neither of the others selects rows
    (a day misremembered by one: "on June 14th" of a conversation held on the 13th); ``anchor`` and
    ``session_shift``: the sessions at positions (first, last) relative to the anchor's sessions ((-1, -1) the
    one just before, (1, 2) the two after: "the session right before the one on May 8"); ``anaphor``: what an
    unresolved "then" / "that week" / "the session after that" refers back to (read from earlier turns,
    :func:`~retrieval.memory.query_rewrite.carry_time_reference`).
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

    def to_dict(self) -> dict:
        d = {k: v for k, v in asdict(self).items() if v not in (None, False) and k != "anchor"}
        for key in ("intervals", "alternative_intervals", "nearby_intervals"):
            if d.get(key):
                d[key] = [[a.isoformat(), b.isoformat()] for a, b in d[key]]
        if self.anchor is not None:
            d["anchor"] = self.anchor.to_dict()
        return d


Handler = Callable[[Calendar, re.Match], TimeExpression | None]
# (pattern, handler) in the order they are tried.
RULES: list[tuple[re.Pattern[str], Handler]] = []
_PRIORITIES: dict[int, list[int]] = {}  # id(registry) -> each registered rule's priority, beside it


def rule(*patterns: str, priority: int = 0, registry: list | None = None) -> Callable[[Handler], Handler]:
    """Registers the decorated handler for ``patterns`` in ``registry`` (default :data:`RULES`; the utterance-side
    rules of :mod:`~retrieval.memory.time_rules_events` keep their own, tried before these), to be tried after every
    rule registered before it with the same or a higher ``priority`` (composite phrases,
    :mod:`retrieval.memory.time_compose`, register with a higher one so that "Friday the 9th of June" is read whole
    before "Friday" or "the 9th of June" alone)."""
    target = RULES if registry is None else registry
    priorities = _PRIORITIES.setdefault(id(target), [])

    def register(handler: Handler) -> Handler:
        for p in patterns:
            at = next((i for i, q in enumerate(priorities) if q < priority), len(target))
            target.insert(at, (re.compile(p), handler))
            priorities.insert(at, priority)
        return handler
    return register


# ---- what handlers build with (text and span are filled in by the resolver) ----------------------------
def expr(kind: str, **kw) -> TimeExpression:
    return TimeExpression("", (0, 0), kind, **kw)


def _n(token: str) -> int:
    return 1 if token in ("a", "an") else int(token)


def with_prep(cal: Calendar, prep: str | None, kind: str, intervals) -> TimeExpression:
    """The interval bounded by a preposition: "since" runs it on to today, "before" / "until" / "by" back from it,
    "after" on from its end. A bound that leaves no time up to today ("after" today, "since" a later year) is
    unresolved, not an empty or backward range."""
    start, end = intervals[0]
    if prep == "since":
        intervals = [(start, cal.day_start(cal.today + timedelta(days=1)))]
    elif prep in ("before", "until", "till", "by"):
        intervals = [(OPEN_START, start if prep == "before" else end)]
    elif prep == "after":
        intervals = [(end, cal.day_start(cal.today + timedelta(days=1)))]
    kind = kind if not prep else f"{kind}_{prep}"
    if intervals[0][0] >= intervals[0][1]:
        return expr(kind, unresolved=f"{prep} {start.date().isoformat()} leaves no time up to today "
                                     f"({cal.today.isoformat()})")
    return expr(kind, intervals=intervals)


def days_ago(cal: Calendar, n: int) -> TimeExpression:
    """The calendar day ``n`` days back; else the 24 hours ending ``n`` days before now; else the days beside it."""
    d = cal.today - timedelta(days=n)
    elapsed = [(cal.now - timedelta(days=n + 1), cal.now - timedelta(days=n))]
    return expr("relative_day", intervals=cal.days(d, d), alternative_intervals=elapsed,
                nearby_intervals=cal.nearby(d))


def calendar_unit(cal: Calendar, unit: str, delta: int) -> TimeExpression:
    """This (``delta`` 0) or an earlier calendar month or year."""
    if unit == "year":
        return expr("year" if delta == 0 else "relative_year", intervals=cal.year(cal.today.year + delta))
    y, mo = add_months(cal.today.year, cal.today.month, delta)
    return expr("month" if delta == 0 else "relative_month", intervals=cal.month(y, mo))


# ---- the rules, in the order they are tried -------------------------------------------------------------
def reversed_note(phrase: str, first: date, last: date) -> str:
    return f"{phrase.strip()!r} names its later end first: read as {first.isoformat()} to {last.isoformat()}"


@rule(rf"\b(?:between|from|over)?\s*{DATED_SESSION}({DATE})\s+(?:up\s+)?{TO}\s+{DATED_SESSION}({DATE})")
def date_span(cal: Calendar, m: re.Match) -> TimeExpression:
    """Two dates: the days from the first to the second. A first date without a year is the latest one up to the
    second ("December 20th to January 3rd" crosses the year), unless the shorter reading is that the ends come in
    reverse order ("between June 5 and June 1": June 1 to 5), which is noted, as are ends with years reversed."""
    last = cal.parse_date(m.group(2))
    first = cal.parse_date(m.group(1), not_after=last) if last else None
    if first is None or last is None:
        return expr("date_span", unresolved=f"could not read the dates of {m.group(0).strip()!r}")
    same_year = cal.parse_date(m.group(1), not_after=date(last.year, 12, 31))
    if (first <= last and same_year is not None and last < same_year <= cal.today
            and same_year - last < last - first):  # the reversed reading, only for a day that has come
        first = same_year
    if first > last:
        return expr("date_span", intervals=cal.days(last, first), note=reversed_note(m.group(0), last, first))
    return expr("date_span", intervals=cal.days(first, last))


@rule(rf"\b(?:between|from)\s+({MON_Y})\s+{TO}\s+({MON_Y})\b")
def month_span(cal: Calendar, m: re.Match) -> TimeExpression:
    """Two months: from the first to the end of the second, read as :func:`date_span` reads days."""
    y2, m2 = cal.month_of(m.group(2))
    y1, m1 = cal.month_of(m.group(1), not_after=date(y2, m2, 28))
    same_year = cal.month_of(m.group(1), not_after=date(y2, 12, 28))
    later, across = same_year[0] * 12 + same_year[1] - (y2 * 12 + m2), y2 * 12 + m2 - (y1 * 12 + m1)
    if (y1, m1) <= (y2, m2) and 0 < later < across:
        y1, m1 = same_year
    note = None
    if (y1, m1) > (y2, m2):  # the ends in reverse order
        (y1, m1), (y2, m2) = (y2, m2), (y1, m1)
        note = reversed_note(m.group(0), date(y1, m1, 1), date(*add_months(y2, m2, 1), 1) - timedelta(days=1))
    ny, nm = add_months(y2, m2, 1)
    return expr("month_span", intervals=[(cal.day_start(date(y1, m1, 1)), cal.day_start(date(ny, nm, 1)))], note=note)


@rule(rf"\b(?:(?P<prep>{PREP})\s+{DATED_SESSION}|on\s+)?(?P<d>{DATE})")
def named_date(cal: Calendar, m: re.Match) -> TimeExpression:
    d = cal.parse_date(m.group("d"))
    if d is None:
        return expr("date", unresolved=f"could not read the date {m.group('d')!r}")
    if m.group("prep"):
        return with_prep(cal, m.group("prep"), "date", cal.days(d, d))
    return expr("date", intervals=cal.days(d, d), nearby_intervals=cal.nearby(d))


@rule(rf"\b{RESP}\s+{RESP_NUM}(?:\s+{TO}\s+(?:{RESP}\s+)?{RESP_NUM})?\b")
def response_ids(cal: Calendar, m: re.Match) -> TimeExpression:
    a = int(m.group(1))
    b = int(m.group(2)) if m.group(2) else a
    return expr("response", response_ids=tuple(sorted((a, b))))


@rule(rf"\b{SESS}\s+(?:#\s*|number\s+)?(\d+)\s+{TO}\s+(?:{SESS}\s+)?(?:#\s*|number\s+)?(\d+)\b")
def session_id_span(cal: Calendar, m: re.Match) -> TimeExpression:
    a, b = sorted((int(m.group(1)), int(m.group(2))))
    return expr("session_span", session_ids=(a, b))


@rule(rf"\b(?:the\s+)?(\d+)(?:st|nd|rd|th)\s+{TO}\s+(?:the\s+)?(\d+)(?:st|nd|rd|th)\s+{SESS}")
def session_position_span(cal: Calendar, m: re.Match) -> TimeExpression:
    a, b = sorted((int(m.group(1)), int(m.group(2))))
    return expr("session_span", session_positions=(a, b))


@rule(rf"\b(?:the\s+|our\s+)?(1st|first|last|past|previous|latest|most\s+recent)\s+(\d+)\s+{SESS}")
def first_last_n_sessions(cal: Calendar, m: re.Match) -> TimeExpression:
    n = int(m.group(2))
    first = m.group(1) in ("1st", "first")
    return expr("session_span", session_positions=(1, n) if first else (-n, -1))


@rule(rf"\b{NUM}\s+{SESS}\s+ago\b")
def sessions_ago(cal: Calendar, m: re.Match) -> TimeExpression:
    n = _n(m.group(1))
    return expr("relative_session", session_positions=(-n, -n))


@rule(rf"\b(?:not\s+(?:the\s+|our\s+)?(?:last|latest|most\s+recent)\s+{SESS}\s*,?\s*but\s+)?"
      rf"(?:the\s+)?(?:1|{SESS})\s+before\s+(?:that|it|the\s+last(?:\s+{SESS})?|last(?:\s+{SESS})?)"
      rf"|\bpenultimate\s+{SESS}")
def before_last_session(cal: Calendar, m: re.Match) -> TimeExpression:
    return expr("relative_session", session_positions=(-2, -2))


@rule(rf"\b(?:the\s+)?(\d+)(?:st|nd|rd|th)\s+(?:to|from)\s+(?:the\s+)?last\s+{SESS}")
def nth_to_last(cal: Calendar, m: re.Match) -> TimeExpression:
    n = int(m.group(1))
    return expr("relative_session", session_positions=(-n, -n))


@rule(rf"\b(?:our\s+|the\s+|my\s+)?(?:very\s+)?(?:last|latest|final|most\s+recent|previous|prior)\s+(?:{SESS}|time)\b")
def last_session(cal: Calendar, m: re.Match) -> TimeExpression:
    return expr("relative_session", session_positions=(-1, -1))


@rule(rf"\b(?:our\s+|the\s+)?(?:very\s+)?(\d+)(?:st|nd|rd|th)\s+{SESS}")
def nth_session(cal: Calendar, m: re.Match) -> TimeExpression:
    n = int(m.group(1))
    return expr("session", session_positions=(n, n))


@rule(r"\b(?:session|discussion|conversation|chat|meeting)\s+(?:#\s*|number\s+)?(\d+)\b"
      r"(?!\s+(?:days?|weeks?|months?|years?|sessions?|discussions?|conversations?|times?|ago)\b)")
def session_id(cal: Calendar, m: re.Match) -> TimeExpression:
    n = int(m.group(1))
    return expr("session", session_ids=(n, n))


@rule(r"\bearlier\s+(?:today|this\s+(morning|afternoon|evening)|in\s+the\s+(morning|afternoon|evening|day)|on)\b")
def earlier_today(cal: Calendar, m: re.Match) -> TimeExpression:
    part = m.group(1) or m.group(2)
    return expr("earlier_today", intervals=cal.days(cal.today, cal.today),
                hours=PARTS_OF_DAY.get(part) if part and part != "day" else None, before_latest_session=True)


@rule(r"\b(?:this\s+(morning|afternoon|evening)|(tonight))\b")
def this_part_of_day(cal: Calendar, m: re.Match) -> TimeExpression:
    part = m.group(1) or "night"
    return expr("today", intervals=cal.days(cal.today, cal.today), hours=PARTS_OF_DAY[part])


@rule(r"\btoday\b")
def today(cal: Calendar, m: re.Match) -> TimeExpression:
    return expr("day", intervals=cal.days(cal.today, cal.today))


@rule(r"\b(?:the\s+)?day\s+before\s+yesterday\b")
def day_before_yesterday(cal: Calendar, m: re.Match) -> TimeExpression:
    return days_ago(cal, 2)


@rule(r"\byesterday\b")
def yesterday(cal: Calendar, m: re.Match) -> TimeExpression:
    return days_ago(cal, 1)


@rule(r"\b(?:over|in|during|for|within)?\s*(?:the|this)?\s*(?:last|past|previous)\s+(?:(\d+)\s+)?"
      r"(days?|weeks?|fortnights?)\b")
def last_n_days(cal: Calendar, m: re.Match) -> TimeExpression:
    n = int(m.group(1) or 1)
    unit = m.group(2).rstrip("s")
    n *= {"day": 1, "week": 7, "fortnight": 14}[unit]
    return expr("day_span", intervals=cal.days(cal.today - timedelta(days=n), cal.today))


@rule(r"\b(?:over|in|during|for|within)?\s*(?:the|this)?\s*past\s+(?:(\d+)\s+)?months?\b",
      r"\b(?:over|in|during|for|within)?\s*(?:the|this)?\s*(?:last|previous)\s+(\d+)\s+months\b")
def past_months(cal: Calendar, m: re.Match) -> TimeExpression:
    n = int(m.group(1) or 1)
    y, mo = add_months(cal.today.year, cal.today.month, -n)
    start = date(y, mo, min(cal.today.day, 28))
    return expr("month_span", intervals=cal.days(start, cal.today))


@rule(r"\b(earlier\s+)?this\s+week\b")
def this_week(cal: Calendar, m: re.Match) -> TimeExpression:
    monday = cal.today - timedelta(days=cal.today.weekday())
    if m.group(1):  # earlier this week: before today
        if monday == cal.today:
            return expr("week", unresolved="'earlier this week' on a Monday names no earlier day")
        return expr("week", intervals=cal.days(monday, cal.today - timedelta(days=1)))
    return expr("week", intervals=cal.days(monday, cal.today))


@rule(rf"\b{NUM}\s+(days?|weeks?|months?|years?)\s+ago\b")
def units_ago(cal: Calendar, m: re.Match) -> TimeExpression:
    n, unit = _n(m.group(1)), m.group(2).rstrip("s")
    if unit == "day":
        return days_ago(cal, n)
    if unit == "week":
        d = cal.today - timedelta(days=7 * n)
        monday = d - timedelta(days=d.weekday())
        return expr("relative_week", intervals=cal.days(monday, monday + timedelta(days=6)))
    return calendar_unit(cal, unit, -n)


@rule(r"\b(?:this|the\s+current)\s+(month|year)\b")
def this_month_or_year(cal: Calendar, m: re.Match) -> TimeExpression:
    return calendar_unit(cal, m.group(1), 0)


@rule(r"\b(?:last|previous)\s+(month|year)\b")
def last_month_or_year(cal: Calendar, m: re.Match) -> TimeExpression:
    return calendar_unit(cal, m.group(1), -1)


@rule(r"\b(?:(last|past|previous|this\s+past|this|next)\s+|on\s+)?({})s?\b".format("|".join(WEEKDAYS)))
def weekday(cal: Calendar, m: re.Match) -> TimeExpression:
    qualifier, wd = (m.group(1) or "").strip(), WEEKDAYS.index(m.group(2))
    if qualifier == "next":
        return expr("weekday", unresolved=f"{m.group(0).strip()!r} lies after now")
    back = (cal.today.weekday() - wd) % 7
    if qualifier == "this":  # this week's day, if it has come
        if back > cal.today.weekday():
            return expr("weekday", unresolved=f"{m.group(0).strip()!r} has not come yet this week")
    elif back == 0:
        back = 7  # "last Friday" said on a Friday is a week ago
    d = cal.today - timedelta(days=back)
    return expr("weekday", intervals=cal.days(d, d), weekday=WEEKDAYS[wd].capitalize())


@rule(r"\b" + BARE_MONTH)
def month_name(cal: Calendar, m: re.Match) -> TimeExpression:
    name = (m.group("m1") or m.group("m2") or m.group("m3")).rstrip(".")
    year = m.group("y1") or m.group("y2")
    number = MONTHS[name]
    y = int(year) if year else cal.latest_month_year(number)
    prep = m.group("inprep")
    return with_prep(cal, prep if prep in ("since", "before", "after", "until", "by") else None, "month",
                     cal.month(y, number))


@rule(rf"\b(?:(?P<prep>{PREP})\s+|in\s+|during\s+)({YR})")
def year_number(cal: Calendar, m: re.Match) -> TimeExpression:
    return with_prep(cal, m.group("prep"), "year", cal.year(int(m.group(2))))
