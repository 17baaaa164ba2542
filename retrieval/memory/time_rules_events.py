"""Time rules for what an utterance says about its own time: phrases a question rarely uses or reads otherwise.

An utterance's time expressions are resolved against its own timestamp (:mod:`retrieval.memory.event_time`) with
the question rules of :mod:`retrieval.memory.time_rules` and, tried before them, the rules registered here (in
:data:`EVENT_RULES`, with the same :func:`~retrieval.memory.time_rules.rule` decorator). They differ from the
question rules where the speaker's point of view does: a question looks back from "now" ("the last week" is the
last 7 days up to today), an utterance also looks forward ("next month", "this Friday", "tomorrow") and narrates
("last week" is the week before the day it was said, not including it).

Readings, with D the day the utterance was said (the calendar of its timestamp's zone):
- "last week", "the week before", "this past week": the 7 days before D, ``[D-7, D)``; "N weeks ago": the 7
  days ``[D-7N, D-7N+7)``; "this week": the Monday-to-Sunday week holding D ("earlier this week": its days
  before D); "next week": the Monday-to-Sunday week after D's.
- "last weekend", "this past weekend": the latest Saturday and Sunday both before D; "N weekends ago": the N-th
  such weekend back; "this weekend": D's own weekend on a Saturday or Sunday, the one just gone on a Monday, else
  the coming one; "next weekend": the first weekend that starts after D.
- "last Fri", "last Tues": the latest such weekday before D (as "last Friday"); "this Friday", "next Friday":
  the first Friday after D (people say "last Friday" for the past one); "tomorrow", "in N days": days after D;
  "last night", "last evening", "yesterday morning": the day before D; "a fortnight ago": as "2 weeks ago".
- "over the weekend" (also "during / on / at the weekend"): said Monday to Thursday, the weekend just gone; on a
  Saturday or Sunday, that one; on a Friday, the coming one.
- "next month" / "next year": the calendar month / year after D's; "next March", "this coming March": the first
  March after D's month; "earlier this month" / "earlier this year": its days before D (granularity month /
  year; none on its first day).
- "next" that orders things ("your next move", "what's up next?", "next time") is no time: no interval, no note.
- seasons (meteorological, northern: spring March-May, summer June-August, fall September-November, winter
  December-February): "last summer" the latest summer that ended before D, "this summer" the summer of D's
  year (a winter: the one holding D, else the coming one), "next summer" the first that starts after D.
- durations: "for 4 years", "4 years now", "5 years already", "for 3 weeks", "for 2 days", "since 2016": a length
  back from D, and the event's start as an interval of the duration's unit (the year D.year - 4; the year 2016).
  A length gives way to any other expression of the utterance for the when (:mod:`retrieval.memory.event_time`).
- fuzzy lengths: "for the past few months", "for a couple of years", "over the last several weeks": 2 to 5 (a
  couple: 2 to 3) units up to D, granularity ``fuzzy``, the length kept; "in the next few months" is vague (no
  interval: a plan, which as a span drew when-answers away from the row that answered, on the dev conversations).
- "the weekend before last": the second latest weekend before D; "two Saturdays ago": the second latest Saturday
  before D; "on the 5th" (closing a clause): the latest 5th up to D; "the summer of 2021", "spring 2019": that
  season of that year.
- fuzzy spans: "a few / several / some days (weeks, months, years) ago" is 2 to 5 units before D, "a couple of
  ... ago" 2 to 3, granularity ``fuzzy``; "a while ago", "recently", "lately", "the other day", "some time ago",
  "not so long ago", "these days", and a gap without an anchor ("we haven't talked in a few days", "it's been a
  couple of weeks") have no interval (kind ``vague``), never a precise date.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from retrieval.memory.time_calendar import Calendar, add_months
from retrieval.memory.time_patterns import MON, MONTHS, WEEKDAYS, YR
from retrieval.memory.time_rules import Handler, TimeExpression, rule

EVENT_RULES: list[tuple[re.Pattern[str], Handler]] = []
UNITS = ("day", "week", "month", "year")
# Meteorological seasons of the northern hemisphere: (first month, number of months).
SEASONS = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}
DAY_ABBREVIATIONS = {"mon": 0, "tue": 1, "tues": 1, "wed": 2, "thu": 3, "thur": 3, "thurs": 3, "fri": 4,
                     "sat": 5, "sun": 6, "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4,
                     "saturday": 5, "sunday": 6}
_DAY = "|".join(sorted(DAY_ABBREVIATIONS, key=len, reverse=True))
FUZZY_COUNTS = {"couple": (2, 3), "few": (2, 5), "several": (2, 5), "some": (2, 5)}
_NUM = r"(\d+|an?)"


@dataclass
class EventExpression(TimeExpression):
    """A time expression of an utterance: its granularity (day, week, weekend, month, season, year, fuzzy) and,
    for a length ("for 4 years", "a few years ago"), the duration ``(low, high, unit)``."""

    granularity: str | None = None
    duration: tuple[int, int, str] | None = None


def event_rule(*patterns: str):
    return rule(*patterns, registry=EVENT_RULES)


def ev(kind: str, granularity: str | None, cal: Calendar | None = None, first: date | None = None,
       last: date | None = None, **kw) -> EventExpression:
    """An expression of the days ``first`` to ``last`` (both included), or one without an interval."""
    intervals = cal.days(first, last) if first is not None else None
    return EventExpression("", (0, 0), kind, intervals=intervals, granularity=granularity, **kw)


def _n(token: str) -> int:
    return 1 if token in ("a", "an") else int(token)


def weekend_before(d: date, n: int = 1) -> date:
    """The Saturday of the n-th latest weekend whose Sunday is before ``d``."""
    sunday = d - timedelta(days=(d.weekday() - 6) % 7 or 7)
    return sunday - timedelta(days=1 + 7 * (n - 1))


def unit_start(cal: Calendar, unit: str, back: int) -> tuple[date, date]:
    """The calendar unit ``back`` units before today's (a week: the 7 days ``[D-7n, D-7n+7)``): first and last day."""
    d = cal.today
    if unit == "day":
        day = d - timedelta(days=back)
        return day, day
    if unit == "week":
        return d - timedelta(days=7 * back), d - timedelta(days=7 * back - 6)
    if unit == "month":
        y, m = add_months(d.year, d.month, -back)
        ny, nm = add_months(y, m, 1)
        return date(y, m, 1), date(ny, nm, 1) - timedelta(days=1)
    return date(d.year - back, 1, 1), date(d.year - back, 12, 31)


