"""What the rules are built from: regular-expression fragments for the atoms (a month, a day of the month, a year, a
clock time), tests on chart values, and the constructors that compose times (:func:`intersect`, :func:`pick`).

:func:`intersect` is the one place that says what two times written side by side mean ("Friday" + "next week",
"June 9th" + "2023", "8am" + "tomorrow", "from 4 to 22" + "this month"), so every rule that puts two times together
reads them the same way.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, timedelta
from typing import TypeGuard

from retrieval.timex import calendar as cal
from retrieval.timex import series as S
from retrieval.timex.lexicon import FULL_MONTHS, MONTHS, WEEKDAY_NUMBERS
from retrieval.timex.values import (
    Absolute,
    Checked,
    Duration,
    EitherOrder,
    Part,
    Pick,
    Range,
    Recurring,
    Relative,
    Shifted,
    Time,
    Within,
    grain_of,
)

# ---- fragments ---------------------------------------------------------------------------------------------------
MONTH = r"(?:{})".format("|".join(sorted(MONTHS, key=len, reverse=True)))
# a month's name, its abbreviation with or without a dot ("Dec." but not "December.": that dot ends a sentence)
MONTH_DOT = "(?:" + "|".join(sorted([m if m in FULL_MONTHS else m + r"\.?" for m in MONTHS], key=len,
                                     reverse=True)) + ")"
WEEKDAY = r"(?:{})".format("|".join(sorted(WEEKDAY_NUMBERS, key=len, reverse=True)))
WEEKDAY_DOT = "(?:" + "|".join(sorted([d if d.endswith("day") else d + r"\.?" for d in WEEKDAY_NUMBERS], key=len,
                                       reverse=True)) + ")"
DOM = r"(?:[12]\d|3[01]|0?[1-9])"
ORD = r"(?:st|nd|rd|th)"
YEAR4 = r"(?:1\d{3}|2\d{3})"
AMPM = r"(?:a\.m\.|p\.m\.|am|pm|a|p)"


def month_number(text: str) -> int:
    return MONTHS[text.rstrip(".").strip()]


def weekday_number(text: str) -> int:
    return WEEKDAY_NUMBERS[text.rstrip(".").strip()]


# ---- tests on chart values ------------------------------------------------------------------------------------------
def is_time(v: object) -> TypeGuard[Time]:
    return isinstance(v, Time)


def is_firm(v: object) -> TypeGuard[Time]:
    return isinstance(v, Time) and not v.latent


def is_recurring(v: object) -> TypeGuard[Recurring]:
    return isinstance(v, Recurring)


def is_duration(v: object) -> TypeGuard[Duration]:
    return isinstance(v, Duration)


# ---- atoms as times --------------------------------------------------------------------------------------------------
def date_of(year: int | None, month: int, day: int, kind: str = "date") -> Time | None:
    """A date; without a year, the recurring one. None for a date no calendar has (30 February)."""
    if year is None:
        if day > cal.days_in_month(2000, month):
            return None
        return Recurring(series=S.Intersect(S.month_of_year(month), S.day_of_month(day)), period="year", kind=kind)
    try:
        return Absolute(series=S.one(cal.day_span(date(year, month, day)), "day"), kind=kind)
    except ValueError:
        return None


def month_time(year: int | None, month: int) -> Time:
    if year is None:  # "next July" said in June is this July; "last June" said in October, this June
        return Recurring(series=S.month_of_year(month), period="year", kind="month", relative="nearest")
    start = datetime(year, month, 1)
    return Absolute(series=S.one((start, cal.add_months(start, 1)), "month"), kind="month")


def year_time(year: int, latent: bool = False) -> Absolute:
    return Absolute(series=S.one(cal.unit(datetime(year, 1, 1), "year"), "year"), kind="year", latent=latent)


def weekday_time(n: int) -> Recurring:
    return Recurring(series=S.weekday(n), period="week", kind="weekday")


def clock_series(hour: int, minute: int = 0, second: int | None = None, ampm: str | None = None,
                 grain: str | None = None) -> S.Series | None:
    """A time of day; without am / pm, an hour from 1 to 12 is either (08:00 or 20:00)."""
    if ampm:
        ampm = ampm[0]
        if not 1 <= hour <= 12:
            if hour == 0 or hour > 12 and ampm == "p":  # "0am", "13pm": the written hour
                ampm = None
            else:
                return None
    if hour > 24 or minute > 59 or (second or 0) > 59:
        return None
    grain = grain or ("second" if second is not None else "minute" if minute else "hour")
    length = cal.FIXED[grain]
    if ampm:
        h = hour % 12 + (12 if ampm == "p" else 0)
        return S.Daily(timedelta(hours=h, minutes=minute, seconds=second or 0), length, grain)
    h = hour % 24
    at = S.Daily(timedelta(hours=h, minutes=minute, seconds=second or 0), length, grain)
    if 1 <= hour <= 11:
        return S.Union(at, S.Daily(timedelta(hours=h + 12, minutes=minute, seconds=second or 0), length, grain))
    return at


def clock_time(hour: int, minute: int = 0, second: int | None = None, ampm: str | None = None,
               latent: bool = False, grain: str | None = None) -> Recurring | None:
    series = clock_series(hour, minute, second, ampm, grain)
    return None if series is None else Recurring(series=series, period="day", kind="clock", latent=latent)


def part_of_day(part: str, hours: tuple[int, int]) -> Recurring:
    a, b = hours
    return Recurring(series=S.Daily(timedelta(hours=a), timedelta(hours=b - a), "part_of_day", part), period="day",
                     kind=part)


# ---- composition -------------------------------------------------------------------------------------------------
def weekday_series(t: Time) -> S.Where | None:
    """The series of a time that is a weekday and nothing more ("Friday"), else None."""
    if isinstance(t, Recurring) and isinstance(t.series, S.Where) and t.series.key[0] == "weekday":
        return t.series
    return None


def is_weekday_only(t: Time) -> bool:
    return weekday_series(t) is not None


def weekday_of(t: Time) -> int | None:
    """The weekday a time names and nothing more ("Friday", "this Friday"), else None."""
    if isinstance(t, Pick):
        return weekday_of(t.target)
    series = weekday_series(t)
    return series.key[1] if series is not None else None


def is_clock(t: Time) -> TypeGuard[Recurring]:
    return isinstance(t, Recurring) and t.kind == "clock"


def clock_of(t: Time) -> Recurring | None:
    """The clock time a time is made of ("8pm", "8pm tomorrow"), else None."""
    if is_clock(t):
        return t
    if isinstance(t, Within) and t.kind == "clock":
        return Recurring(series=t.fine, period="day", kind="clock")
    return None


def with_clock(t: Time, clock: Recurring) -> Time:
    """``t`` with its clock time replaced by ``clock`` (as :func:`clock_of` found it)."""
    if is_clock(t):
        return clock
    if isinstance(t, Within):  # a clock time in a day (clock_of)
        return replace(t, fine=clock.series)
    raise TypeError(f"{t!r} holds no clock time")


def meridiem(clock: Recurring) -> str | None:
    """"a" or "p" for a clock time that says which half of the day it is in; None for one that may be either."""
    sr = clock.series
    if isinstance(sr, S.Daily):
        return "p" if sr.offset.total_seconds() >= 12 * 3600 else "a"
    return None


def part_name(t: object) -> str | None:
    """The part of the day a time names ("tomorrow evening": evening), else None."""
    if isinstance(t, Recurring) and isinstance(t.series, S.Daily) and t.series.grain == "part_of_day":
        return t.kind
    if isinstance(t, Within) and isinstance(t.fine, S.Daily) and t.fine.grain == "part_of_day":
        return t.kind
    if isinstance(t, Pick):
        return part_name(t.target)
    return None


def clock_in_part(clock: Recurring, part: str) -> Recurring:
    """A clock time read in a part of the day: "7" in the evening is 19:00, in the morning 07:00; late at night
    the small hours ("tonight around 3") stay before noon."""
    sr = clock.series
    if not isinstance(sr, S.Union) or not isinstance(sr.a, S.Daily):  # not an hour of either half of the day
        return clock
    am, pm = sr.a, sr.b
    hour = int(am.offset.total_seconds() // 3600)
    use_pm = part in ("afternoon", "evening", "night") and not (part == "night" and hour <= 4)
    return replace(clock, series=pm if use_pm else am)


def day_of_part(t: Time) -> Time | None:
    """The day a part-of-day time lies in, as a time ("tomorrow evening" -> tomorrow); None for a bare part."""
    if isinstance(t, Within):
        return t.coarse
    if isinstance(t, Pick):
        return Relative(grain="day", offset=t.offset, kind="relative_day")
    return None


def intersect(a: Time, b: Time) -> Time | None:
    """Two times written side by side as one: the finer inside the coarser.

    - a clock time beside a part of the day takes its half of the day ("8 tonight": 20:00 of today);
    - a weekday beside a date checks the date (the date is read, a mismatch noted), except that a date without its
      year takes the year in which it falls on that weekday ("Friday, June 9th");
    - two recurring times make a recurring one ("Monday 21", "Tuesday morning"), read in the coarser's period;
    - a recurring time beside a placed one lies within it ("Friday" + "next week", "8am" + "tomorrow");
    - a range beside a time shares it ("from 4 to 22" + "this month");
    - two placed times of the same grain do not combine (None).
    """
    if a.latent and b.latent and not (isinstance(a, Range) or grain_of(b) == "year"):
        return None
    for outer, other in ((a, b), (b, a)):
        # "Monday, January 12th" + "2016", "Halloween weekend" + "2021", "2 weeks before Christmas" + "2016": the
        # coarser time goes to the date inside
        if isinstance(outer, EitherOrder) and not isinstance(other, (Range, Checked)):
            one, two = intersect(outer.base, other), intersect(outer.other, other)
            return None if one is None or two is None else replace(outer, base=one, other=two)
        if isinstance(outer, (Checked, Part, Shifted)) and not outer.base.definite and not isinstance(
                other, (Range, Checked)) and not is_weekday_only(other) and cal.rank(grain_of(other)) > cal.rank(
                grain_of(outer.base)):
            inner = intersect(outer.base, other)
            return None if inner is None else replace(outer, base=inner)
    if isinstance(a, Range):
        return None if isinstance(b, Range) else shared_range(a, b)
    if isinstance(b, Range):
        return shared_range(b, a)
    # a clock beside a part of the day ("7 tonight"; "May 5, 20 past 8" + "in the evening")
    for clock_t, part in ((a, b), (b, a)):
        name, clock = part_name(part), clock_of(clock_t)
        if clock is not None and name:
            adjusted = clock_in_part(clock, name)
            day = day_of_part(part)
            if is_clock(clock_t):
                return adjusted.but(latent=False) if day is None else Within(fine=adjusted.series, coarse=day,
                                                                               kind="clock")
            if day is None:
                return with_clock(clock_t, adjusted)
    ga, gb = cal.rank(grain_of(a)), cal.rank(grain_of(b))
    fine, coarse = (a, b) if ga <= gb else (b, a)
    if ga == gb and weekday_of(a) is None and weekday_of(b) is None:
        return None  # two days, two months: a range or a list, not one time
    if clock_of(a) is not None and clock_of(b) is not None or max(ga, gb) < cal.rank("day"):
        return None  # two times of the day
    # a weekday beside a day
    for wd_t, day_t in ((a, b), (b, a)):
        wd = weekday_of(wd_t)
        if wd is not None and cal.rank(grain_of(day_t)) == cal.rank("day") and not is_weekday_only(day_t):
            return Checked(base=day_t, weekday=wd, kind=day_t.kind)
    if isinstance(fine, Recurring) and isinstance(coarse, Recurring):
        if _contradict(fine.series, coarse.series):
            return None  # "November" and "December 18"
        period = max((p for p in (fine.period, coarse.period) if p), key=cal.rank, default=None)
        if coarse.period and cal.rank(coarse.grain) >= cal.rank(fine.period or "day"):
            period = coarse.period
        return Recurring(series=S.Intersect(fine.series, coarse.series), period=period, kind=fine.kind,
                         relative=coarse.relative)
    if isinstance(fine, Recurring) and isinstance(coarse, Absolute):
        return Absolute(series=S.Intersect(fine.series, coarse.series), kind=fine.kind)
    if isinstance(fine, Recurring):
        if ga == gb and not is_weekday_only(fine):
            return None
        return Within(fine=fine.series, coarse=coarse, kind=fine.kind)
    if isinstance(fine, Absolute) and isinstance(coarse, (Absolute, Recurring)) and ga == gb:
        return None
    if isinstance(fine, Absolute) and ga < gb and isinstance(coarse, Absolute) and grain_of(coarse) in (
            "month", "quarter", "half", "year"):
        return fine  # a placed finer time already says which coarse one ("2016-12-22" + "2016")
    return None


def _fields(series: S.Series) -> dict[str, object]:
    """The calendar fields a recurring set fixes (month, day of the month, weekday, ...), by name."""
    if isinstance(series, S.Where):
        return {series.key[0]: series.key[1]}
    if isinstance(series, S.Intersect):
        return {**_fields(series.a), **_fields(series.b)}
    return {}


def _contradict(a: S.Series, b: S.Series) -> bool:
    fa, fb = _fields(a), _fields(b)
    return any(k in fb and fb[k] != v for k, v in fa.items())


def shared_range(rng: Range, other: Time) -> Range | None:
    """A range and a time written once for both its ends: "from 4 to 22" + "this month", "tomorrow" + "between 8am
    and 2pm", "nov 18 - dec 19" + "2015". The time must be coarser than the ends; in a part of the day, clock-time
    ends take its half of the day ("between 7 and 9:30 last night": 19:00 to 21:30)."""
    if cal.rank(grain_of(other)) <= cal.rank(grain_of(rng.start)) and not isinstance(rng.start, Bare):
        return None
    if isinstance(other, Bare) or other.latent and not isinstance(other, Absolute):
        return None
    shared = other if rng.shared is None else intersect(rng.shared, other)
    if shared is None:
        return None
    name = part_name(other)
    if name:
        rng = replace(rng, start=in_part(rng.start, name), end=in_part(rng.end, name))
    return replace(rng, shared=shared, latent=False)


def in_part(end: Time, part: str) -> Time:
    """A range's end read in a part of the day: a bare number is an hour, and an hour takes that part's half."""
    if isinstance(end, Bare):
        hour = end.as_hour()
        if hour is None:
            return end
        end = hour
    clock = clock_of(end)
    return end if clock is None else with_clock(end, clock_in_part(clock, part))


class Bare(Recurring):
    """A number alone ("15", "at 7"): a day of the month, or an hour, by what is around it."""

    def as_day(self) -> Recurring | None:
        n = self.number
        return None if not 1 <= n <= 31 else Recurring(series=S.day_of_month(n), period="month",
                                                        kind="day_of_month", latent=self.latent)

    def as_hour(self) -> Recurring | None:
        return clock_time(self.number, latent=self.latent) if 0 <= self.number <= 24 else None

    @property
    def number(self) -> int:
        series = self.series
        if not isinstance(series, S.Where):
            raise TypeError(f"a bare number's series is its test of the day, not {series!r}")
        return series.key[1]


def bare(n: int, latent: bool = True) -> Bare | None:
    if not 0 <= n <= 31:
        return None
    return Bare(series=S.Where("day", ("bare", n), lambda d: d.day == n, 800), period="month",
                kind="day_of_month", latent=latent)


def day_of_month(n: int) -> Recurring | None:
    """The n-th day of every month ("the 5th"), latent; None outside 1-31."""
    number = bare(n)
    return None if number is None else number.as_day()


def pick(target: Time, offset: int, mode: str = "period") -> Time | None:
    """this (0) / next (1) / last (-1) of a time: a unit of its own ("next week") counts from the reference; a
    recurring time picks by period ("next Friday") or by instance (named days: "next Easter")."""
    if isinstance(target, Recurring) and not isinstance(target, Bare):
        if target.relative == "nearest" and mode == "period":
            mode = "nearest"
        return Pick(target=target, offset=offset, mode=mode, kind=target.kind)
    return None


def part_of(base: Time, part: str) -> Part | None:
    return Part(base=base, part=part, kind=f"{part}_of")
