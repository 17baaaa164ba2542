"""Sets of spans on the time line that know nothing of "now": every Monday, every March, every 15th, every day at
08:00, Easter of every year, the third week of every month. The grammar composes them (a weekday within a month,
the n-th of one within another) and a resolution picks one of their spans relative to a reference
(:mod:`retrieval.timex.resolve`).

A series is walked from a point in either direction: :meth:`Series.forward` gives the spans that end after ``t``,
earliest first (the one holding ``t`` included); :meth:`Series.backward` the spans that start at or before ``t``,
latest first. Spans are naive local datetimes (:mod:`retrieval.timex.calendar`). A walk over a set that may be
empty ("February 30", "the fifth Sunday of a month that has four") gives up after :data:`LIMIT` steps of its
coarser part and yields nothing more: no such span is a normal answer, not an endless loop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from itertools import islice
from typing import TYPE_CHECKING

from retrieval.timex import calendar as cal
from retrieval.timex.calendar import Span

LIMIT = 800  # coarse spans walked before a composed set is taken to be empty near t


class Series:
    """A set of spans, with the grain its spans are reported at (``grain``, set by each kind)."""

    if TYPE_CHECKING:  # a field of the simple kinds, computed by the combinations (Intersect, NthWithin, Union)
        @property
        def grain(self) -> str: ...

    def forward(self, t: datetime) -> Iterator[Span]:
        raise NotImplementedError

    def backward(self, t: datetime) -> Iterator[Span]:
        raise NotImplementedError

    def within(self, span: Span) -> Iterator[Span]:
        """The spans of this set that lie inside ``span``, earliest first; a week lies in the month or year that
        holds its Thursday (:func:`~retrieval.timex.calendar.weeks_of`)."""
        start, end = span
        weeks = self.grain == "week"
        for s in self.forward(start - timedelta(days=3) if weeks else start):
            if s[0] >= end:
                return
            if (s[0] >= start and s[1] <= end) or (weeks and start <= cal.thursday_owner(s[0]) < end):
                yield s


@dataclass(frozen=True)
class Cycle(Series):
    """Every unit of a grain: every day, every week (Monday to Sunday), every quarter, every decade."""

    grain: str = "day"

    def forward(self, t: datetime) -> Iterator[Span]:
        start = cal.floor(t, self.grain)
        while True:
            end = cal.add(start, self.grain, 1)
            yield start, end
            start = end

    def backward(self, t: datetime) -> Iterator[Span]:
        start = cal.floor(t, self.grain)
        while True:
            yield start, cal.add(start, self.grain, 1)
            start = cal.add(start, self.grain, -1)


@dataclass(frozen=True)
class Where(Series):
    """The units of a grain that pass a test on their start: a weekday, a month of the year, a day of the month, a
    quarter. ``key`` names the test (it is the set's identity: two sets with the same key are equal)."""

    grain: str
    key: tuple
    test: Callable[[datetime], bool] = field(compare=False, hash=False, repr=False)
    max_gap: int = 2000  # units walked without a hit before the set is taken to be empty from there

    def forward(self, t: datetime) -> Iterator[Span]:
        return self._walk(Cycle(self.grain).forward(t))

    def backward(self, t: datetime) -> Iterator[Span]:
        return self._walk(Cycle(self.grain).backward(t))

    def _walk(self, units: Iterator[Span]) -> Iterator[Span]:
        gap = 0
        for s in units:
            if self.test(s[0]):
                gap = 0
                yield s
            else:
                gap += 1
                if gap > self.max_gap:
                    return


def weekday(n: int) -> Where:
    return Where("day", ("weekday", n), lambda d: d.weekday() == n, 7)


def month_of_year(n: int) -> Where:
    return Where("month", ("month", n), lambda d: d.month == n, 12)


def day_of_month(n: int) -> Where:
    return Where("day", ("day_of_month", n), lambda d: d.day == n, 70)


def quarter_of_year(n: int) -> Where:
    return Where("quarter", ("quarter", n), lambda d: (d.month - 1) // 3 + 1 == n, 4)


def half_of_year(n: int) -> Where:
    return Where("half", ("half", n), lambda d: (d.month - 1) // 6 + 1 == n, 2)


class _Offset(Series):
    """Spans at a fixed ``offset`` into every unit of a cycle (``unit``), ``length`` long."""

    unit: str = "day"
    offset: timedelta
    length: timedelta

    def forward(self, t: datetime) -> Iterator[Span]:
        unit = cal.add(cal.floor(t, self.unit), self.unit, -1)
        while True:
            start = unit + self.offset
            if start + self.length > t:
                yield start, start + self.length
            unit = cal.add(unit, self.unit, 1)

    def backward(self, t: datetime) -> Iterator[Span]:
        unit = cal.add(cal.floor(t, self.unit), self.unit, 1)
        while True:
            start = unit + self.offset
            if start <= t:
                yield start, start + self.length
            unit = cal.add(unit, self.unit, -1)


@dataclass(frozen=True)
class Daily(_Offset):
    """Spans at a fixed offset into every day: a clock time (08:00 for an hour), a part of the day (08:00-12:00)."""

    offset: timedelta
    length: timedelta
    grain: str = "hour"
    name: str | None = None  # a part of the day's name: its hours are a convention
    unit = "day"


@dataclass(frozen=True)
class Weekly(_Offset):
    """Spans at a fixed offset into every Monday-to-Sunday week: the weekend (Saturday and Sunday), the working
    week (Monday to Friday)."""

    offset: timedelta
    length: timedelta
    grain: str = "weekend"
    unit = "week"


@dataclass(frozen=True)
class Yearly(Series):
    """One span a year, computed from the year: a holiday ("Easter": the function finds it), a season. ``key``
    names the function (the set's identity); ``calendar`` says whose calendar it is, where a place's ("as kept in
    CA"), for the reading's notes."""

    key: tuple
    span_of: Callable[[int], Span | None] = field(compare=False, hash=False, repr=False)
    grain: str = "day"
    calendar: str = ""

    def forward(self, t: datetime) -> Iterator[Span]:
        for year in range(t.year - 1, t.year + LIMIT):
            s = self.span_of(year)
            if s is not None and s[1] > t:
                yield s

    def backward(self, t: datetime) -> Iterator[Span]:
        for year in range(t.year + 1, t.year - LIMIT, -1):
            s = self.span_of(year)
            if s is not None and s[0] <= t:
                yield s


def yearly_date(key: tuple, day_of: Callable[[int], date | None]) -> Yearly:
    """A day a year: ``day_of(year)`` gives the date (or None in a year without one)."""

    def span_of(year: int) -> Span | None:
        d = day_of(year)
        return None if d is None else cal.day_span(d)

    return Yearly(key, span_of, "day")


@dataclass(frozen=True)
class YearlyDays(Series):
    """Some days a year, computed from the year, in order: a territory's bank holidays. ``key`` names the function;
    a year with none is passed over, and a walk ends after :data:`LIMIT` years."""

    key: tuple
    days_of: Callable[[int], tuple[date, ...]] = field(compare=False, hash=False, repr=False)
    grain: str = "day"
    calendar: str = ""

    def forward(self, t: datetime) -> Iterator[Span]:
        for year in range(t.year - 1, t.year + LIMIT):
            yield from (s for s in map(cal.day_span, self.days_of(year)) if s[1] > t)

    def backward(self, t: datetime) -> Iterator[Span]:
        for year in range(t.year + 1, t.year - LIMIT, -1):
            yield from (s for s in map(cal.day_span, reversed(self.days_of(year))) if s[0] <= t)


@dataclass(frozen=True)
class Agreed(Series):
    """The spans several sets agree on, walked from a point: while every member's next (or last) span is the same,
    that span; from the first one they differ on, none. The bank holidays of every place a text may be written in."""

    members: tuple[Series, ...]
    calendar: str = ""

    @property
    def grain(self) -> str:
        return self.members[0].grain

    def forward(self, t: datetime) -> Iterator[Span]:
        return _agreed([m.forward(t) for m in self.members])

    def backward(self, t: datetime) -> Iterator[Span]:
        return _agreed([m.backward(t) for m in self.members])


def _agreed(walks: list[Iterator[Span]]) -> Iterator[Span]:
    for heads in zip(*walks):
        if any(h != heads[0] for h in heads[1:]):
            return
        yield heads[0]


@dataclass(frozen=True)
class Spans(Series):
    """A finite set of spans: a year, a named day with its year, the week after next."""

    spans: tuple[Span, ...]
    grain: str = "day"

    def forward(self, t: datetime) -> Iterator[Span]:
        return (s for s in self.spans if s[1] > t)

    def backward(self, t: datetime) -> Iterator[Span]:
        return (s for s in reversed(self.spans) if s[0] <= t)


def one(span: Span, grain: str) -> Spans:
    return Spans((span,), grain)


def _coarser(a: Series, b: Series) -> tuple[Series, Series]:
    """(fine, coarse) of two sets: the one with the finer grain first (a tie keeps the order)."""
    return (b, a) if cal.rank(a.grain) > cal.rank(b.grain) else (a, b)


@dataclass(frozen=True)
class Intersect(Series):
    """The spans of the finer set that lie inside a span of the coarser: Mondays in March, the 15th of February,
    08:00 on Fridays. Its grain is the finer set's."""

    a: Series
    b: Series

    @property
    def grain(self) -> str:
        return _coarser(self.a, self.b)[0].grain

    def forward(self, t: datetime) -> Iterator[Span]:
        fine, coarse = _coarser(self.a, self.b)
        for c in islice(coarse.forward(t), LIMIT):
            for f in fine.within(c):
                if f[1] > t:
                    yield f

    def backward(self, t: datetime) -> Iterator[Span]:
        fine, coarse = _coarser(self.a, self.b)
        for c in islice(coarse.backward(t), LIMIT):
            for f in reversed(list(fine.within(c))):
                if f[0] <= t:
                    yield f


@dataclass(frozen=True)
class SevenDays(Series):
    """Weeks counted as seven-day blocks from the start of a month ("the third week of June": 15-21; its last week:
    its last seven days), for :class:`NthWithin` under the conventions that count so."""

    grain: str = "week"

    def forward(self, t: datetime) -> Iterator[Span]:
        return Cycle("week").forward(t)

    def backward(self, t: datetime) -> Iterator[Span]:
        return Cycle("week").backward(t)


@dataclass(frozen=True)
class NthWithin(Series):
    """The n-th span of ``fine`` inside each span of ``coarse`` (1-based; negative counts from the end): the third
    Wednesday of every month, the last week of every year. Weeks belong to the month or year holding their
    Thursday (:func:`~retrieval.timex.calendar.weeks_of`)."""

    n: int
    fine: Series
    coarse: Series

    @property
    def grain(self) -> str:
        return self.fine.grain

    def pick(self, c: Span) -> Span | None:
        if isinstance(self.fine, SevenDays):  # days 7n-6 to 7n; the last: the last seven days
            start = c[0] + timedelta(days=7 * (self.n - 1)) if self.n > 0 else c[1] + timedelta(days=7 * self.n)
            end = start + timedelta(days=7)
            return (start, min(end, c[1])) if c[0] <= start < c[1] else None
        if isinstance(self.fine, Cycle) and self.fine.grain == "week":
            inside = cal.weeks_of(c)
        elif self.n > 0:
            inside = list(islice(self.fine.within(c), self.n))
        else:
            inside = list(self.fine.within(c))
        k = self.n - 1 if self.n > 0 else self.n
        return inside[k] if -len(inside) <= k < len(inside) else None

    def forward(self, t: datetime) -> Iterator[Span]:
        for c in islice(self.coarse.forward(t), LIMIT):
            s = self.pick(c)
            if s is not None and s[1] > t:
                yield s

    def backward(self, t: datetime) -> Iterator[Span]:
        for c in islice(self.coarse.backward(t), LIMIT):
            s = self.pick(c)
            if s is not None and s[0] <= t:
                yield s


@dataclass(frozen=True)
class Union(Series):
    """The spans of either set, in order: "at 3" is 03:00 or 15:00."""

    a: Series
    b: Series

    @property
    def grain(self) -> str:
        return self.a.grain

    def forward(self, t: datetime) -> Iterator[Span]:
        return _merge(self.a.forward(t), self.b.forward(t), lambda x, y: x[0] <= y[0])

    def backward(self, t: datetime) -> Iterator[Span]:
        return _merge(self.a.backward(t), self.b.backward(t), lambda x, y: x[0] >= y[0])


def _merge(xs: Iterator[Span], ys: Iterator[Span], first: Callable[[Span, Span], bool]) -> Iterator[Span]:
    x, y = next(xs, None), next(ys, None)
    while x is not None or y is not None:
        if x is not None and (y is None or first(x, y)):
            yield x
            x = next(xs, None)
        elif y is not None:  # always, here: one of the two is left
            if y != x:
                yield y
            y = next(ys, None)


def first(it: Iterator[Span]) -> Span | None:
    return next(iter(it), None)