# ---- days and weekdays ----------------------------------------------------------------------------------
@event_rule(r"\b(?:the\s+)?day\s+after\s+tomorrow\b")
def day_after_tomorrow(cal: Calendar, m: re.Match) -> EventExpression:
    d = cal.today + timedelta(days=2)
    return ev("future_day", "day", cal, d, d)


@event_rule(r"\btomorrow\b", r"\bin\s+(\d+)\s+days\b")
def tomorrow(cal: Calendar, m: re.Match) -> EventExpression:
    d = cal.today + timedelta(days=int(m.group(1)) if m.lastindex else 1)
    return ev("future_day", "day", cal, d, d)


@event_rule(r"\blast\s+night\b", r"\blast\s+evening\b", r"\byesterday\s+(?:morning|afternoon|evening|night)\b")
def last_night(cal: Calendar, m: re.Match) -> EventExpression:
    d = cal.today - timedelta(days=1)
    return ev("relative_day", "day", cal, d, d)


@event_rule(rf"\b(last|this\s+past|past|previous|this|next|coming)\s+({_DAY})\b\.?")
def qualified_weekday(cal: Calendar, m: re.Match) -> EventExpression:
    wd = DAY_ABBREVIATIONS[m.group(2)]
    if m.group(1) in ("this", "next", "coming"):
        d = cal.today + timedelta(days=(wd - cal.today.weekday()) % 7 or 7)
    else:
        d = cal.today - timedelta(days=(cal.today.weekday() - wd) % 7 or 7)
    return ev("weekday", "day", cal, d, d, weekday=WEEKDAYS[wd].capitalize())


