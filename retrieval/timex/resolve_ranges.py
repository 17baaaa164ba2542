"""Placing ranges and bounds: which end is placed first, what a time written once for both ends means, and where
an open range stops (:class:`RangePlacing`, a part of :class:`~retrieval.timex.resolve.Placer`)."""

from __future__ import annotations

from datetime import datetime, timedelta

from retrieval.timex import calendar as cal
from retrieval.timex.placed import OPEN_START, Placed, Unplaceable, take
from retrieval.timex.placing import PlacerPart
from retrieval.timex.rules.parts import Bare
from retrieval.timex.series import Series, first
from retrieval.timex.values import Bound, Range, Recurring, Time, grain_of


class RangePlacing(PlacerPart):
    """The placing of ranges and bounds; ``self`` is the :class:`~retrieval.timex.resolve.Placer`."""

    def _place_range(self, t: Range, anchor: datetime, lean: str | None) -> Placed:
        day_only = isinstance(t.start, Recurring) and t.start.kind == "day_of_month" and t.end.kind != "day_of_month"
        if t.shared is not None:
            start, end = self._place_shared(t, t.shared, anchor, lean)
        elif not day_only and (t.start.definite or (not t.end.definite and lean != "past")):
            start = self._place(t.start, anchor, lean)
            end = self._place(t.end, anchor, lean) if t.end.definite else self._place_from(t.end, start)
        else:  # the end first, and the start the latest one up to it ("nov - feb 2017", "between June and March")
            end = self._place(t.end, anchor, lean)
            start = self._place_before(t.start, end)
            later = self._place_from(t.start, end) if not t.end.definite else None
            if later is not None and later.start <= self.reference and (
                    later.end - end.start < end.end - start.start):
                self.note("range", "reversed", f"it names its later end first: read as {end.start:%Y-%m-%d} to "
                          f"{(later.end - timedelta(days=1)):%Y-%m-%d}, the shorter of the two readings")
                start, end = end, later
        if end.start < start.start:
            self.note("range", "reversed", f"it names its later end first: read as {end.start:%Y-%m-%d} to "
                      f"{(start.end - timedelta(days=1)):%Y-%m-%d}")
            start, end = end, start
        inclusive = t.inclusive and self.conventions.range_end == "inclusive"
        clock = cal.rank(end.grain) < cal.rank("day") or end.point
        stop = end.start if clock or not inclusive else end.end
        if stop <= start.start:
            stop = end.end
        return Placed(start.start, stop, "span")

    def _place_shared(self, t: Range, shared: Time, anchor: datetime, lean: str | None) -> tuple[Placed, Placed]:
        """The ends of a range inside the time written once for both (``shared``): clock times from the start on
        (the end follows it), days and months from the end back (the start is the latest one up to it, in the
        shared time when it has one there)."""
        c = self._place(shared, anchor, lean)
        fine = cal.rank(grain_of(t.end)) < cal.rank("day")
        s_series, e_series = _series_of(t.start, c), _series_of(t.end, c)
        if fine:
            start = self._in(t.start, s_series, c, None)
            end = self._in(t.end, e_series, c, start, after=True)
            return start, end
        end = self._in(t.end, e_series, c, None)
        start = self._in(t.start, s_series, c, end, after=False)
        return start, end

    def _in(self, t: Time, series: Series | None, c: Placed, other: Placed | None, after: bool = True) -> Placed:
        """One end of a shared range: its instance inside ``c`` (after ``other``'s start, or the latest up to its
        start), else the nearest outside it; a time that places on its own is placed so."""
        if series is None:
            return self._place(t, c.start, None)
        inside = list(take(series.within(c.span), 400))
        if not inside and c.grain == "part_of_day":
            inside = list(take(series.within(cal.unit(c.start, "day")), 48))
        if other is not None:
            ok = [s for s in inside if (s[0] >= other.start if after else s[0] <= other.start)]
            if ok:
                s = ok[0] if after else ok[-1]
            else:
                s = first(series.forward(other.start)) if after else first(series.backward(other.start))
        else:
            s = inside[0] if inside else None
        if s is None:
            raise Unplaceable(f"no such {t.kind} in {c.start:%Y-%m-%d}")
        return Placed(s[0], s[1], series.grain)

    def _place_from(self, t: Time, start: Placed) -> Placed:
        """A range's end that needs a lean: the first one from the range's start."""
        if isinstance(t, Recurring):
            for s in t.series.forward(start.start):
                if s[0] >= start.start and (s[0] > start.start or s[1] > start.end):
                    return Placed(s[0], s[1], t.grain)
            raise Unplaceable("no end after the start")
        return self._place(t, start.start, "future")

    def _place_before(self, t: Time, end: Placed) -> Placed:
        """A range's start that needs a lean: the latest one up to the range's end."""
        if isinstance(t, Recurring):
            for s in t.series.backward(end.start):
                if s[0] <= end.start:
                    return Placed(s[0], s[1], t.grain)
            raise Unplaceable("no start before the end")
        return self._place(t, end.start, "past")

    def _place_bound(self, t: Bound, anchor: datetime, lean: str | None) -> Placed:
        # "since January" runs from a January up to now, so it is the last one, whatever the sentence's tense
        b = self._place(t.base, anchor, "past" if t.prep == "since" else lean)
        tomorrow = cal.floor(self.reference, "day") + timedelta(days=1)
        if t.prep in ("since", "from"):
            out = (b.start, tomorrow)
        elif t.prep == "after":
            out = (b.end, tomorrow)
        elif t.prep == "before":
            out = (OPEN_START, b.start)
        else:  # until, till, by
            out = (OPEN_START, b.end)
        if out[0] >= out[1]:
            raise Unplaceable(f"{t.prep} {b.start:%Y-%m-%d} leaves no time up to today ({self.reference:%Y-%m-%d})")
        return Placed(out[0], out[1], "span")


def _series_of(t: Time, c: Placed) -> Series | None:
    """The spans an end of a shared range may take: a recurring end's own (a bare number's as an hour or a day of
    the month by the shared time's grain); None for an end that places on its own."""
    if isinstance(t, Bare):
        read = t.as_hour() if cal.rank(c.grain) <= cal.rank("day") or c.grain == "part_of_day" else t.as_day()
        return read.series if read is not None else None
    return t.series if isinstance(t, Recurring) else None
