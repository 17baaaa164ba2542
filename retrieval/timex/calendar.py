"""Calendar units as half-open spans ``[start, end)`` of naive local datetimes: the arithmetic under every time
expression (:mod:`retrieval.timex.series` builds sets of spans with it).

A unit (a *grain*) is one of :data:`GRAINS`, finest first. Weeks start on Monday; quarters on January, April, July
and October; halves on January and July; decades and centuries on years divisible by 10 and 100 ("the 1990s",
"the 21st century" = 2000-2099, as people count them, not as the pedants do). A week belongs to the month or year
that holds its Thursday (ISO 8601's rule, which says which week is "the first week of 2015" or "the third week of
this month"). Everything here is naive: a resolution attaches the reference's zone at the end, so a day is always
midnight to midnight on the wall clock.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

GRAINS = ("second", "minute", "hour", "day", "week", "month", "quarter", "half", "year", "decade", "century")
RANK = {g: i for i, g in enumerate(GRAINS)}
# Named spans that are not units of a cycle, with the unit they are made of and a rank for "which is finer".
SPAN_GRAINS = {"part_of_day": ("hour", 2.5), "weekend": ("day", 3.5), "season": ("month", 5.5)}
MONTHS_IN = {"month": 1, "quarter": 3, "half": 6, "year": 12, "decade": 120, "century": 1200}
FIXED = {"second": timedelta(seconds=1), "minute": timedelta(minutes=1), "hour": timedelta(hours=1),
         "day": timedelta(days=1), "week": timedelta(days=7)}

Span = tuple[datetime, datetime]


def rank(grain: str) -> float:
    """Order of a grain from fine to coarse (named spans sit between their units)."""
    if grain in RANK:
        return RANK[grain]
    return SPAN_GRAINS.get(grain, ("day", RANK["day"]))[1]


def add_months(d: datetime, months: int) -> datetime:
    """``d`` moved by whole months; a day past the end of the target month is clipped to its last day."""
    k = d.year * 12 + d.month - 1 + months
    year, month = divmod(k, 12)
    month += 1
    day = min(d.day, days_in_month(year, month))
    return d.replace(year=year, month=month, day=day)


def days_in_month(year: int, month: int) -> int:
    nxt = date(year + month // 12, month % 12 + 1, 1)
    return (nxt - timedelta(days=1)).day


def add(d: datetime, grain: str, n: int | float) -> datetime:
    """``d`` moved by ``n`` units of ``grain`` (calendar units for months and coarser; a fraction only for units of
    fixed length: "two and a half days")."""
    if grain in FIXED:
        return d + FIXED[grain] * n
    if n != int(n):
        if grain == "month":  # half a month: 15 days, as people count
            return add_months(d, int(n)) + timedelta(days=round(30 * (n - int(n))))
        months = MONTHS_IN[grain] * n
        if months != int(months):
            raise ValueError(f"{n} {grain}s is not a whole number of months")
        return add_months(d, int(months))
    return add_months(d, MONTHS_IN[grain] * int(n))


def floor(d: datetime, grain: str) -> datetime:
    """The start of the ``grain`` unit holding ``d``."""
    if grain == "second":
        return d.replace(microsecond=0)
    if grain == "minute":
        return d.replace(second=0, microsecond=0)
    if grain == "hour":
        return d.replace(minute=0, second=0, microsecond=0)
    day = d.replace(hour=0, minute=0, second=0, microsecond=0)
    if grain == "day":
        return day
    if grain == "week":
        return day - timedelta(days=day.weekday())
    months = MONTHS_IN[grain]
    k = day.year * 12 + day.month - 1
    k -= k % months
    return day.replace(year=k // 12, month=k % 12 + 1, day=1)


def unit(d: datetime, grain: str, offset: int = 0) -> Span:
    """The ``grain`` unit holding ``d``, moved by ``offset`` units."""
    start = add(floor(d, grain), grain, offset)
    return start, add(start, grain, 1)


def day_span(d: date) -> Span:
    start = datetime(d.year, d.month, d.day)
    return start, start + timedelta(days=1)


def thursday_owner(week_start: datetime) -> datetime:
    """The Thursday of the week starting ``week_start``: the month and year it falls in own the week."""
    return week_start + timedelta(days=3)


def weeks_of(span: Span) -> list[Span]:
    """The Monday-to-Sunday weeks that belong to ``span`` (a month, quarter or year): those whose Thursday lies in
    it (ISO 8601's rule: week 1 of a year holds its first Thursday)."""
    start, end = span
    monday = floor(start, "week")
    out = []
    while monday < end:
        if start <= thursday_owner(monday) < end:
            out.append((monday, monday + timedelta(days=7)))
        monday += timedelta(days=7)
    return out


def iso_week(year: int, n: int) -> Span | None:
    """Week ``n`` (1-based) of ``year`` by ISO 8601, or None when the year has fewer weeks."""
    weeks = weeks_of(unit(datetime(year, 1, 1), "year"))
    return weeks[n - 1] if 1 <= n <= len(weeks) else None


def easter(year: int) -> date:
    """Western Easter Sunday of ``year`` (the anonymous Gregorian algorithm, "Meeus/Jones/Butcher")."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = b // 4, b % 4
    f = (b + 8) // 25
    g = (b - f + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    i, k = c // 4, c % 4
    ell = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * ell) // 451
    month = (h + ell - 7 * m + 114) // 31
    day = (h + ell - 7 * m + 114) % 31 + 1
    return date(year, month, day)


def nth_weekday(year: int, month: int, weekday: int, n: int) -> date | None:
    """The ``n``-th ``weekday`` (0 = Monday) of a month (``n`` = -1: the last), or None when there is none."""
    if n < 0:
        last = date(year, month, days_in_month(year, month))
        d = last - timedelta(days=(last.weekday() - weekday) % 7 + 7 * (-n - 1))
        return d if d.month == month else None
    first = date(year, month, 1)
    d = first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))
    return d if d.month == month else None


def weekend_before(d: date, n: int = 1) -> date:
    """The Saturday of the ``n``-th latest weekend whose Sunday is before ``d``."""
    sunday = d - timedelta(days=(d.weekday() - 6) % 7 or 7)
    return sunday - timedelta(days=1 + 7 * (n - 1))


def two_digit_year(yy: int, reference_year: int, ahead: int = 20) -> int:
    """A year written with two digits: the one in the century window that ends ``ahead`` years after the reference
    ("3/7/27" read in 2016 is 2027, "03/18/40" is 1940). Python's ``%y`` pivots at 1969 instead, which reads
    "3/3/40" as 2040 for any reference."""
    century = reference_year - reference_year % 100
    year = century + yy
    if year > reference_year + ahead:
        year -= 100
    elif year <= reference_year + ahead - 100:
        year += 100
    return year
