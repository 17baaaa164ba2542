"""Placing a time (:mod:`retrieval.timex.values`) on the time line: a span ``[start, end)`` with its grain, and the
choices made on the way, each with its reason.

Everything is computed on naive local datetimes (the reference's wall clock); :func:`place` returns them as such
and the reader attaches the zone. A time that cannot be placed ("February 30", "the fifth Sunday of September
2017") raises :class:`Unplaceable` with the reason; it is declined and named, never guessed.

How the parts place (see each ``_place_*``):
- a recurring time without a lean is the one in the reference's own period (this week's Friday, this year's
  December); leaning back, the latest one up to the reference; leaning forward, the first one from it;
- this / next / last count whole periods for weekdays and months ("next Friday" is next week's Friday, per
  :class:`~retrieval.timex.context.Conventions`) and instances for named days ("next Easter");
- a range places the end that needs no lean first and the other from it: "nov - feb 2017" is November 2016,
  "from next Monday to Friday" ends on the Friday after that Monday; an end written before its start is read as
  the range between them, and noted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from retrieval.timex import calendar as cal
from retrieval.timex.calendar import Span
from retrieval.timex.context import Conventions
from retrieval.timex.lexicon import WEEKDAYS
from retrieval.timex.placed import OPEN_START, Choice, Placed, Unplaceable, take
from retrieval.timex.resolve_ranges import RangePlacing
from retrieval.timex.resolve_spans import DerivedPlacing
from retrieval.timex.series import NthWithin, Series, Where, first, one
from retrieval.timex.values import (
    Absolute,
    Checked,
    Counted,
    Now,
    Pick,
    Recurring,
    Relative,
    Shifted,
    Time,
    Within,
)

PERIOD_WORDS = {"day": "today", "week": "this week", "month": "this month", "year": "this year"}


@dataclass
class Placer(DerivedPlacing, RangePlacing):
    """Places times against ``reference`` (naive local) with a ``lean`` ("past", "future" or None) and
    ``conventions``; ``lean_why`` is the reason for the lean, shown in the choices it makes."""

    reference: datetime
    conventions: Conventions
    lean: str | None = None
    lean_why: str = ""
    choices: list[Choice] = field(default_factory=list)

    def place(self, t: Time) -> Placed:
        self.choices = []
        p = self._place(t, self.reference, self.lean)
        return Placed(p.start, p.end, p.grain, tuple(self.choices), p.point)

    def note(self, what: str, value: str, why: str) -> None:
        self.choices.append(Choice(what, value, why))

    # ---- dispatch ---------------------------------------------------------------------------------------------
    def _place(self, t: Time, anchor: datetime, lean: str | None) -> Placed:
        method = getattr(self, f"_place_{type(t).__name__.lower()}", None)
        if method is None:
            raise TypeError(f"cannot place a {type(t).__name__}")
        return method(t, anchor, lean)

    # ---- recurring times and their selection -------------------------------------------------------------------
    def select(self, series: Series, anchor: datetime, lean: str | None, period: str | None) -> Span:
        """One span of ``series`` near ``anchor``: leaning back the latest up to it, forward the first from it,
        without a lean the one in ``anchor``'s period (else the next one)."""
        self.note_calendar(series)
        day = cal.floor(anchor, "day")
        day_grain = cal.rank(series.grain) <= cal.rank("day")
        weekday = isinstance(series, Where) and series.key[0] == "weekday"
        if period == "century":  # a two-digit year: the century window ending some years after the reference
            last = self.reference.year + self.conventions.year_window
            s = first(series.backward(datetime(last, 12, 31)))
            if s is None:
                raise Unplaceable("no such date in the century window")
            self.note("year", str(s[0].year), f"a two-digit year: the century up to {last}")
            return s
        if lean == "past":
            for s in series.backward(anchor):
                if weekday and not self.conventions.past_today and s[0] >= day:
                    continue
                self.note("lean", "past", f"the latest one up to the reference: {self.lean_why or 'leaning back'}")
                return s
            raise Unplaceable("none up to the reference")
        if lean == "future":
            for s in series.forward(anchor):
                if weekday and not self.conventions.future_today and s[0] < day + timedelta(days=1):
                    continue
                if s[0] < anchor and s[1] <= day + timedelta(days=1) and not day_grain:
                    continue  # a clock time or part of today that has passed
                self.note("lean", "future", f"the first one from the reference: {self.lean_why or 'leaning forward'}")
                return s
            raise Unplaceable("none after the reference")
        if period in ("week", "month", "year") and self.conventions.unleaned == "nearest" and not isinstance(
                series, NthWithin):
            return self._nearest(series, anchor, skip_today=period == "month" and series.grain == "day")
        if period == "day" and cal.rank(series.grain) < cal.rank("day") and self.conventions.unleaned == "nearest":
            return self._nearest_part(series, anchor)
        if period:
            ps, pe = cal.unit(anchor, period)
            s = first(series.forward(ps))
            if s is not None and s[0] < pe:
                self.note("period", PERIOD_WORDS.get(period, f"this {period}"),
                          "no tense to lean on: the one in the reference's own " + period)
                return s
            if isinstance(series, NthWithin):  # "the fifth Sunday": this month has none
                raise Unplaceable(f"none in the reference's own {period}")
        s = first(series.forward(anchor))
        if s is None:
            raise Unplaceable("none near the reference")
        self.note("lean", "next", "no tense to lean on: the next one")
        return s

    def _nearest(self, series: Series, anchor: datetime, skip_today: bool = False) -> Span:
        """The span holding ``anchor``'s day, else the nearer of the latest before it and the first after it (the
        later one on a tie). ``skip_today``: a day of the month named on that very day ("the 27th" said on the 27th)
        is not that day, which people call "today", but the nearer of last month's and next month's."""
        day = cal.floor(anchor, "day")
        after = first(series.forward(day))
        if after is not None and after[0] <= day:
            if not skip_today:
                return after
            self.note("today", "not today", "a day of the month named on that very day: last or next month's")
            after = first(s for s in series.forward(day + timedelta(days=1)) if s[0] > day)
        before = first(s for s in series.backward(day) if s[1] <= day)
        return self._nearer(before, after, None if before is None else day - before[0],
                            None if after is None else after[0] - day)

    def _nearest_part(self, series: Series, anchor: datetime) -> Span:
        """A part of a day with no tense to lean on ("race in the morning"): the one holding ``anchor``, else the
        nearer of the last one and the next (said at 22:30, the next morning; at 14:00, this one)."""
        after = first(series.forward(anchor))
        before = first(series.backward(anchor))
        if before is not None and before[1] > anchor:
            return before
        if after is not None and after[0] <= anchor:
            return after
        return self._nearer(before, after, None if before is None else anchor - before[1],
                            None if after is None else after[0] - anchor)

    def _nearer(self, before: Span | None, after: Span | None, since: timedelta | None, until: timedelta | None
                ) -> Span:
        """Of the last one (``since`` before the reference) and the next (``until`` after it), the nearer; the next
        on a tie."""
        if before is None or (after is not None and until is not None and since is not None and until <= since):
            if after is None:
                raise Unplaceable("none near the reference")
            self.note("nearest", "the next one", "no tense to lean on: the nearer of the last and the next")
            return after
        self.note("nearest", "the last one", "no tense to lean on: the nearer of the last and the next")
        return before

    def _place_recurring(self, t: Recurring, anchor: datetime, lean: str | None) -> Placed:
        s = self.select(t.series, anchor, lean, t.period)
        return Placed(s[0], s[1], t.grain)

    def _place_eitherorder(self, t, anchor: datetime, lean: str | None) -> Placed:
        day_first = self.conventions.numeric_order == "DMY"
        self.note("order", "day first" if day_first else "month first",
                  f"a numeric date whose numbers could be either (the conventions of {self.conventions.name!r})")
        return self._place(t.other if day_first else t.base, anchor, lean)

    def _place_invalid(self, t, anchor: datetime, lean: str | None) -> Placed:
        raise Unplaceable(t.reason)

    def _place_bare(self, t, anchor: datetime, lean: str | None) -> Placed:
        day = t.as_day()
        if day is None:
            raise Unplaceable(f"{t.number} is no day of a month")
        return self._place_recurring(day, anchor, lean)

    def _place_lastweek(self, t: Relative, anchor: datetime, lean: str | None) -> Placed:
        style = self.conventions.last_week
        if style == "calendar":
            return self._place_relative(t, anchor, lean)
        day = cal.floor(self.reference, "day")
        end = day + timedelta(days=1) if style == "rolling_today" else day
        self.note("last week", "the 7 days before" + (" and today" if style == "rolling_today" else ""),
                  f"the conventions of {self.conventions.name!r}")
        return Placed(day - timedelta(days=7), end, "week")

    def _place_absolute(self, t: Absolute, anchor: datetime, lean: str | None) -> Placed:
        s = first(t.series.forward(datetime.min))
        if s is None:
            raise Unplaceable("no such date")
        return Placed(s[0], s[1], t.grain)

    def _place_relative(self, t: Relative, anchor: datetime, lean: str | None) -> Placed:
        start = cal.unit(self.reference, t.grain, t.offset)[0]
        return Placed(start, cal.add(start, t.grain, t.count), t.grain)

    def _place_now(self, t: Now, anchor: datetime, lean: str | None) -> Placed:
        return Placed(self.reference, self.reference, "second", point=True)

    def note_calendar(self, series: Series) -> None:
        """Where a holiday's days are a place's (:func:`~retrieval.timex.rules.holidays.in_places`), say whose."""
        if calendar := getattr(series, "calendar", ""):
            self.note("calendar", calendar, "a holiday's day on the calendars of the places the zone may be in")

    def _place_pick(self, t: Pick, anchor: datetime, lean: str | None) -> Placed:
        target, ref, mode = t.target, self.reference, t.mode
        self.note_calendar(target.series)
        period = target.period or "year"
        if mode == "period" and period == "week" and (
                (t.offset == -1 and self.conventions.last_weekday == "most_recent")
                or (t.offset == 1 and self.conventions.next_weekday == "first_after")):
            mode = "strict"
            self.note("weekday", "nearest", f"{'last' if t.offset < 0 else 'next'} = the "
                      f"{'latest before' if t.offset < 0 else 'first after'} the reference's day (the conventions "
                      f"of {self.conventions.name!r})")
        if t.offset == 0 and mode != "period":  # this winter: the one holding the reference, else this year's
            s = first(target.series.backward(ref))
            if s is not None and s[1] > ref:
                return Placed(s[0], s[1], target.grain)
        if mode == "period" or t.offset == 0:
            ps, pe = cal.unit(ref, period, t.offset)
            s = first(target.series.forward(ps))
            if s is None or s[0] >= pe:
                raise Unplaceable(f"no such {target.kind} in that {period}")
            if t.offset:
                self.note("count", f"{t.offset:+d} {period}", f"counted in whole {period}s from the reference's")
            return Placed(s[0], s[1], target.grain)
        day = cal.floor(ref, "day")
        if t.offset > 0:
            after = day + timedelta(days=1) if mode == "strict" else ref + timedelta(microseconds=1)
            found = list(take((s for s in target.series.forward(after) if s[0] >= after), t.offset))
            if len(found) < t.offset:
                raise Unplaceable(f"no {target.kind} after the reference")
            s = found[-1]
        else:
            before = day if mode == "strict" else ref
            found = [s for s in take(target.series.backward(before), -t.offset + 1) if s[1] <= before]
            if len(found) < -t.offset:
                raise Unplaceable(f"no {target.kind} before the reference")
            s = found[-t.offset - 1]
        return Placed(s[0], s[1], target.grain)

    def _place_within(self, t: Within, anchor: datetime, lean: str | None) -> Placed:
        c = self._place(t.coarse, anchor, lean)
        if t.nth is not None:
            s = first(NthWithin(t.nth, t.fine, one(c.span, c.grain)).forward(c.start))
        else:
            inside = list(take(t.fine.within(c.span), 2))
            if not inside and c.grain == "part_of_day":  # "tonight at 1am": 01:00 of that day
                inside = list(take(t.fine.within(cal.unit(c.start, "day")), 1))
            s = inside[0] if inside else None
        if s is None:
            raise Unplaceable(f"no such {t.kind} in {c.start:%Y-%m-%d}..{c.end:%Y-%m-%d}")
        return Placed(s[0], s[1], t.fine.grain)

    def _place_checked(self, t: Checked, anchor: datetime, lean: str | None) -> Placed:
        """A date with its weekday: a date without its year (or month) is taken in the year (month) next to the one
        the context picks in which it falls on that weekday ("Thursday the 21st", "Friday, June 9th"); a date that
        does not fall on it is read as the date, and the mismatch noted."""
        p = self._place(t.base, anchor, lean)
        if p.start.weekday() == t.weekday:
            return p
        if isinstance(t.base, Recurring) and (self.conventions.weekday_picks_year or t.base.period == "month"):
            period = t.base.period or "year"
            reach = 12 if period == "month" else 1  # a day of the month recurs monthly; a date only yearly
            found = []
            for step in (*range(-reach, 0), *range(1, reach + 1)):
                s = first(t.base.series.forward(cal.unit(p.start, period, step)[0]))
                if s is not None and s[0].weekday() == t.weekday:
                    found.append(s)
            # the lean's side first; a weekday that matches only on the other side still says which year it is
            if lean == "past":
                found = [s for s in found if s[0] <= self.reference] or found
            elif lean == "future":
                found = [s for s in found if s[0] >= self.reference] or found
            if found:
                s = min(found, key=lambda s: abs(s[0] - self.reference))
                self.note("weekday", WEEKDAYS[t.weekday].capitalize(),
                          f"the nearest {period} in which the date falls on that weekday")
                return Placed(s[0], s[1], p.grain)
        elif isinstance(t.base, (Shifted, Counted)) and cal.rank(p.grain) <= cal.rank("day"):
            # "Monday two weeks from now": the Monday of the week the count lands in
            monday = cal.floor(p.start, "week")
            day = monday + timedelta(days=t.weekday)
            self.note("weekday", WEEKDAYS[t.weekday].capitalize(), "the weekday of the week the count lands in")
            return Placed(day, day + timedelta(days=1), "day")
        self.note("weekday", "ignored", f"{WEEKDAYS[t.weekday].capitalize()} does not match "
                  f"{p.start.date().isoformat()}, a {WEEKDAYS[p.start.weekday()].capitalize()}: read as the date")
        return p

    # ---- moved and laid times ------------------------------------------------------------------------------------


__all__ = ["OPEN_START", "Choice", "Placed", "Placer", "Unplaceable"]