@event_rule(rf"\b{_NUM}\s+({_DAY})s\s+ago\b")
def weekdays_ago(cal: Calendar, m: re.Match) -> EventExpression:
    wd, n = DAY_ABBREVIATIONS[m.group(2)], _n(m.group(1))
    d = cal.today - timedelta(days=((cal.today.weekday() - wd) % 7 or 7) + 7 * (n - 1))
    return ev("weekday", "day", cal, d, d, weekday=WEEKDAYS[wd].capitalize())


@event_rule(r"\bon\s+the\s+([12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)\b(?=\s*(?:[.,!?;:)]|$))")
def day_of_month(cal: Calendar, m: re.Match) -> EventExpression | None:
    n, d = int(m.group(1)), cal.today
    for _ in range(62):  # back to the latest such day of a month (a 31st: at most two months back)
        if d.day == n:
            return ev("day_of_month", "day", cal, d, d)
        d -= timedelta(days=1)
    return None


# ---- weekends and weeks ---------------------------------------------------------------------------------
@event_rule(r"\b(?:the\s+)?(?:last|this\s+past|past|previous)\s+weekend\b", rf"\b{_NUM}\s+weekends?\s+ago\b")
def past_weekend(cal: Calendar, m: re.Match) -> EventExpression:
    saturday = weekend_before(cal.today, _n(m.group(1)) if m.lastindex else 1)
    return ev("weekend", "weekend", cal, saturday, saturday + timedelta(days=1))


@event_rule(r"\b(?:the\s+)?weekend\s+before\s+last\b")
def weekend_before_last(cal: Calendar, m: re.Match) -> EventExpression:
    saturday = weekend_before(cal.today, 2)
    return ev("weekend", "weekend", cal, saturday, saturday + timedelta(days=1))


@event_rule(r"\b(?:over|during|on|at)\s+the\s+weekend\b(?!\s+(?:before|after|of)\b)")
def over_the_weekend(cal: Calendar, m: re.Match) -> EventExpression:
    # Said Monday to Thursday, the weekend just gone; on a Saturday or Sunday, that one; on a Friday, the coming one
    wd = cal.today.weekday()
    if wd <= 3:
        saturday = weekend_before(cal.today)
    else:
        saturday = cal.today - timedelta(days=wd - 5) if wd >= 5 else cal.today + timedelta(days=1)
    return ev("weekend", "weekend", cal, saturday, saturday + timedelta(days=1))


@event_rule(r"\b(this|next|coming)\s+weekend\b")
def this_weekend(cal: Calendar, m: re.Match) -> EventExpression:
    wd = cal.today.weekday()
    if m.group(1) == "this" and wd in (5, 6, 0):  # the weekend it is, or just was on a Monday
        saturday = cal.today - timedelta(days=(wd - 5) % 7)
    else:
        saturday = cal.today + timedelta(days=(5 - wd) % 7 or 7)
    return ev("weekend", "weekend", cal, saturday, saturday + timedelta(days=1))


@event_rule(r"\b(?:the\s+)?(?:last|previous|this\s+past)\s+week\b", r"\bthe\s+week\s+before\b(?!\s+(?:last|that))",
            rf"\b{_NUM}\s+weeks?\s+ago\b")
def past_week(cal: Calendar, m: re.Match) -> EventExpression:
    first, last = unit_start(cal, "week", _n(m.group(1)) if m.lastindex else 1)
    return ev("relative_week", "week", cal, first, last)


@event_rule(r"\b(earlier\s+)?this\s+week\b", r"\b(next|the\s+coming)\s+week\b")
def calendar_week(cal: Calendar, m: re.Match) -> EventExpression:
    monday = cal.today - timedelta(days=cal.today.weekday())
    earlier = bool(m.group(1)) and m.group(1).startswith("earlier")
    if m.group(1) and not earlier:  # next week
        monday += timedelta(days=7)
    last = cal.today - timedelta(days=1) if earlier else monday + timedelta(days=6)
    if last < monday:
        return ev("week", None, unresolved="'earlier this week' on a Monday names no earlier day")
    return ev("week", "week", cal, monday, last)


