"""Named days on a stated calendar (US usage, with Easter's Western date): each name and the rule that gives its
day in a year. A holiday without its year is recurring; this / next / last count its instances ("next Easter" said
in February is this year's), not years.

Fixed days ("Christmas": 25 December), the n-th weekday of a month ("Thanksgiving": the fourth Thursday of
November; "Memorial Day": the last Monday of May), days relative to one of those ("Black Friday": the day after
Thanksgiving), and days relative to Easter ("Good Friday": two days before it).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta

from retrieval.timex import calendar as cal
from retrieval.timex import series as S
from retrieval.timex.values import Recurring


def _fixed(month: int, day: int) -> Callable[[int], date]:
    return lambda y: date(y, month, day)


def _nth(month: int, weekday: int, n: int) -> Callable[[int], date | None]:
    return lambda y: cal.nth_weekday(y, month, weekday, n)


def _after(rule: Callable[[int], date | None], days: int) -> Callable[[int], date | None]:
    return lambda y: (d + timedelta(days=days)) if (d := rule(y)) is not None else None


_THANKSGIVING = _nth(11, 3, 4)
# (pattern, rule): the patterns are matched on normalised text (lower case, number words as digits)
HOLIDAYS: list[tuple[str, Callable[[int], date | None]]] = [
    (r"new\s+year'?s?\s+eve", _fixed(12, 31)),
    (r"(?:new\s+year'?s?|new\s+year)(?:\s+day)?", _fixed(1, 1)),
    (r"christmas\s+eve|xmas\s+eve", _fixed(12, 24)),
    (r"(?:christmas|xmas)(?:\s+day)?", _fixed(12, 25)),
    (r"boxing\s+day", _fixed(12, 26)),
    (r"valentine'?s?(?:\s+day)?", _fixed(2, 14)),
    (r"(?:saint|st\.?)\s+patrick'?s?(?:\s+day)?|(?:(?:saint|st\.?)\s+)?(?:patrick|paddy|patty)'?s\s+day",
     _fixed(3, 17)),
    (r"april\s+fools'?\s+day", _fixed(4, 1)),
    (r"earth\s+day", _fixed(4, 22)),
    (r"(?:international\s+)?workers'?\s+day|may\s+day", _fixed(5, 1)),
    (r"independence\s+day|(?:the\s+)?4th\s+of\s+july", _fixed(7, 4)),
    (r"halloween", _fixed(10, 31)),
    (r"veterans'?\s+day", _fixed(11, 11)),
    (r"groundhog\s+day", _fixed(2, 2)),
    (r"(?:martin\s+luther\s+king(?:\s+jr\.?)?|mlk)(?:'s)?\s+day", _nth(1, 0, 3)),
    (r"presidents?'?\s+day|washington'?s\s+birthday", _nth(2, 0, 3)),
    (r"mother'?s'?\s+day", _nth(5, 6, 2)),
    (r"memorial\s+day", _nth(5, 0, -1)),
    (r"father'?s'?\s+day", _nth(6, 6, 3)),
    (r"labou?r\s+day", _nth(9, 0, 1)),
    (r"columbus\s+day", _nth(10, 0, 2)),
    (r"thanks\s*giving(?:\s+day)?", _THANKSGIVING),
    (r"black\s+friday", _after(_THANKSGIVING, 1)),
    (r"cyber\s+monday", _after(_THANKSGIVING, 4)),
    (r"good\s+friday", _after(cal.easter, -2)),
    (r"easter\s+monday", _after(cal.easter, 1)),
    (r"(?:easter)(?:\s+sunday|\s+day)?", cal.easter),
    (r"(?:whit\s+sunday|pentecost)", _after(cal.easter, 49)),
]
HOLIDAY_PATTERN = r"(?:{})\b".format("|".join(f"(?:{p})" for p, _ in HOLIDAYS))
_COMPILED = [(re.compile(p + r"$"), rule) for p, rule in HOLIDAYS]


HOLIDAY_SEASON = ((12, 24), (1, 1))  # "the holidays": Christmas Eve to New Year's Day


def holiday_season() -> Recurring:
    """"The holidays", "the holiday season": 24 December to 1 January, both included."""
    (m1, d1), (m2, d2) = HOLIDAY_SEASON

    def span_of(year: int):
        start = date(year, m1, d1)
        end = date(year + (m2 < m1), m2, d2) + timedelta(days=1)
        return cal.day_span(start)[0], cal.day_span(end)[0]

    return Recurring(series=S.Yearly(("holidays",), span_of, "span"), period="year", kind="holidays",
                     relative="nearest")


def holiday_time(text: str) -> Recurring | None:
    """The recurring day a holiday's name (as matched by :data:`HOLIDAY_PATTERN`) names."""
    name = re.sub(r"\s+", " ", text.strip())
    for pattern, rule in _COMPILED:
        if pattern.match(name):
            return Recurring(series=S.yearly_date(("holiday", pattern.pattern), rule), period="year", kind="holiday",
                             relative="nearest")
    return None


def weekend_of(day: date) -> tuple[date, date]:
    """The weekend that a day belongs to, as (first day, day after the last): a Saturday or Sunday's own; a long
    weekend around a Friday or Monday (Friday to Sunday, Saturday to Monday) or a Thursday (to Sunday); else the
    weekend after it."""
    wd = day.weekday()
    if wd in (5, 6):
        sat = day - timedelta(days=wd - 5)
        return sat, sat + timedelta(days=2)
    if wd == 0:
        return day - timedelta(days=2), day + timedelta(days=1)
    if wd in (3, 4):
        return day, day + timedelta(days=7 - wd)
    sat = day + timedelta(days=5 - wd)
    return sat, sat + timedelta(days=2)
