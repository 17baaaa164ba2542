"""Dates and calendar periods named outright: a day of a month with or without its year, in words or in digits in
the common orders; a month, quarter, half, year, decade, century; the n-th week of a year; weekdays and the
n-th weekday of a month; holidays and seasons.

Dates in digits are :mod:`.numeric`'s.
"""

from __future__ import annotations

from datetime import datetime

from retrieval.timex import calendar as cal
from retrieval.timex import series as S
from retrieval.timex.grammar import Grammar, Of, lit, optional, words
from retrieval.timex.lexicon import DECADE_WORDS, SEASONS
from retrieval.timex.rules.holidays import HOLIDAY_PATTERN, holiday_season, holiday_time
from retrieval.timex.rules.numeric import two_digit_year
from retrieval.timex.rules.parts import (
    DOM,
    MONTH_DOT,
    ORD,
    WEEKDAY,
    WEEKDAY_DOT,
    YEAR4,
    Bare,
    bare,
    date_of,
    day_of_month,
    grain_of,
    intersect,
    is_recurring,
    is_time,
    month_number,
    month_time,
    part_name,
    weekday_number,
    weekday_time,
    year_time,
)
from retrieval.timex.values import Absolute, Invalid, Range, Recurring, Within

G = Grammar()


# ---- dates in words ------------------------------------------------------------------------------------------------
@G.rule("month day", lit(rf"({MONTH_DOT})[\s\-]*(?:the\s+)?({DOM}){ORD}?(?![\d:])"))
def month_day(m):
    return date_of(None, month_number(m[1]), int(m[2])) or Invalid(reason=f"{m[0]!r} is no date", kind="date")


@G.rule("day month", lit(rf"(?:the\s+)?({DOM})(?:{ORD}|\.)?(?:\s+day)?\s*(?:of\s+)?({MONTH_DOT})(?![a-z])"))
def day_month(m):
    return date_of(None, month_number(m[2]), int(m[1]))


@G.rule("month (of|in) year", lit(rf"({MONTH_DOT})(?:\s*,\s*|\s+of\s+|\s+in\s+|\s+)({YEAR4})(?![\d:])|"
                                  rf"({MONTH_DOT})(?:\s*,\s*|\s+of\s+|\s+')(\d{{2}})(?![\d:])"))
def month_of_year(m):
    if m[3]:
        return two_digit_year(int(m[4]), month_number(m[3]))
    return month_time(int(m[2]), month_number(m[1]))


@G.rule("year month", lit(rf"({YEAR4})\s*,?\s*({MONTH_DOT})(?![a-z])(?!\s*{DOM}(?![\d]))"))
def year_then_month(m):
    return month_time(int(m[1]), month_number(m[2]))


@G.rule("date, year", Of(lambda v: is_recurring(v) and v.kind == "date"),
        lit(rf"(?:,\s*|\s+of\s+|\s+in\s+)?({YEAR4})(?![\d:])|(?:,\s*|\s+of\s+|\s*')(\d{{2}})(?![\d:])"))
def date_year(t, m):
    year = m[1] or m[2]
    if len(year) == 2:
        try:  # (month, day) of a date's month_of_year & day_of_month
            key = t.series.a.key[1], t.series.b.key[1]
        except AttributeError:
            return None
        return two_digit_year(int(year), *key)
    return intersect(t, year_time(int(year)))


@G.rule("the year", lit(r"(?:the\s+)?(?:calendar\s+)?year\s+(\d{1,4})(?!\d)"))
def the_year(m):
    return year_time(int(m[1]))


def yy_year(y: int) -> Recurring:
    """A year written with two digits ("CY23", "'98"): every century's, placed in the century window."""
    return Recurring(series=S.Yearly(("yy-year", y), lambda yr: cal.unit(
        datetime(yr, 1, 1), "year") if yr % 100 == y else None, "year"), period="century", kind="year")


