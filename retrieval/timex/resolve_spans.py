"""Placing times derived from another: shifted by a duration, the n-th of a weekday from a day, a duration laid
from a time, a part of a period (:class:`DerivedPlacing`, a part of :class:`~retrieval.timex.resolve.Placer`)."""

from __future__ import annotations

from datetime import datetime, timedelta

from retrieval.timex import calendar as cal
from retrieval.timex.calendar import Span
from retrieval.timex.placed import Placed, Unplaceable, take
from retrieval.timex.placing import PlacerPart
from retrieval.timex.rules.holidays import weekend_of
from retrieval.timex.values import Counted, Now, Part, Shifted, Window


class DerivedPlacing(PlacerPart):
    """The placing of shifts, counts, windows and parts; ``self`` is the :class:`~retrieval.timex.resolve.Placer`."""

    def _place_shifted(self, t: Shifted, anchor: datetime, lean: str | None) -> Placed:
        base = self._place(t.base, anchor, lean)
        moved = t.duration.move(base.start, t.sign)
        fine = t.duration.finest
        if cal.rank(fine) < cal.rank("day"):
            return Placed(moved, moved, "second", point=True)
        result = t.result
        if result == "auto":  # a count from now follows the conventions; from another time, that day
            result = "day"
            if isinstance(t.base, Now):
                result = self.conventions.ago if t.sign < 0 else self.conventions.ahead
        if result == "keep" and not base.point:
            return Placed(moved, t.duration.move(base.end, t.sign), base.grain)
        if result == "unit" and fine == "week" and self.conventions.ago_weeks == "rolling":
            day = cal.floor(moved, "day")
            return Placed(day, day + timedelta(days=7), "week")
        if result == "unit" and fine in ("week", "month", "quarter", "year", "decade"):
            s = cal.unit(moved, fine)
            self.note("shift", f"that {fine}", f"a count of {fine}s names the {fine} it lands in (conventions "
                      f"{self.conventions.name!r})")
            return Placed(s[0], s[1], fine)
        s = cal.unit(moved, "day")
        return Placed(s[0], s[1], "day")

    def _place_counted(self, t: Counted, anchor: datetime, lean: str | None) -> Placed:
        base = self._place(t.base, anchor, lean)
        if t.sign > 0:
            after = cal.floor(base.start, "day") + timedelta(days=1)
            found = [s for s in take(t.series.forward(after), t.n) if s[0] >= after]
        else:
            before = cal.floor(base.start, "day")
            found = [s for s in take(t.series.backward(before), t.n + 1) if s[1] <= before]
        if len(found) < t.n:
            raise Unplaceable("not that many")
        s = found[t.n - 1]
        return Placed(s[0], s[1], t.series.grain)

    def _place_window(self, t: Window, anchor: datetime, lean: str | None) -> Placed:
        fine = t.duration.finest
        if t.base is not None:
            base = self._place(t.base, anchor, lean)
            at = base.start if t.sign > 0 else (base.end if not base.point else base.start)
            ends = sorted((at, t.duration.move(at, t.sign)))
            return Placed(ends[0], ends[1], "span")
        ref = self.reference
        if t.style == "cycles":
            now = cal.floor(ref, fine)
            count = sum(n for _, n in t.duration.parts)
            if t.sign > 0:
                return Placed(cal.add(now, fine, 1), cal.add(now, fine, 1 + count), "span")
            return Placed(cal.add(now, fine, -count), now, "span")
        if t.style == "from_reference" or cal.rank(fine) < cal.rank("day"):
            ends = sorted((ref, t.duration.move(ref, t.sign)))
            return Placed(ends[0], ends[1], "span")
        day = cal.floor(ref, "day")
        if t.sign > 0:
            return Placed(day + timedelta(days=1), t.duration.move(day + timedelta(days=1), 1), "span")
        end = day + timedelta(days=1) if self.conventions.window_today else day
        if self.conventions.window_today:
            self.note("window", "with today", "the reference's own day counts")
        return Placed(t.duration.move(day, -1), end, "span")

    def _place_part(self, t: Part, anchor: datetime, lean: str | None) -> Placed:
        b = self._place(t.base, anchor, lean)
        s, e, grain = b.start, b.end, b.grain
        ref = self.reference
        if t.part in ("weekend", "week"):
            if t.part == "week":
                return Placed(*cal.unit(s, "week"), "week")
            first_day, after = weekend_of(s.date())
            return Placed(datetime.combine(first_day, datetime.min.time()),
                          datetime.combine(after, datetime.min.time()), "weekend")
        if t.part == "end_point":
            return Placed(e - timedelta(seconds=1), e, "second")
        if t.part in ("start_instant", "middle_instant", "end_instant"):  # "from 2007 to the end of 2008"
            at = {"start_instant": s, "end_instant": e, "middle_instant": _middle(s, e, grain)}[t.part]
            return Placed(at, at, grain, point=True)
        if t.part == "rest":
            start = ref if cal.rank(grain) <= cal.rank("day") else cal.floor(ref, "day")
            if not s <= start < e:
                start = s
            return Placed(start, e, "span")
        if t.part in ("earlier", "later"):
            cut = cal.floor(ref, "day") if cal.rank(grain) > cal.rank("day") else ref
            if self.conventions.earlier_later == "half":
                mid = _middle(s, e, grain)
                cut = min(cut, mid) if t.part == "earlier" else max(cut, mid)
            cut = min(max(cut, s), e)
            out = (s, cut) if t.part == "earlier" else (cut, e)
            if out[0] >= out[1]:
                raise Unplaceable(f"'{t.part} this {grain}' on its first day names no {t.part} day")
            return Placed(out[0], out[1], "span")
        part = t.part
        if part in ("early", "late"):
            part = {"early": "beginning", "late": "end"}[part] if self.conventions.early_late == "thirds" else (
                {"early": "first_half", "late": "second_half"}[part])
        if part in ("first_half", "second_half"):
            mid = _middle(s, e, grain)
            return Placed(*((s, mid) if part == "first_half" else (mid, e)), "span")
        return Placed(*_thirds(s, e, grain)[part], "span")

    # ---- ranges and bounds -----------------------------------------------------------------------------------


def _middle(s: datetime, e: datetime, grain: str) -> datetime:
    """Where the first half of a span ends: Thursday of a week, the 16th of a month, 1 July of a year, noon."""
    if grain == "week":
        return s + timedelta(days=3)
    if grain == "month":
        return s.replace(day=16)
    if grain in ("quarter", "half", "year", "decade", "century"):
        months = cal.MONTHS_IN[grain] // 2
        return cal.add_months(s, months) if months else s
    return s + (e - s) / 2


def _thirds(s: datetime, e: datetime, grain: str) -> dict[str, Span]:
    """The beginning, middle and end of a span: days 1-10, 11-20 and 21 on of a month; January-April, May-August
    and September-December of a year; Monday-Wednesday, Tuesday-Friday and Thursday-Sunday of a week."""
    if grain == "month":
        a, b = s.replace(day=11), s.replace(day=21)
    elif grain == "week":
        return {"beginning": (s, s + timedelta(days=3)), "middle": (s + timedelta(days=1), s + timedelta(days=5)),
                "end": (s + timedelta(days=3), e)}
    elif grain in ("quarter", "half", "year", "decade", "century"):
        months = cal.MONTHS_IN[grain]
        a, b = cal.add_months(s, months // 3), cal.add_months(s, 2 * months // 3)
    else:
        a, b = s + (e - s) / 3, s + 2 * (e - s) / 3
    return {"beginning": (s, a), "middle": (a, b), "end": (b, e)}