@event_rule(rf"\b{_NUM}\s+fortnights?\s+ago\b")
def fortnights_ago(cal: Calendar, m: re.Match) -> EventExpression:
    first, last = unit_start(cal, "week", 2 * _n(m.group(1)))  # as "2 weeks ago"
    return ev("relative_week", "week", cal, first, last)


# ---- months, seasons, years -----------------------------------------------------------------------------
@event_rule(r"\bnext\s+(month|year)\b")
def next_month_or_year(cal: Calendar, m: re.Match) -> EventExpression:
    if m.group(1) == "year":
        y = cal.today.year + 1
        return ev("future_year", "year", cal, date(y, 1, 1), date(y, 12, 31))
    y, mo = add_months(cal.today.year, cal.today.month, 1)
    ny, nm = add_months(y, mo, 1)
    return ev("future_month", "month", cal, date(y, mo, 1), date(ny, nm, 1) - timedelta(days=1))


@event_rule(r"\bearlier\s+this\s+(month|year)\b")
def earlier_this_month_or_year(cal: Calendar, m: re.Match) -> EventExpression:
    d, unit = cal.today, m.group(1)
    first = date(d.year, d.month, 1) if unit == "month" else date(d.year, 1, 1)
    if first == d:
        return ev(unit, None, unresolved=f"'earlier this {unit}' on its first day names no earlier day")
    return ev(unit, unit, cal, first, d - timedelta(days=1))


@event_rule(rf"\b(?:next|this\s+coming)\s+({MON})")
def next_named_month(cal: Calendar, m: re.Match) -> EventExpression:
    month, d = MONTHS[m.group(1).rstrip(".")], cal.today
    y = d.year + (month <= d.month)  # the first such month after the one it was said in
    ny, nm = add_months(y, month, 1)
    return ev("future_month", "month", cal, date(y, month, 1), date(ny, nm, 1) - timedelta(days=1))


def season_days(name: str, year: int) -> tuple[date, date]:
    """The first and last day of the season ``name`` that starts in ``year`` (winter runs into the next year)."""
    first = date(year, SEASONS[name], 1)
    ny, nm = add_months(year, SEASONS[name], 3)
    return first, date(ny, nm, 1) - timedelta(days=1)


@event_rule(rf"\b(?:(?:in|during|over)\s+)?(?:the\s+)?(spring|summer|fall|autumn|winter)\s+(?:of\s+)?({YR})")
def season_of_year(cal: Calendar, m: re.Match) -> EventExpression:
    return ev("season", "season", cal, *season_days(m.group(1), int(m.group(2))))


@event_rule(r"\b(last|this\s+past|this|next|in\s+the|during\s+the|over\s+the)\s+(spring|summer|fall|autumn|winter)\b")
def season(cal: Calendar, m: re.Match) -> EventExpression:
    qualifier, name, d = m.group(1), m.group(2), cal.today
    starts = [season_days(name, y) for y in range(d.year - 2, d.year + 2)]
    if qualifier in ("last", "this past"):
        first, last = [s for s in starts if s[1] < d][-1]
    elif qualifier == "next":
        first, last = [s for s in starts if s[0] > d][0]
    else:  # this / in the: the one holding today, else this year's (a winter: the coming one)
        holding = [s for s in starts if s[0] <= d <= s[1]]
        first, last = holding[0] if holding else next(s for s in starts if s[0].year == d.year)
    return ev("season", "season", cal, first, last)


# ---- durations and fuzzy spans --------------------------------------------------------------------------
@event_rule(rf"\bsince\s+({YR})")
def since_year(cal: Calendar, m: re.Match) -> EventExpression:
    y = int(m.group(1))
    if y > cal.today.year:
        return ev("since_year", None, unresolved=f"since {y} lies after {cal.today.isoformat()}")
    return ev("since_year", "year", cal, date(y, 1, 1), date(y, 12, 31),
              duration=(cal.today.year - y, cal.today.year - y, "year"))