@G.rule("cy", lit(r"cy\s*(\d{4}|\d{2})(?!\d)"))
def cy(m):
    y = int(m[1])
    return year_time(y) if y > 99 else yy_year(y)


@G.rule("year range", lit(rf"({YEAR4})\s*[-~]\s*({YEAR4})(?![\d:/\-]|\.\d)"))
def year_range(m):
    return Range(start=year_time(int(m[1])), end=year_time(int(m[2])), kind="span")


@G.rule("bare year", lit(r"=?((?:1\d|2\d)\d{2})(?![\d:/\-]|\.\d|\s*(?:am|pm|a\.m|p\.m)\b)"))
def bare_year(m):
    return year_time(int(m[1]), latent=True)


_IN_YEAR = ("in", "during", "of", "for", "throughout", "since", "fiscal", "calendar", "by")


@G.rule("in year", words(*_IN_YEAR), lit(rf"({YEAR4})(?![\d:/\-]|\.\d)"))
def in_year(_, m):
    return year_time(int(m[1]))


_YY = r"['’](\d{2})(?![\d'’]|\s*s\b)"  # "'98" ("the '40s" is a decade)


@G.rule("'yy", lit(_YY))
def apostrophe_year(m):  # alone latent, as a bare year is: "the '16 Finals" names a final, not when
    return yy_year(int(m[1])).but(latent=True)


@G.rule("in 'yy", words(*(w for w in _IN_YEAR if w not in ("since", "by"))), lit(_YY))
def in_apostrophe_year(_, m):  # "back in '98", "class of '05" ("since '15" is a bound, ranges.since)
    return yy_year(int(m[1]))


# what may follow "the 15th" that is a day of the month: the end of its clause, or a word that starts another part of
# the sentence (a time, a conjunction, a verb or its subject), never a noun it would count ("the 15th century")
_AFTER_DAY = (r"(?=\s*(?:[.,!?;:)]|$)|\s+(?:at|and|or|but|so|once|instead|when|then|which|if|too|is|was|will|would|"
              r"works|we|i|he|she|they|you|it)\b)")


# after "on the 20th" (a preposition before it: a day, not a rank), a phrase may start too: "on the 20th for a
# cleaning", "on the 3rd with Dr Osei", "on the 5th in the afternoon" ("on the 5th floor" is still a count)
_AFTER_ON_DAY = r"(?=\s+(?:for|with|in|to|from|after|before|by|around|like|because|since|until|till)\b)"


@G.rule("on the nth", lit(rf"(?:(?:on|for|by|until|till|before|after|from|since|around|of)\s+the\s+({DOM}){ORD}"
                          rf"(?:{_AFTER_DAY}|{_AFTER_ON_DAY})|the\s+({DOM}){ORD}{_AFTER_DAY})"))
def on_the_nth(m):  # "the race was on the 5th.", "scheduled for the 26th", "he said the 15th, once...": a day of the
    day = day_of_month(int(m[1] or m[2]))  # month where nothing after it makes it a count
    return None if day is None else day.but(latent=False)


@G.rule("bare number", lit(r"(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)?(?![\d:/.]|\s*(?:am|pm|a\.m|p\.m|%))"))
def bare_number(m):
    return bare(int(m[1]))


# ---- decades and centuries ---------------------------------------------------------------------------------------
def decade(start: int) -> Absolute:
    return Absolute(series=S.one((datetime(start, 1, 1), datetime(start + 10, 1, 1)), "decade"), kind="decade")


@G.rule("1990s", lit(r"(?:the\s+)?(\d{3})0\s*'?\s*s\b"))
def decade_digits(m):
    return decade(int(m[1]) * 10)


@G.rule("the 19 seventies", lit(r"(?:the\s+)?(1\d|20)[\s-]*({})".format("|".join(DECADE_WORDS))))
def decade_words(m):
    return decade(int(m[1]) * 100 + DECADE_WORDS[m[2]])


