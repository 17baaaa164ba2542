"""Named days and seasons, read against a stated calendar (US English usage; pass another to change it).

- :data:`FIXED_HOLIDAYS`: days with a fixed date; :data:`NTH_WEEKDAY_HOLIDAYS`: days that are the n-th (or, with
  -1, the last) weekday of a month (Thanksgiving: the fourth Thursday of November);
- "the holidays" / "the holiday season" / "the Christmas holidays": 24 December to 1 January;
- seasons are meteorological: spring March to May, summer June to August, autumn (fall) September to November,
  winter December to February.
A named day or season without a year is the latest one that has begun by today ("last summer": the latest one
that has ended).
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from retrieval.memory.time_calendar import Calendar, add_months
from retrieval.memory.time_patterns import YR
from retrieval.memory.time_rules import TimeExpression, expr, rule

FIXED_HOLIDAYS = {"new year's day": (1, 1), "new year's eve": (12, 31), "christmas eve": (12, 24),
                  "christmas day": (12, 25), "christmas": (12, 25), "valentine's day": (2, 14),
                  "halloween": (10, 31), "independence day": (7, 4), "st. patrick's day": (3, 17),
                  "st patrick's day": (3, 17)}
NTH_WEEKDAY_HOLIDAYS = {"thanksgiving": (11, 3, 4), "memorial day": (5, 0, -1), "labor day": (9, 0, 1)}
HOLIDAY_SEASON = ((12, 24), (1, 1))
SEASON_START = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}

_NAMES = "|".join(re.escape(n) for n in sorted([*FIXED_HOLIDAYS, *NTH_WEEKDAY_HOLIDAYS], key=len, reverse=True))


def holiday_date(name: str, year: int) -> date:
    """The day ``name`` falls on in ``year``."""
    if name in FIXED_HOLIDAYS:
        return date(year, *FIXED_HOLIDAYS[name])
    month, weekday, n = NTH_WEEKDAY_HOLIDAYS[name]
    if n < 0:  # the last such weekday of the month
        ny, nm = add_months(year, month, 1)
        d = date(ny, nm, 1) - timedelta(days=1)
        return d - timedelta(days=(d.weekday() - weekday) % 7)
    first = date(year, month, 1)
    return first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))


@rule(rf"\b(?:on\s+|at\s+|over\s+|for\s+)?(?P<name>{_NAMES})(?:\s+(?P<y>{YR}))?"
      r"(?!\s+(?:holidays|holiday\s+season))", priority=10)
def named_holiday(cal: Calendar, m: re.Match) -> TimeExpression:
    name = m.group("name")
    if m.group("y"):
        d = holiday_date(name, int(m.group("y")))
    else:
        d = holiday_date(name, cal.today.year)
        if d > cal.today:
            d = holiday_date(name, cal.today.year - 1)
    return expr("holiday", intervals=cal.days(d, d), note=f"{name!r} read as {d.isoformat()} (the stated calendar)")


@rule(r"\b(?:(?:over|during|in|for|through)\s+)?(?:the\s+)?(?:christmas\s+|winter\s+)?(?:holidays|holiday\s+season)\b",
      priority=10)
def holiday_season(cal: Calendar, m: re.Match) -> TimeExpression:
    (m1, d1), (m2, d2) = HOLIDAY_SEASON
    start = date(cal.today.year, m1, d1)
    if start > cal.today:
        start = date(cal.today.year - 1, m1, d1)
    end = date(start.year + (m2 < m1), m2, d2)
    return expr("holidays", intervals=cal.days(start, end),
                note=f"'the holidays' read as {start.isoformat()} to {end.isoformat()} (the stated calendar)")


@rule(rf"\b(?:over|during|in|throughout)?\s*(?P<which>the|this|this\s+past|last)\s+(?P<season>spring|summer|autumn|"
      rf"fall|winter)(?:\s+(?:of\s+)?(?P<y>{YR}))?\b", priority=10)
def season(cal: Calendar, m: re.Match) -> TimeExpression:
    first = SEASON_START[m.group("season")]
    if m.group("y"):
        start = date(int(m.group("y")), first, 1)
    else:
        start = date(cal.today.year, first, 1)
        if start > cal.today:
            start = date(cal.today.year - 1, first, 1)
        if m.group("which") == "last" and date(*add_months(start.year, first, 3), 1) > cal.today:
            start = date(start.year - 1, first, 1)  # the latest that has ended
    end_y, end_m = add_months(start.year, first, 3)
    return expr("season", intervals=[(cal.day_start(start), cal.day_start(date(end_y, end_m, 1)))])
