"""Dates written in digits: year-month-day ("2016-11-07", "2015.5.13"), day and month in either order ("21/04/2016",
"02/22/2016", "3-7-27"), month and year ("2015-3", "11/2016"), compact forms ("20161016"), and a month's name
among numbers ("2019-sep-1", "23/sep/2020").

Order: year first is year-month-day; otherwise a first number above 12 is the day ("21/04/2016"), a second above 12
the day ("02/22/2016"), and else month first (US usage), except that dots mean day first ("13.5.2015", European
usage). A two-digit year falls in the century window that ends 20 years after the reference
(:attr:`~retrieval.timex.context.Conventions.year_window`; "3/3/15" read in 2016 is 2015, "05/05/71" is 1971): the
grammar cannot know the reference, so such a date recurs every century and is placed there. A date no calendar has
("2/29/2019") is read as such and declined.
"""

from __future__ import annotations

from datetime import datetime

from retrieval.timex import calendar as cal
from retrieval.timex import series as S
from retrieval.timex.grammar import Grammar, lit
from retrieval.timex.rules.parts import MONTH, clock_time, date_of, intersect, month_number, month_time
from retrieval.timex.values import EitherOrder, Invalid, Recurring, Time

G = Grammar()


def two_digit_year(yy: int, month: int, day: int | None = None) -> Time | None:
    """A date whose year has two digits: recurring every century, placed in the window around the reference."""
    def span_of(century_year: int):
        year = century_year - century_year % 100 + yy
        try:
            return cal.unit(datetime(year, month, day or 1), "day" if day else "month")
        except ValueError:
            return None

    # one span a year would repeat each century's date 100 times; a Yearly keyed on the date yields it once per year
    # whose last two digits are yy
    def span_in(year: int):
        return span_of(year) if year % 100 == yy else None

    return Recurring(series=S.Yearly(("yy", yy, month, day), span_in, "day" if day else "month"),
                     period="century", kind="date" if day else "month")


def numeric_date(y: int | None, m: int, d: int | None, year_digits: int = 4) -> Time | None:
    if not 1 <= m <= 12 or (d is not None and not 1 <= d <= 31):
        return None
    if d is not None and year_digits == 4 and date_of(y, m, d) is None:
        return Invalid(reason=f"{y or ''}-{m:02d}-{d:02d} is no date", kind="date")
    if y is not None and year_digits == 2:
        return two_digit_year(y, m, d)
    if d is None:
        return month_time(y, m) if y is not None else None
    return date_of(y, m, d)


def order(a: int, b: int, dots: bool = False) -> tuple[int, int] | None:
    """(month, day) of two numbers written day and month in an unstated order."""
    if a > 12 and b > 12:
        return None
    if a > 12:
        return b, a
    if b > 12 or not dots:
        return a, b
    return b, a


# ---- numeric dates ---------------------------------------------------------------------------------------------------
@G.rule("iso-date", lit(r"(\d{4})-(\d{1,2})-(\d{1,2})(?:t(\d{2}):(\d{2})(?::(\d{2}))?)?(?!\d)"))
def iso_date(m):
    day = numeric_date(int(m[1]), int(m[2]), int(m[3]))
    if day is None or not m[4]:
        return day
    clock = clock_time(int(m[4]), int(m[5]), int(m[6]) if m[6] else None, grain="second" if m[6] else "minute")
    return None if clock is None else intersect(clock, day)


@G.rule("ymd", lit(r"(\d{4})\s?([/.])\s?(\d{1,2})\2(\d{1,2})(?![\d/])"))
def ymd(m):
    return numeric_date(int(m[1]), int(m[3]), int(m[4]))


@G.rule("mdy", lit(r"(\d{1,2})\s?([/.\-])\s?(\d{1,2})\2(\d{4}|\d{2})(?![\d/])"))
def mdy(m):
    a, b, dots = int(m[1]), int(m[3]), m[2] == "."
    md = order(a, b, dots=dots)
    if md is None:
        return None
    t = numeric_date(int(m[4]), md[0], md[1], len(m[4]))
    if a <= 12 and b <= 12 and a != b and not dots and t is not None:  # "3/4/2020": either order
        other = numeric_date(int(m[4]), b, a, len(m[4]))
        return t if other is None else EitherOrder(base=t, other=other, kind=t.kind)
    return t


@G.rule("md,y", lit(r"(\d{1,2})/(\d{1,2}),\s*(\d{4}|\d{2})(?!\d)"))
def md_comma_y(m):
    md = order(int(m[1]), int(m[2]))
    return None if md is None else numeric_date(int(m[3]), md[0], md[1], len(m[3]))


@G.rule("md", lit(r"(\d{1,2})/(\d{1,2})(?![\d/])"))
def md(m):
    a, b = int(m[1]), int(m[2])
    parsed = order(a, b)
    t = None if parsed is None else numeric_date(None, *parsed)
    if t is not None and a <= 12 and b <= 12 and a != b:
        other = numeric_date(None, b, a)
        return t if other is None else EitherOrder(base=t, other=other, kind=t.kind)
    return t


@G.rule("ym", lit(r"(\d{4})\s?[-/.]\s?(\d{1,2})(?![\d/.\-])"))
def year_month(m):
    return numeric_date(int(m[1]), int(m[2]), None) if 1000 <= int(m[1]) <= 2999 else None


@G.rule("my", lit(r"(\d{1,2})\s?[-/]\s?(\d{4})(?![\d/])"))
def month_year(m):
    return numeric_date(int(m[2]), int(m[1]), None)


@G.rule("yyyymmdd", lit(r"((?:19|20)\d{2})(\d{2})(\d{2})(?!\d)"))
def compact(m):
    return numeric_date(int(m[1]), int(m[2]), int(m[3]))


@G.rule("y m d spaced", lit(r"((?:19|20)\d{2})\s+(\d{1,2})\s+(\d{1,2})(?![\d:])"))
def spaced(m):
    t = numeric_date(int(m[1]), int(m[2]), int(m[3]))
    return t.but(latent=True) if t else None


# a month's name among numbers: 2019-sep-1, 05-aug-2016, sep-23-2020, 23/sep/2020, 2020/23/sep, september-2020-23
_PART = rf"(\d{{4}}|\d{{1,2}}|{MONTH})"


@G.rule("mixed numeric", lit(rf"{_PART}([/\-]){_PART}\2{_PART}(?![\d/])"))
def mixed(m):
    parts = [m[1], m[3], m[4]]
    names = [p for p in parts if not p.isdigit()]
    years = [p for p in parts if p.isdigit() and len(p) == 4]
    if len(names) != 1 or len(years) != 1:
        if len(names) == 1 and not years:  # 05-aug-16: day, month, two-digit year
            nums = [p for p in parts if p.isdigit()]
            return numeric_date(int(nums[1]), month_number(names[0]), int(nums[0]), 2)
        return None
    day = next(p for p in parts if p.isdigit() and len(p) <= 2)
    return numeric_date(int(years[0]), month_number(names[0]), int(day))


@G.rule("name-year", lit(rf"({MONTH})\s?[/\-]\s?(\d{{4}})(?!\d)"))
def name_year(m):
    return month_time(int(m[2]), month_number(m[1]))