@G.rule("the 2000 and tens", lit(r"(?:the\s+)?(\d)000(?:\s+and)?\s+({})|(?:the\s+)?(\d)\s+thousands\b".format(
    "|".join(w for w in DECADE_WORDS if w not in ("noughties", "aughts")))))
def decade_thousands(m):
    if m[3]:
        return decade(int(m[3]) * 1000)
    return decade(int(m[1]) * 1000 + DECADE_WORDS[m[2]])


@G.rule("the 70s", lit(r"(?:the\s+)?'?([1-9])0\s*'?\s*s\b"))
def decade_two_digits(m):  # "the 70's", "the '40s": placed in the century window, as two-digit years are
    d = int(m[1]) * 10
    return Recurring(series=S.Yearly(("decade", d), lambda y: (datetime(y, 1, 1), datetime(y + 10, 1, 1))
                                     if y % 100 == d else None, "decade"), period="century", kind="decade")


@G.rule("the seventies", lit(r"(?:the\s+)?({})".format("|".join(DECADE_WORDS))))
def decade_alone(m):
    n = DECADE_WORDS[m[1]]
    t = decade(2000 + n if n < 20 and m[1] in ("noughties", "aughts") else 1900 + n if n >= 20 else 2000 + n)
    return t if m[0].startswith("the") else t.but(latent=True)


@G.rule("century", lit(rf"(?:the\s+)?(\d{{1,2}}){ORD}\s+century"))
def century(m):
    start = (int(m[1]) - 1) * 100
    return Absolute(series=S.one((datetime(max(start, 1), 1, 1), datetime(start + 100, 1, 1)), "century"),
                    kind="century")


# ---- quarters, halves, weeks of a year ------------------------------------------------------------------------------
def quarter(n: int) -> Recurring | None:
    return Recurring(series=S.quarter_of_year(n), period="year", kind="quarter") if 1 <= n <= 4 else None


def half(n: int) -> Recurring | None:
    return Recurring(series=S.half_of_year(n), period="year", kind="half") if 1 <= n <= 2 else None


@G.rule("q3", lit(r"q([1-4])\b"))
def q(m):
    return quarter(int(m[1]))


@G.rule("2016 q3", lit(rf"({YEAR4})\s*[-]?\s*(?:the\s+)?q([1-4])\b|q([1-4])\s*[-]?\s*({YEAR4})\b"))
def year_q(m):
    y, n = (m[1], m[2]) if m[1] else (m[4], m[3])
    q = quarter(int(n))
    return None if q is None else intersect(q, year_time(int(y)))


@G.rule("h1", lit(rf"(?:({YEAR4})\s*-?\s*)?h([12])\b(?:\s*-?\s*({YEAR4}))?"))
def h(m):
    t = half(int(m[2]))
    y = m[1] or m[3]
    return intersect(t, year_time(int(y))) if y and t is not None else t


@G.rule("the 3rd quarter", lit(rf"(?:the\s+)?(?:fiscal\s+)?([1-4]){ORD}[\s-]+quarter\b"))
def nth_quarter(m):
    return quarter(int(m[1]))


@G.rule("the first half", lit(r"(?:the\s+)?(1st|2nd|first|second|latter)\s+half\b(?!\s+(?:an?\s+)?hour)"))
def nth_half(m):
    return half(1 if m[1] in ("1st", "first") else 2)


@G.rule("week N", lit(r"(?:the\s+)?week\s+(?:#\s*|number\s+)?(\d{1,2})(?!\d)"))
def week_n(m):
    n = int(m[1])
    if not 1 <= n <= 53:
        return None
    return Recurring(series=S.NthWithin(n, S.Cycle("week"), S.Cycle("year")), period="year", kind="week")


# ---- weekdays ------------------------------------------------------------------------------------------------------
@G.rule("weekday", lit(rf"({WEEKDAY_DOT})(?![a-z])|({WEEKDAY})s(?![a-z])"))
def weekday(m):
    t = weekday_time(weekday_number(m[1] or m[2]))
    # "sat", "sun", "wed" are words too: without a dot they are weekdays only beside other time words
    return t.but(latent=True) if m[1] in ("sat", "sun", "wed") else t