@event_rule(r"\bfor\s+(?:about\s+|around\s+|over\s+|almost\s+|nearly\s+|the\s+(?:last|past)\s+)?"
            r"(\d+|a)\s+(years?|months?|weeks?|days?)\b(?!\s+(?:old|from|ago))",
            r"\b(\d+)\s+(years?|months?|weeks?)\s+(?:now|already|and\s+counting|so\s+far)\b")
def duration_back(cal: Calendar, m: re.Match) -> EventExpression:
    n, unit = _n(m.group(1)), m.group(2).rstrip("s")
    first, last = unit_start(cal, unit, n)
    return ev("duration", unit, cal, first, last, duration=(n, n, unit))


@event_rule(r"\b(?:a\s+)?(couple|few|several|some)\s+(?:of\s+)?(days|weeks|months|years)\s+(?:ago|back|before)\b")
def fuzzy_ago(cal: Calendar, m: re.Match) -> EventExpression:
    lo, hi = FUZZY_COUNTS[m.group(1)]
    unit = m.group(2).rstrip("s")
    first, _ = unit_start(cal, unit, hi)
    _, last = unit_start(cal, unit, lo)
    return ev("fuzzy", "fuzzy", cal, first, last, duration=(lo, hi, unit),
              note=f"{m.group(0).strip()!r}: {lo} to {hi} {unit}s before the day it was said, not a precise date")


@event_rule(r"\b(?:for\s+(?:about\s+|around\s+|over\s+)?(?:the\s+(?:last|past)\s+)?|(?:over\s+|in\s+|during\s+)?the\s+(?:last|past)\s+)"
            r"(?:a\s+)?(couple|few|several|some)\s+(?:of\s+)?(days|weeks|months|years)\b(?!\s+(?:ago|back|before|old))")
def fuzzy_length(cal: Calendar, m: re.Match) -> EventExpression:
    lo, hi = FUZZY_COUNTS[m.group(1)]
    unit = m.group(2).rstrip("s")
    first, _ = unit_start(cal, unit, hi)
    return ev("fuzzy_length", "fuzzy", cal, first, cal.today - timedelta(days=1), duration=(lo, hi, unit),
              note=f"{m.group(0).strip()!r}: a length of {lo} to {hi} {unit}s up to the day it was said")


@event_rule(r"\b(?:(?:in|over|during|for)\s+)?the\s+(?:next|coming)\s+(couple|few|several)\s+(?:of\s+)?"
            r"(days|weeks|months|years)\b")
def fuzzy_ahead(cal: Calendar, m: re.Match) -> EventExpression:
    # A plan, not an event: as an interval it drew when-answers away from the row that answered (dev conversations)
    return ev("vague", None, note=f"{m.group(0).strip()!r} is a vague span ahead of the day it was said: no interval")


@event_rule(r"\b(?:a\s+(?:little\s+|long\s+)?while\s+(?:ago|back)|recently|lately|the\s+other\s+day"
            r"|some\s+time\s+ago|a\s+long\s+time\s+ago|ages\s+ago|not\s+(?:so\s+|that\s+)?long\s+ago"
            r"|these\s+days|nowadays)\b",
            r"\b(?:in|been)\s+(?:a\s+)?(?:couple|few|several)\s+(?:of\s+)?(?:days|weeks|months|years)\b")
def vague(cal: Calendar, m: re.Match) -> EventExpression:
    return ev("vague", None, note=f"{m.group(0).strip()!r} is vague: no interval")


# Words a time phrase could begin with that here order things, not times: "your next move", "next time".
_TIME_WORDS = (r"(?:weeks?|weekends?|months?|years?|days?|nights?|mornings?|afternoons?|evenings?|sessions?|"
               r"(?:couple|few|several)\b|\d|spring|summer|fall|autumn|winter|"
               + "|".join(DAY_ABBREVIATIONS) + r"|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)")


@event_rule(rf"\bnext\s+(?!{_TIME_WORDS})[a-z]+", r"\bnext\s*[!?.,]")
def next_in_order(cal: Calendar, m: re.Match) -> EventExpression:
    # No interval and no note: "what's up next?", "my next adventure" say nothing of when
    return ev("not_time", None)
