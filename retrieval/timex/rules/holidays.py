"""Named days on a stated calendar (US usage, with Easter's Western date): each name and the rule that gives its
day in a year. A holiday without its year is recurring; this / next / last count its instances ("next Easter" said
in February is this year's), not years.

Fixed days ("Christmas": 25 December), the n-th weekday of a month ("Thanksgiving": the fourth Thursday of
November; "Memorial Day": the last Monday of May), days relative to one of those ("Black Friday": the day after
Thanksgiving), and days relative to Easter ("Good Friday": two days before it).

Where the conventions read holidays as the places of the reference's zone keep them
(:attr:`~retrieval.timex.context.Conventions.holiday_calendar`), :func:`in_places` gives a name the day those
places' calendars give it (:mod:`retrieval.timex.public_holidays`: "Thanksgiving" in Toronto, "May Day" in
London); :data:`REGIONAL` names ("Family Day", "the June bank holiday") and "the bank holiday" are read there alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta

from retrieval.timex import calendar as cal
from retrieval.timex import series as S
from retrieval.timex.lexicon import FULL_MONTHS, WEEKDAYS
from retrieval.timex.public_holidays import calls_bank_holidays, name_key, named_day, public_days
from retrieval.timex.values import Recurring

YEARS_AROUND = 10  # a place's calendar is asked for the years this close to the reference


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
    # the same day wherever they are kept
    (r"juneteenth", _fixed(6, 19)),
    (r"(?:remembrance|armistice)\s+day", _fixed(11, 11)),
    (r"canada\s+day", _fixed(7, 1)),
    (r"australia\s+day", _fixed(1, 26)),
    (r"anzac\s+day", _fixed(4, 25)),
    (r"waitangi\s+day", _fixed(2, 6)),
    (r"(?:saint|st\.?)\s+stephen'?s(?:\s+day)?", _fixed(12, 26)),
    (r"(?:saint|st\.?)\s+andrew'?s(?:\s+day)?", _fixed(11, 30)),
]
# Days whose date differs by place, with no day on the conventions' calendar: read only where a place keeps them
REGIONAL = [
    r"family\s+day", r"victoria\s+day", r"civic\s+holiday", r"islander\s+day", r"louis\s+riel\s+day",
    r"heritage\s+day", r"(?:king|queen)'?s\s+birthday(?:\s+holiday)?", r"melbourne\s+cup(?:\s+day)?",
    r"eight\s+hours\s+day", r"matariki", r"(?:saint|st\.?)\s+brigid'?s(?:\s+day)?",
    r"(?:spring|summer|late\s+summer)\s+bank\s+holiday",
]
# "the bank holiday", "bank holiday monday", "the August bank holiday": one of the days a place keeps (Britain's
# and Ireland's word), in that month, on that weekday
BANK_HOLIDAY = r"(?:the\s+)?(?:(?:early\s+)?({})\s+)?bank\s+holiday(?:\s+({}))?".format(
    "|".join(FULL_MONTHS), "|".join(WEEKDAYS))
_REGIONAL = [rf"(?:the\s+)?(?:{p})" for p in REGIONAL]
HOLIDAY_PATTERN = r"(?:{})\b".format("|".join(f"(?:{p})" for p in [*(p for p, _ in HOLIDAYS), *_REGIONAL,
                                                                     BANK_HOLIDAY]))
_COMPILED = [(re.compile(p + r"$"), rule) for p, rule in [*HOLIDAYS, *((p, None) for p in _REGIONAL)]]
_BANK = re.compile(BANK_HOLIDAY + r"$")


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
    """The recurring day a holiday's name (as matched by :data:`HOLIDAY_PATTERN`) names: on the conventions'
    calendar (none for a :data:`REGIONAL` name and "the bank holiday"), until :func:`in_places` places it."""
    name = re.sub(r"\s+", " ", text.strip())
    if (bank := _BANK.match(name)) is not None:
        month = FULL_MONTHS.index(bank[1]) + 1 if bank[1] else None
        weekday = WEEKDAYS.index(bank[2]) if bank[2] else None
        series: S.Series = S.YearlyDays(("bank holiday", month, weekday), lambda year: ())
        return Recurring(series=series, period="year", kind="holiday", relative="nearest")
    for pattern, rule in _COMPILED:
        if pattern.match(name):
            series = S.yearly_date(("holiday", name_key(name)), rule or (lambda year: None))
            return Recurring(series=series, period="year", kind="holiday", relative="nearest")
    return None


def in_places(series: S.Series, places: tuple[str, ...], year: int) -> S.Series:
    """A holiday's series (of :func:`holiday_time`) as the calendars of ``places`` (territory codes) keep it, for
    a text read in ``year``: a name one of them keeps, on the day with the largest share
    (:func:`~retrieval.timex.public_holidays.named_day`; a tie leaves the conventions' day, and the calendar note
    says so); "the bank holiday", the days of each place that names its holidays so (the days all of them agree on,
    when several may be meant).
    Any other series, and a name none of them keeps, unchanged."""
    near = range(year - YEARS_AROUND, year + YEARS_AROUND + 1)
    if not places:
        return series
    if isinstance(series, S.Yearly) and series.key[0] == "holiday":
        key, own = series.key[1], series.span_of
        keepers = [t for t in places if any(named_day(key, y, (t,))[0] for y in (year - 1, year, year + 1))]
        if not keepers:
            return series

        def span_of(y: int):
            day = named_day(key, y, places)[1] if y in near else None
            return cal.day_span(day) if day is not None else own(y)

        calendar = _kept_in(keepers)
        if split := [y for y in (year - 1, year, year + 1) if named_day(key, y, places) == (True, None)]:
            taken = "the conventions' day" if own(year) is not None else "no day"
            calendar += f"; in {', '.join(map(str, split))} they keep it on different days, none more widely: {taken}"
        return S.Yearly((*series.key, places), span_of, series.grain, calendar=calendar)
    if isinstance(series, S.YearlyDays) and series.key[0] == "bank holiday":
        _, month, weekday = series.key

        def kept_in(t: str) -> Callable[[int], tuple[date, ...]]:
            def days_of(y: int) -> tuple[date, ...]:
                days = public_days(t, y, weekday) if y in near else ()
                return tuple(d for d in days if month is None or d.month == month)
            return days_of

        keepers = [t for t in places if calls_bank_holidays(t, year)]
        members = tuple(S.YearlyDays((*series.key, t), kept_in(t), calendar=_kept_in([t])) for t in keepers)
        if len(members) > 1:
            return S.Agreed(members, calendar=_kept_in(keepers) + ", on the days they all keep")
        return members[0] if members else series
    return series


def _kept_in(places: list[str]) -> str:
    return "as kept in " + ", ".join(places)


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