# "since May" is not here: it is a bound up to now ("since t", rules/ranges.py), placed back from it
@G.rule("in month", words("in", "during", "of", "before", "after", "until", "by", "from", "through",
                          "throughout", "in the month of", "the month of"), lit(rf"({MONTH_DOT})(?![a-z])"))
def in_month(_, m):  # "in May": a month, where "may" alone is a verb
    return month_time(None, month_number(m[1]))


@G.rule("month", lit(rf"({MONTH_DOT})(?![a-z])"))
def month_name(m):
    name = m[1].rstrip(".")
    t = month_time(None, month_number(name))
    # "may", "march" (and "jan", "dec"...) are words too: alone, they are months only as a whole phrase
    return t.but(latent=True) if name in ("may", "march", "mar", "jan", "jun", "sat", "sun", "dec", "oct", "aug")\
        else t


# ---- holidays and seasons ------------------------------------------------------------------------------------------
@G.rule("holiday", lit(HOLIDAY_PATTERN))
def holiday(m):
    return holiday_time(m[0])


def season_time(name: str) -> Recurring:
    first = SEASONS[name]

    def span_of(year: int):
        start = datetime(year, first, 1)
        return start, cal.add_months(start, 3)

    return Recurring(series=S.Yearly(("season", first), span_of, "season"), period="year", kind="season",
                     relative="nearest")


@G.rule("the holidays", lit(r"(?:the\s+)?(?:christmas\s+|winter\s+|xmas\s+)?(?:holidays|holiday\s+season)\b"))
def the_holidays(m):
    return holiday_season()


# "fall" after "a" or an adjective of size or harm is a tumble ("dad had a fall on thursday"), never the season
_A_FALL = "".join(rf"(?<!\b{w}\s)" for w in ("a", "bad", "nasty", "big", "hard", "small", "little", "another"))


@G.rule("season", lit(rf"(spring|summer|{_A_FALL}fall|autumn|winter)(?:time)?\b"))
def season(m):  # alone, a season is a time only as a whole phrase ("my winter range", "the fall of Rome")
    return season_time(m[1]).but(latent=True)


@G.rule("in season", words("in", "during", "over", "throughout", "until"),
        lit(r"(?:the\s+)?(spring|summer|autumn|winter|(?<=the\s)fall)(?:time)?\b"))
def in_season(_, m):
    return season_time(m[1])


@G.rule("the season", lit(r"(?:the\s+(?:whole\s+|entire\s+)?|all\s+)(spring|summer|fall|autumn|winter)\b"))
def the_season(m):  # "the fall" is as often a tumble ("the fall made it worse"): a season after "in", "during"...
    return season_time(m[1]).but(latent=True) if m[1] == "fall" else season_time(m[1])


# ---- composition of dates ------------------------------------------------------------------------------------------
@G.rule("time time", Of(is_time), optional(",", "of", "in", "on", "at", "-", "@", "the", "for", ", a", "which was a",
                                          ", which was a", ", the", "around", "about", "at around", "at about"),
        Of(is_time))
def time_time(a, _, b):
    if isinstance(a, Bare) or isinstance(b, Bare):
        # a number's reading comes from the rules that say which it is ("Friday the 13th", "10 tonight"); beside a
        # time of the day it is a day of the month ("the 17 from 2pm to 4pm", "8pm on the 15")
        n, other = (a, b) if isinstance(a, Bare) else (b, a)
        if isinstance(other, Bare) or cal.rank(grain_of(other)) >= cal.rank("day"):
            return None
        reading = n.as_hour() if part_name(other) else n.as_day()  # "morning at 7"; "the 17 from 2pm to 4pm"
        return None if reading is None else intersect(reading.but(latent=False), other)
    if a.latent and b.latent and grain_of(b) != "year":
        return None
    t = intersect(a, b)
    if t is not None and (a.latent or b.latent):
        t = t.but(latent=False)
    return t


