"""Times counted from the reference or from another time: durations ("3 days", "a fortnight", "1 month and 21
days"), shifts ("in 3 weeks", "a month ago", "2 weeks before Christmas", and British usage's weeks on from a day:
"a week today", "a fortnight tonight", "a week on Friday", "this day next week"), counts of a weekday ("two Sundays from
now"), windows ("the next 3 days", "the past 2 weeks", "within 5 hours", "a week starting tomorrow"), this / next /
last of a unit or of a recurring time ("next week", "last September", "this past Wednesday"), the named days
around today, and the parts of a period ("early next year", "the end of 2000", "the rest of the week").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeGuard

from retrieval.timex import calendar as cal
from retrieval.timex.grammar import Grammar, Of, lit, optional, words
from retrieval.timex.rules.clock import weekend
from retrieval.timex.rules.durations import UNIT_PATTERN, duration
from retrieval.timex.rules.parts import (
    Bare,
    grain_of,
    is_duration,
    is_firm,
    is_recurring,
    is_time,
    part_of,
    pick,
)
from retrieval.timex.values import (
    Counted,
    Duration,
    Now,
    Range,
    Recurring,
    Relative,
    Shifted,
    Time,
    Vague,
    Window,
    Within,
)

G = Grammar()

CYCLES = ("day", "week", "month", "quarter", "half", "year", "decade", "century")
CYCLE_WINDOWS = ("quarter", "half", "decade", "century")  # "the last 2 quarters": whole ones, not rolling


# ---- shifts from now and from other times -------------------------------------------------------------------
NOW = Now()


@G.rule("d ago", Of(is_duration), words("ago", "back", "earlier", "before now", "prior"))
def ago(d, _):
    return Shifted(base=NOW, duration=d, sign=-1, kind="ago")


@G.rule("in d", words("in", "in less than", "within about"), Of(is_duration), optional("time"))
def in_d(_, d, __):
    return Shifted(base=NOW, duration=d, sign=1, kind="in")


@G.rule("d from now", Of(is_duration), words("from now", "later", "from today on", "afterwards", "hence",
                                             "from this moment"))
def d_later(d, w):
    if w[0].startswith("hence"):
        return Window(duration=d, sign=1, kind="window")
    return Shifted(base=NOW, duration=d, sign=1, kind="in")


def is_anchor(v: object) -> TypeGuard[Time]:
    """A time another is counted from: any but a bare number ("since 2011" reads a bare year as one)."""
    return is_time(v) and not isinstance(v, Bare) and (not v.latent or grain_of(v) in ("year", "month"))


@G.rule("d before t", Of(is_duration), words("before", "after", "from", "since", "following", "prior to", "past"),
        optional("we met on", "we talked on", "we spoke on", "our chat on", "the session on", "the 1 on"),
        Of(is_anchor))
def d_around(d, w, _, t):
    sign = -1 if w[0] in ("before", "prior to") else 1
    return Shifted(base=t.but(latent=False), duration=d, sign=sign, kind="shift")


def is_weeks(v: object) -> TypeGuard[Duration]:
    """A whole count of weeks ("a week", "a fortnight", "two weeks"): what British usage counts on from a day."""
    return (is_duration(v) and v.fuzzy is None and len(v.parts) == 1 and v.parts[0][0] == "week"
            and float(v.parts[0][1]).is_integer())


def is_day_ahead(v: object) -> bool:
    """Today, tonight, tomorrow or a weekday: the days "a week today", "a fortnight tonight", "a week on Friday"
    count from."""
    day = v.coarse if isinstance(v, Within) and v.nth is None else v
    return isinstance(day, Relative) and day.grain == "day" and day.offset in (0, 1) and not day.latent


@G.rule("a week today", Of(is_weeks), Of(is_day_ahead))
def weeks_today(d, t):  # "a week today", "a fortnight tonight", "two weeks tomorrow"
    return Shifted(base=t, duration=d, sign=1, result="keep", kind="shift")


@G.rule("this day next week", lit(r"(?:this|the\s+same|same)\s+(?:day\s+(next|last)\s+(week|month|year)|"
                                  r"time\s+(next|last)\s+(week))\b"))
def same_day_next(m):  # "this day next week", "same time next week": today, a unit on or back ("this time next
    # year" stays "next year": a time of year, not its day)
    sign, unit = (m[1], m[2]) if m[1] else (m[3], m[4])
    return Shifted(base=Relative(grain="day", offset=0, kind="day"), duration=Duration(((unit, 1),)),
                   sign=1 if sign == "next" else -1, kind="shift")


@G.rule("a week on friday", Of(is_weeks), words("on"), Of(lambda v: isinstance(v, Recurring) and v.kind == "weekday"))
def weeks_on(d, _, t):  # "a week on friday": the coming Friday, then a week on
    base = pick(t, 1, "strict")
    return None if base is None else Shifted(base=base, duration=d, sign=1, result="keep", kind="shift")


@G.rule("the day before t", lit(r"(?:the\s+)?(day|week|month|year)\s+(before|after|following|preceding)\s+"
                                r"(?:(?:we\s+met|we\s+talked|we\s+spoke|our\s+chat|the\s+session|the\s+1)\s+"
                                r"(?:on\s+)?)?"),
        Of(is_anchor))
def unit_before_t(m, t):
    return Shifted(base=t.but(latent=False), duration=Duration(((m[1], 1),)),
                   sign=-1 if m[2] in ("before", "preceding") else 1, result="keep" if m[1] != "day" else "day",
                   kind="shift")


@G.rule("in d since t", words("in"), Of(is_duration), words("since", "after", "from"), Of(is_anchor))
def in_d_since(_, d, __, t):
    return Shifted(base=t.but(latent=False), duration=d, sign=1, kind="shift")


@G.rule("n next units",
        lit(rf"(\d+)\s+(next|coming|upcoming|following|past|previous|last|preceding)\s+{UNIT_PATTERN}\b"))
def n_next_units(m):
    return window(duration(float(m[1]), m[3]), 1 if m[2] in ("next", "coming", "upcoming", "following") else -1)


@G.rule("the weekday after t", lit(r"(?:the\s+)?(?:(\d)(?:st|nd|rd|th)\s+)?"),
        Of(lambda v: is_recurring(v) and v.kind == "weekday" and not v.latent),
        words("after", "following", "before", "preceding"), Of(is_anchor))
def weekday_after(m, wd, w, t):  # "the Tuesday after Easter", "the second Friday before the wedding on May 2"
    if cal.rank(grain_of(t)) < cal.rank("day"):
        return None
    return Counted(series=wd.series, n=int(m[1] or 1), sign=-1 if w[0] in ("before", "preceding") else 1,
                   base=t.but(latent=False), kind="weekday")


@G.rule("n weekends ago", lit(r"(\d+|an?)\s+week-?ends?\s+(ago|from\s+now|later)\b"))
def weekends_ago(m):
    n = 1 if m[1] in ("a", "an") else int(m[1])
    return Counted(series=weekend().series, n=n, sign=-1 if m[2] == "ago" else 1, base=NOW, kind="weekend")


@G.rule("n weekdays from now", lit(r"(\d+)"), Of(lambda v: is_recurring(v) and v.kind == "weekday"),
        words("from now", "later", "ago", "from today", "after today"))
def weekdays_from_now(m, wd, w):
    sign = -1 if w[0] == "ago" else 1
    return Counted(series=wd.series, n=int(m[1]), sign=sign, base=NOW, kind="weekday")


# ---- windows -------------------------------------------------------------------------------------------------------
def window(d: Duration, sign: int, style: str = "rolling", base: Time | None = None) -> Window:
    if base is None and style == "rolling" and d.finest in CYCLE_WINDOWS:
        style = "cycles"
    return Window(duration=d, sign=sign, base=base, style=style, kind="window")


_NEXT = ("next", "coming", "upcoming", "following", "the next", "the coming", "the upcoming", "the following")
_PAST = ("last", "past", "previous", "prior", "preceding", "the last", "the past", "the previous", "this past",
         "this last", "these past", "these last", "over the last", "over the past", "in the last", "in the past",
         "during the last", "during the past", "for the last", "for the past", "within the last", "within the past")


@G.rule("next d", words(*_NEXT), Of(is_duration))
def next_d(_, d):
    return window(d, 1)


@G.rule("past d", words(*_PAST), Of(is_duration))
def past_d(_, d):
    return window(d, -1)


@G.rule("d next", Of(is_duration), words("next", "coming", "upcoming", "following", "in the future", "ahead"))
def d_next(d, _):
    return window(d, 1)


@G.rule("d past", Of(is_duration), words("past", "previous", "last", "preceding", "prior"))
def d_past(d, _):
    return window(d, -1)


@G.rule("within d", words("within", "within the next", "within next", "within the upcoming", "within the coming",
                          "in the next", "in the coming", "over the next", "during the next", "for the next"),
        Of(is_duration))
def within_d(w, d):
    return window(d, 1, "from_reference" if w[0].startswith("within") else "rolling")


@G.rule("within d from t", words("within", "less than", "within the next", "in less than"), Of(is_duration),
        words("from", "after", "of"), Of(is_firm))
def within_d_from(_, d, __, t):
    return window(d, 1, base=t)


@G.rule("d starting t", Of(is_duration), optional(","), words("starting", "starting from", "beginning",
                                                                   "starting on", "starting at", "commencing"),
        Of(is_firm))
def d_starting(d, _, __, t):
    return window(d, 1, base=t)


@G.rule("for d from t", words("for"), Of(is_duration), optional(","), words("from", "starting", "starting from"),
        Of(is_firm))
def for_d_from(_, d, __, ___, t):
    return window(d, 1, base=t)


# ---- the named days around today, and this / next / last of a unit ------------------------------------------------
@G.rule("today", lit(r"(?:to-?day|otd|this\s+day|the\s+day|my\s+day|current\s+day|this\s+date|current\s+date)\b"))
def today(m):
    latent = m[0] in ("the day", "my day")
    return Relative(grain="day", offset=0, kind="day", latent=latent)


@G.rule("tomorrow", lit(r"(?:the\s+day\s+after\s+(?:tomorrow|tmrw|tmr|tomorow)|day\s+after\s+(?:tomorrow|tmrw|tmr)"
                        r"|tomorrow|tmrw|tmr|tomorow|tommorow|(?:the\s+)?next\s+day|the\s+day\s+after|"
                        r"(?:the\s+)?day\s+before\s+yesterday|yesterday|yday|(?:the\s+)?(?:last|past|previous)\s+day|"
                        r"the\s+day\s+before)\b"))
def around_today(m):
    text = m[0]
    if "after" in text and ("tomorrow" in text or "tmrw" in text or "tmr" in text):
        return Relative(grain="day", offset=2, kind="future_day")
    if "before yesterday" in text:
        return Relative(grain="day", offset=-2, kind="relative_day")
    if any(w in text for w in ("tomorrow", "tmrw", "tmr", "tomorow", "tommorow", "next", "after")):
        return Relative(grain="day", offset=1, kind="future_day")
    return Relative(grain="day", offset=-1, kind="relative_day")


@G.rule("this unit", lit(r"(?:this|current|the\s+current|present|the\s+present|this\s+calendar|same|the\s+same)\s+"
                         r"(week|month|quarter|year|decade|century)\b"))
def this_unit(m):
    return Relative(grain=m[1], offset=0, kind=m[1] if m[1] != "week" else "week")


@G.rule("the unit", lit(r"(?:the|my)\s+(week|month|quarter|year|decade)\b(?!\s+(?:of|before|after|in|ending|"
                        r"starting|beginning))"))
def the_unit(m):
    return Relative(grain=m[1], offset=0, kind=m[1], latent=True)


@G.rule("next unit", lit(r"(?:the\s+)?(next|coming|upcoming|following|last|previous|past|prior|preceding|this\s+past|"
                         r"this\s+last|latest|most\s+recent)\s+(?:fiscal\s+|calendar\s+)?"
                         r"(week|month|quarter|year|decade|century)\b(?!\s*(?:'s|of)\b)"))
def next_unit(m):
    offset = 1 if m[1] in ("next", "coming", "upcoming", "following") else -1
    if m[2] == "week" and offset == -1:
        return LastWeek(kind="relative_week")
    kind = {"day": "relative_day", "week": "relative_week", "month": "relative_month", "year": "relative_year"}
    return Relative(grain=m[2], offset=offset, kind=kind.get(m[2], m[2]))


@G.rule("the week before", lit(r"the\s+week\s+before\b(?!\s+(?:last|that|the|our|we|\d|[a-z]+\s+\d))"))
def the_week_before(m):  # told in a story with no day after it: the week before the day it was said
    return LastWeek(kind="relative_week")


@dataclass(frozen=True, kw_only=True)
class LastWeek(Relative):
    """"Last week": the calendar week before this one, or the seven days before the reference's day (with it or
    not), as the conventions say (:attr:`~retrieval.timex.context.Conventions.last_week`)."""

    grain: str = "week"
    offset: int = -1


@G.rule("unit after next", lit(r"(?:the\s+)?(day|week|weekend|month|quarter|year|decade)\s+(after|before)\s+"
                               r"(?:the\s+)?(next|last)\b"))
def unit_after_next(m):
    if (m[2], m[3]) not in (("after", "next"), ("before", "last")):
        return None
    offset = 2 if m[2] == "after" else -2
    if m[1] == "weekend":
        return pick(weekend(), offset)
    return Relative(grain=m[1], offset=offset, kind=m[1])


@G.rule("next sub-day unit", lit(r"(?:the\s+)?(next|last|past|previous|coming)\s+(hour|minute|second)\b"))
def next_hour(m):
    return window(Duration(((m[2], 1),)), 1 if m[1] in ("next", "coming") else -1)


@G.rule("fortnight", lit(r"(?:the\s+|this\s+)?(next\s+|last\s+)?fortnight\b"))
def fortnight(m):
    offset = {"next": 2, "last": -2}.get((m[1] or "").strip(), 0)
    return Relative(grain="week", offset=offset, count=2, kind="fortnight")


# ---- this / next / last of a recurring time -----------------------------------------------------------------------
_PICKS = {"this": (0, "period"), "next": (1, "period"), "following": (1, "period"), "last": (-1, "period"),
          "previous": (-1, "period"), "past": (-1, "strict"), "this past": (-1, "strict"),
          "this last": (-1, "strict"), "coming": (1, "strict"), "upcoming": (1, "strict"),
          "this coming": (1, "strict"), "this upcoming": (1, "strict"), "the coming": (1, "strict"),
          "the next": (1, "period"), "the following": (1, "period"), "the last": (-1, "period"),
          "the previous": (-1, "period"), "the past": (-1, "strict"), "current": (0, "period")}


@G.rule("next X", words(*_PICKS), Of(lambda v: is_recurring(v) and not v.kind == "day_of_month"))
def next_x(w, t):
    offset, mode = _PICKS[" ".join(w[0].split())]
    return pick(t, offset, mode)


@G.rule("X after next", Of(is_recurring), words("after next", "after the next", "before last", "before the last"))
def x_after_next(t, w):
    return pick(t, 2 if "after" in w[0] else -2, "period")


# ---- parts of a period -----------------------------------------------------------------------------------------------
_PARTS = {"early": "early", "earlier in": "earlier", "earlier": "earlier", "late": "late", "later in": "later",
          "later": "later", "the beginning of": "beginning", "beginning of": "beginning", "the start of": "beginning",
          "start of": "beginning", "the middle of": "middle", "middle of": "middle", "mid": "middle",
          "the end of": "end", "end of": "end", "the rest of": "rest", "rest of": "rest", "rest": "rest",
          "remaining of": "rest", "the remainder of": "rest", "remainder of": "rest", "the remaining of": "rest",
          "the first half of": "first_half", "first half of": "first_half", "the second half of": "second_half",
          "second half of": "second_half", "the latter half of": "second_half", "the 1st half of": "first_half",
          "the 2nd half of": "second_half"}


@G.rule("part of t", words(*_PARTS), optional("-", "in", "of"), optional("my", "the", "this", "current"),
        Of(lambda v: is_time(v) and grain_of(v) in CYCLES + ("weekend", "season", "part_of_day")))
def part_of_t(w, _, own, t):
    part = _PARTS[" ".join(w[0].replace("-", " ").split())]
    if own and own[0] in ("my", "the", "this", "current") and isinstance(t, Relative) and t.latent:
        t = t.but(latent=False)
    if own and own[0] == "this" and not isinstance(t, Relative):
        return None
    if part == "end" and grain_of(t) == "day":
        part = "end_point"
    return part_of(t.but(latent=False) if t.latent and not isinstance(t, Recurring) else t, part)


@G.rule("rest of unit", lit(r"(?:the\s+)?(?:rest|remainder|remaining)\s+(?:of\s+)?(?:the\s+|my\s+|this\s+|current\s+)?"
                            r"(day|week|month|year)\b"))
def rest_of_unit(m):
    return part_of(Relative(grain=m[1], offset=0, kind=m[1]), "rest")


@G.rule("end of day", lit(r"(?:the\s+)?(?:end\s+of\s+(?:the\s+)?(?:day|business\s+day)|eod|cob|"
                          r"close\s+of\s+business)\b"))
def end_of_day(m):
    return part_of(Relative(grain="day", offset=0, kind="day"), "end_point")


@G.rule("year to date", lit(r"(year|month|week)\s+to\s+date\b|(ytd|mtd)\b"))
def to_date(m):
    grain = m[1] or {"ytd": "year", "mtd": "month"}[m[2]]
    return Range(start=Relative(grain=grain, offset=0, kind=grain), end=Relative(grain="day", offset=0, kind="day"),
                 inclusive=False, kind="span")


# ---- vague phrases -------------------------------------------------------------------------------------------------
@G.rule("vague", lit(r"(?:a\s+(?:little\s+|long\s+)?while\s+(?:ago|back)|recently|lately|the\s+other\s+day|"
                     r"some\s+time\s+ago|a\s+long\s+time\s+ago|ages\s+ago|not\s+(?:so\s+|that\s+)?long\s+ago|"
                     r"these\s+days|nowadays|in\s+the\s+past|in\s+the\s+future|soon|someday|one\s+day)\b"))
def vague(m):
    return Vague()
