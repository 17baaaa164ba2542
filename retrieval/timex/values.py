"""What the grammar builds: durations, times (a small algebra of composable parts) and references to a log's own
sessions and messages. Values are immutable and know nothing of "now"; :mod:`retrieval.timex.resolve` places a
time against a reference and a context.

The parts of a time, and what each means:

- :class:`Recurring`: one of a set of spans chosen by context ("Friday", "March", "the 15th", "Easter", "at 7");
  its ``period`` is the cycle that holds the one meant when nothing leans either way (this week's Friday).
- :class:`Absolute`: spans that need no reference ("2016", "12 January 2016", "Q3 2016", "the 1990s").
- :class:`Relative`: units counted from the reference ("today", "tomorrow", "next week", "the year after next").
- :class:`Now`: the reference instant itself.
- :class:`Pick`: this / next / last of a recurring time ("next Friday", "last September", "this Easter").
- :class:`Within`: a recurring time inside another time ("Friday of next week", "the 20th of next month", "the
  third week of this month", "tomorrow at 8am").
- :class:`Shifted`: a time moved by a duration ("3 days after January 12th", "in two weeks", "a month ago").
- :class:`Counted`: the n-th of a recurring time after or before another ("two Sundays from now").
- :class:`Window`: a duration laid from a time ("the next 3 days", "the past 2 weeks", "within 5 hours", "a week
  starting tomorrow").
- :class:`Part`: a part of a time ("early next year", "the end of 2000", "the rest of the week", "later this
  month", "the first half of March").
- :class:`Range`: from one time to another ("from May to October 2020", "between 4pm and 5pm today").
- :class:`Bound`: a time and what lies on one side of it ("since Friday", "before May 8").
- :class:`Checked`: a date with the weekday written beside it ("Friday, June 9th"): the date, checked.
Session references (:class:`SessionRef`, :class:`Anaphor`) have no intervals of their own: a conversation memory
places them in its log.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime

from retrieval.timex import calendar as cal
from retrieval.timex.series import Series


@dataclass(frozen=True)
class Duration:
    """A length: ``parts`` as (grain, amount), coarsest first ("1 month 21 days"); ``fuzzy`` the (low, high) count
    of a vague one ("a few days": (2, 5) of the finest unit, ``parts`` holding its usual reading)."""

    parts: tuple[tuple[str, float], ...]
    fuzzy: tuple[int, int] | None = None

    @property
    def finest(self) -> str:
        return min((g for g, _ in self.parts), key=cal.rank)

    def move(self, t: datetime, sign: int) -> datetime:
        """``t`` moved by this duration forward (``sign`` 1) or back (-1), coarsest part first."""
        for grain, amount in self.parts:
            t = cal.add(t, grain, sign * amount)
        return t

    def plus(self, other: Duration) -> Duration:
        merged: dict[str, float] = {}
        for g, n in self.parts + other.parts:
            merged[g] = merged.get(g, 0) + n
        return Duration(tuple(sorted(merged.items(), key=lambda p: -cal.rank(p[0]))))

    def text(self) -> str:
        return " ".join(f"{n:g} {g}{'s' if n != 1 else ''}" for g, n in self.parts)


@dataclass(frozen=True, kw_only=True)
class Time:
    """A time expression's value. ``kind`` says what it is in words the memory and a reader use (date, weekday,
    month, relative_day, ...); ``latent`` marks a reading that is a time only when nothing else is written (a bare
    "2008", "at 7"): taken for a whole phrase, never picked out of a sentence."""

    kind: str = "time"
    latent: bool = False

    @property
    def definite(self) -> bool:
        """Whether it places without a lean (an absolute date, or a count from the reference)."""
        return True

    def but(self, **changes) -> Time:
        return replace(self, **changes)


@dataclass(frozen=True, kw_only=True)
class Recurring(Time):
    series: Series
    period: str | None = None  # the cycle holding the one meant without a lean: "week" for a weekday
    relative: str = "period"  # how this / next / last count: "period" (next week's) or "nearest" (the next one)

    @property
    def definite(self) -> bool:
        return False

    @property
    def grain(self) -> str:
        return self.series.grain


@dataclass(frozen=True, kw_only=True)
class Absolute(Time):
    series: Series

    @property
    def grain(self) -> str:
        return self.series.grain


@dataclass(frozen=True, kw_only=True)
class Relative(Time):
    """``count`` units of ``grain`` starting ``offset`` units from the one holding the reference."""

    grain: str
    offset: int = 0
    count: int = 1


@dataclass(frozen=True, kw_only=True)
class Now(Time):
    kind: str = "now"
    grain: str = "second"


@dataclass(frozen=True, kw_only=True)
class Pick(Time):
    """``offset`` 0 (this), 1 (next), -1 (last), 2 (the one after next) of ``target``; ``mode`` "period" counts
    whole periods (next week's Friday), "nearest" instances (the next Easter), "strict" the nearest that is not
    the reference's own day ("this past Wednesday", "this coming Friday")."""

    target: Recurring
    offset: int
    mode: str = "period"

    @property
    def grain(self) -> str:
        return self.target.grain


@dataclass(frozen=True, kw_only=True)
class Within(Time):
    """``fine`` inside ``coarse`` (the ``nth`` of them, 1-based, negative from the end; else the first)."""

    fine: Series
    coarse: Time
    nth: int | None = None

    @property
    def definite(self) -> bool:
        return self.coarse.definite

    @property
    def grain(self) -> str:
        return self.fine.grain


@dataclass(frozen=True, kw_only=True)
class Shifted(Time):
    """``base`` moved by ``duration`` (``sign`` 1 later, -1 earlier); ``result`` "auto" (a day for a shift of days
    or more, an instant for one of hours or less), "unit" (the calendar unit of the shift: "5 months ago" is that
    month) or "keep" (the base's own grain)."""

    base: Time
    duration: Duration
    sign: int
    result: str = "auto"

    @property
    def definite(self) -> bool:
        return self.base.definite


@dataclass(frozen=True, kw_only=True)
class Counted(Time):
    """The ``n``-th span of ``series`` after (``sign`` 1) or before (-1) the day of ``base``."""

    series: Series
    n: int
    sign: int
    base: Time

    @property
    def definite(self) -> bool:
        return self.base.definite


@dataclass(frozen=True, kw_only=True)
class Window(Time):
    """``duration`` laid after (``sign`` 1) or before (-1) ``base``, or the reference when it is None; ``style``
    "rolling" (whole days from tomorrow or up to today; from the reference instant for hours), "from_reference"
    (from the reference instant: "within 5 days") or "cycles" (whole calendar units beside the current one: "the
    last 2 quarters")."""

    duration: Duration
    sign: int = 1
    base: Time | None = None
    style: str = "rolling"

    @property
    def definite(self) -> bool:
        return self.base is None or self.base.definite


@dataclass(frozen=True, kw_only=True)
class Part(Time):
    """A part of ``base``: early / late (its halves), beginning / middle / end (its thirds), first_half /
    second_half, rest (from the reference to its end), earlier / later (before / after the reference, within the
    half that holds it), end_point (its last second)."""

    base: Time
    part: str

    @property
    def definite(self) -> bool:
        return self.base.definite


@dataclass(frozen=True, kw_only=True)
class Range(Time):
    """From ``start`` to ``end``; ``inclusive``: the end's whole unit is in (a day, a month), else it stops where the
    end begins (a clock time always does); ``shared``: a time that holds both ends."""

    start: Time
    end: Time
    inclusive: bool = True
    shared: Time | None = None  # written once for both ends: "from 4 to 22 | this month"

    @property
    def definite(self) -> bool:
        return self.start.definite or self.end.definite or (self.shared is not None and self.shared.definite)


@dataclass(frozen=True, kw_only=True)
class Bound(Time):
    """``base`` with the time on one side of it up to the reference's day or from an open start: since, after (on
    to the reference's day), before, until, by (from an open start)."""

    base: Time
    prep: str

    @property
    def definite(self) -> bool:
        return self.base.definite


@dataclass(frozen=True, kw_only=True)
class Checked(Time):
    """A date and the weekday written beside it (0 = Monday): placed as the date; a mismatch is noted."""

    base: Time
    weekday: int

    @property
    def definite(self) -> bool:
        return self.base.definite


@dataclass(frozen=True, kw_only=True)
class EitherOrder(Time):
    """A numeric date whose numbers may be month-day or day-month ("3/4/2020"): ``base`` read month first,
    ``other`` day first; the conventions choose (:attr:`~retrieval.timex.context.Conventions.numeric_order`)."""

    base: Time
    other: Time

    @property
    def definite(self) -> bool:
        return self.base.definite


@dataclass(frozen=True, kw_only=True)
class Invalid(Time):
    """A date no calendar has ("February 30", "2/29/2019"): read, so that no part of it is read instead, and declined
    when placed."""

    reason: str


def grain_of(t: Time) -> str:
    """The grain a time is written at: "Friday" day, "March" month, "8am" hour, a range its start's."""
    if isinstance(t, Range):
        return grain_of(t.start)
    for attr in ("grain",):
        g = getattr(t, attr, None)
        if isinstance(g, str):
            return g
    for attr in ("base", "target", "coarse"):
        inner = getattr(t, attr, None)
        if isinstance(inner, Time):
            return grain_of(inner)
    return "day"


@dataclass(frozen=True, kw_only=True)
class SessionRef:
    """A reference to the sessions or messages of a log: ``positions`` (first, last; 1-based, negative from the
    end), ``ids`` (session numbers), ``responses`` (message numbers), or ``shift`` (first, last) sessions relative
    to those of ``anchor`` ("the session right before the one on May 8")."""

    kind: str = "session"
    positions: tuple[int, int] | None = None
    ids: tuple[int, int] | None = None
    responses: tuple[int, int] | None = None
    shift: tuple[int, int] | None = None
    anchor: object | None = field(default=None)


@dataclass(frozen=True, kw_only=True)
class Anaphor:
    """A reference back to a time named in an earlier turn ("then", "that week", "the session after that")."""

    refers: str
    kind: str = "anaphor"


@dataclass(frozen=True, kw_only=True)
class Vague:
    """A phrase about time that names no interval ("recently", "a while ago", "the next few months")."""

    kind: str = "vague"
    duration: Duration | None = None