@G.rule("nth of month", lit(rf"(?:the\s+)?({DOM}){ORD}(?:\s+day)?\s+of\b"),
        Of(lambda v: is_time(v) and not isinstance(v, Bare) and grain_of(v) == "month"))
def nth_of_month(m, month):
    day = day_of_month(int(m[1]))
    return None if day is None else intersect(day, month.but(latent=False))


@G.rule("weekday the n", Of(lambda v: is_recurring(v) and v.kind == "weekday" and not isinstance(v.series,
                                                                                                 S.NthWithin)),
        optional(",", "the"), lit(rf"({DOM}){ORD}?(?![\d:/\-]|\.\d|\s*(?:am|pm|a\.m|p\.m|days?|weeks?|months?|years?|"
                                 r"hours?|minutes?|o'?clock)\b)"))
def weekday_the_n(wd, _, m):
    day = day_of_month(int(m[1]))
    return None if day is None else intersect(wd.but(latent=False), day.but(latent=False))


@G.rule("nth weekday", lit(rf"(?:the\s+)?(\d){ORD}\s+({WEEKDAY})\b|(?:the\s+)?(last|final)\s+({WEEKDAY})\s+(?=of|in)"))
def nth_weekday(m):
    n = int(m[1]) if m[1] else -1
    wd = weekday_number(m[2] or m[4])
    return Recurring(series=S.NthWithin(n, S.weekday(wd), S.Cycle("month")), period="month", kind="weekday")


@G.rule("the nth X of Y", lit(rf"(?:the\s+)?(?:(\d{{1,2}}){ORD}|(last|final))\s+(day|week|month|quarter)\s+"
                               r"(?:(?:of|in)\s+)?"), Of(lambda v: is_time(v) and not isinstance(v, Bare)))
def nth_unit_of(m, coarse):
    n = int(m[1]) if m[1] else -1
    if cal.rank(grain_of(coarse)) <= cal.rank(m[3]):
        return None
    coarse = coarse.but(latent=False)
    fine = S.Cycle(m[3])
    if isinstance(coarse, Recurring):
        return Recurring(series=S.NthWithin(n, fine, coarse.series), period=coarse.period, kind=m[3])
    return Within(fine=fine, coarse=coarse, nth=n, kind=m[3])


@G.rule("the nth weekday of Y", Of(lambda v: is_recurring(v) and isinstance(v.series, S.NthWithin)
                                   and isinstance(v.series.coarse, S.Cycle)),
        words("of", "in"), Of(lambda v: is_time(v) and not isinstance(v, Bare)))
def nth_weekday_of(t, _, coarse):
    sr = t.series
    coarse = coarse.but(latent=False)
    if cal.rank(grain_of(coarse)) <= cal.rank(sr.fine.grain):
        return None
    if isinstance(coarse, Recurring):
        return Recurring(series=S.NthWithin(sr.n, sr.fine, coarse.series), period=coarse.period, kind=t.kind)
    return Within(fine=sr.fine, coarse=coarse, nth=sr.n, kind=t.kind)


@G.rule("the first 2 weeks of Y", lit(r"(?:the\s+)?(first|1st|last)\s+(\d{1,2})\s+(days|weeks|months|quarters)\s+of\b"),
        Of(lambda v: is_time(v) and not isinstance(v, Bare)))
def first_n_units_of(m, coarse):
    n, unit = int(m[2]), m[3].rstrip("s")
    fine = S.Cycle(unit)
    coarse = coarse.but(latent=False)
    if m[1] in ("first", "1st"):
        return Range(start=Within(fine=fine, coarse=coarse, nth=1, kind=unit),
                     end=Within(fine=fine, coarse=coarse, nth=n, kind=unit), kind="span")
    return Range(start=Within(fine=fine, coarse=coarse, nth=-n, kind=unit),
                 end=Within(fine=fine, coarse=coarse, nth=-1, kind=unit), kind="span")
