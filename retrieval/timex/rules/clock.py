"""Times of the day: clock times in their written forms ("8:30pm", "17:49:19", "9a", "half past seven", "a
quarter to seven", "20 minutes past 8", "noon"), parts of the day ("this morning", "tonight", "yesterday
afternoon"), "now", and the weekend and working week (spans of a week).

An hour written without am / pm ("at 7") is either; beside a part of the day it takes that part's half
(:func:`~retrieval.timex.rules.parts.clock_in_part`), in a range the end follows the start, and otherwise the
context picks (the next one, or the latest one).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from retrieval.timex import series as S
from retrieval.timex.grammar import Grammar, Of, lit, optional
from retrieval.timex.lexicon import PART_WORDS
from retrieval.timex.rules.parts import (
    AMPM,
    Bare,
    clock_time,
    grain_of,
    intersect,
    is_firm,
    part_name,
    part_of_day,
    pick,
)
from retrieval.timex.values import Now, Part, Recurring, Relative, Within

G = Grammar()

# Part-of-day hours are a convention: the grammar builds parts with placeholder hours and the reader's conventions
# replace them (retrieval.timex.reader); these are the defaults.
PART_HOURS = {"morning": (8, 12), "afternoon": (12, 16), "evening": (16, 20), "night": (20, 24)}


def part(name: str) -> Recurring:
    return part_of_day(name, PART_HOURS[name])


def weekend() -> Recurring:
    return Recurring(series=S.Weekly(timedelta(days=5), timedelta(days=2), "weekend"), period="week", kind="weekend")


def working_week() -> Recurring:
    return Recurring(series=S.Weekly(timedelta(days=0), timedelta(days=5), "span"), period="week", kind="work_week")


# ---- clock times -----------------------------------------------------------------------------------------------------
@G.rule("h:mm", lit(rf"(\d{{1,2}}):(\d{{2}})(?::(\d{{2}}))?(?:\s*({AMPM}))?(?![\d:])(?![a-z])|(\d{{1,2}})\.(\d{{2}})\s*"
                    rf"({AMPM})(?![a-z])"))
def hh_mm(m):
    if m[5]:
        return clock_time(int(m[5]), int(m[6]), None, m[7], grain="minute")
    return clock_time(int(m[1]), int(m[2]), int(m[3]) if m[3] else None, m[4], grain="second" if m[3] else "minute")


@G.rule("h am", lit(rf"(\d{{1,2}})\s*({AMPM})(?![a-z])"))
def h_am(m):
    return clock_time(int(m[1]), 0, None, m[2])


@G.rule("h o'clock", lit(r"(\d{1,2})\s*o'?\s*clock\b"))
def oclock(m):
    return clock_time(int(m[1]))


@G.rule("noon", lit(r"(noon|midday|mid-day|midnight)\b"))
def noon(m):
    return clock_time(0 if m[1] == "midnight" else 12, 0, None, None)


@G.rule("at h", lit(r"(?:at|around|about|by|till|until|after|before|@)\s+(\d{1,2})(?:\s*(?:or\s+so|ish))?(?![\d:/.\-]|"
                    r"\s*(?:st|nd|rd|th|%|am|pm|a\.m|p\.m|days?|weeks?|months?|years?|hours?|minutes?|times?|"
                    r"people|of\b))"))
def at_h(m):  # a clock time beside other time words ("tonight at 7") or as a whole phrase; alone, "at one with
    # nature" and "a girl around 8" are no times
    return clock_time(int(m[1]), latent=True) if int(m[1]) <= 24 else None


@G.rule("h mm", lit(r"(\d{1,2})\s(\d{2})(?![\d:/])"))
def h_space_mm(m):  # "five-thirty" -> "5 30": a clock time only beside other time words
    return clock_time(int(m[1]), int(m[2]), None, None, latent=True) if int(m[2]) < 60 else None


@G.rule("half past h", lit(r"(half|(?:a\s+)?quarter|\d{1,2}(?=\s*min))\s*(?:min(?:ute)?s?\s+)?"
                           r"(past|after|to|before|till|of)\s+(\d{1,2})(?!\d)"))
def half_past(m):
    minutes = {"half": 30}.get(m[1], 15 if "quarter" in m[1] else None)
    if minutes is None:
        minutes = int(m[1])
        if minutes >= 60 or m[2] in ("till", "of"):
            return None
    hour = int(m[3])
    if m[2] in ("to", "before", "till", "of"):
        hour, minutes = hour - 1, 60 - minutes
    if not 0 <= hour <= 23:
        return None
    return clock_time(hour if hour else 12, minutes, None, None, grain="minute")


@G.rule("h + day part", Of(lambda v: isinstance(v, Bare)), optional(","), Of(lambda v: part_name(v) is not None))
def bare_in_part(n, _, p):
    t = n.as_hour()
    return None if t is None else intersect(t.but(latent=False), p)


# ---- parts of the day ------------------------------------------------------------------------------------------------
@G.rule("part of day", lit(r"(in\s+the\s+|during\s+the\s+|the\s+)?(?:(early|late)[\s-]*)?"
                           r"(mornings?|morn|afternoons?|evenings?|nights?|nite)\b"))
def part_word(m):
    if m[3].endswith("s"):
        return None  # "mornings are hard": every morning, not one
    p = part(PART_WORDS[m[3]])
    p = p if not m[2] else half_of_part(p, m[2])
    # alone ("an awesome night of dancing", "good morning") a part of the day is a time only beside another time
    # ("tomorrow night") or as a whole phrase; "in the morning" is one
    return p if m[1] and m[1].strip() in ("in the", "during the") else p.but(latent=True)


def half_of_part(p: Recurring, which: str) -> Recurring:
    """The early or late half of a part of the day ("late evening")."""
    sr = p.series
    if not isinstance(sr, S.Daily):  # a part of the day is hours of every day
        raise TypeError(f"{p!r} is not a part of the day")
    half = sr.length / 2
    offset = sr.offset if which == "early" else sr.offset + half
    return replace(p, series=S.Daily(offset, half, "part_of_day", f"{which} {sr.name}"))


@G.rule("day am", Of(lambda v: is_firm(v) and grain_of(v) == "day"), lit(r"(am|pm|a\.m\.|p\.m\.)(?![a-z])"))
def day_am(t, m):  # "Tuesday AM": its morning; "Tuesday PM": its afternoon
    return intersect(part("morning" if m[1][0] == "a" else "afternoon"), t)


@G.rule("tonight", lit(r"(?:to-?night|tonite|this\s+(?:night|nite))\b"))
def tonight(m):
    return Within(fine=part("night").series, coarse=Relative(grain="day", offset=0, kind="day"), kind="night")


@G.rule("last night", lit(r"(last|next|this)\s+(morning|afternoon|evening|night|nite)\b"))
def last_night(m):
    offset = {"last": -1, "next": 1, "this": 0}[m[1]]
    return Within(fine=part(PART_WORDS[m[2]]).series,
                  coarse=Relative(grain="day", offset=offset, kind="relative_day"), kind=PART_WORDS[m[2]])


@G.rule("now", lit(r"(?:right\s+)?now\b|at\s+the\s+(?:moment|minute|present\s+time)\b|at\s+present\b|"
                   r"at\s+this\s+(?:time|moment)\b|currently\b|as\s+soon\s+as\s+possible\b|asap\b|immediately\b"))
def now(m):
    return Now()


# ---- weekend and working week ----------------------------------------------------------------------------------------
@G.rule("weekend", lit(r"(?:this|that)\s+week-?end\b"))
def this_weekend(m):
    return pick(weekend(), 0)


@G.rule("the weekend", lit(r"((?:on\s+|at\s+|over\s+|during\s+)?the\s+(?:whole\s+|entire\s+)?|my\s+|all\s+)?"
                           r"week-?ends?\b"))
def the_weekend(m):  # a weekend chosen by context: the one just gone in a story told in the past ("all weekend", "the
    # whole weekend": the same weekend, the words only say it filled it)
    return weekend() if m[1] else weekend().but(latent=True)  # "a weekend yoga class": no weekend in particular


@G.rule("next weekend", lit(r"(next|last|previous|coming|past|this\s+past|following)\s+week-?end\b"))
def next_weekend(m):
    offset = 1 if m[1] in ("next", "coming", "following") else -1
    return pick(weekend(), offset)


@G.rule("working week", lit(r"(this|next|last|the)\s+(?:working\s+week|work\s*week|business\s+week)\b"))
def work_week(m):
    return pick(working_week(), {"this": 0, "the": 0, "next": 1, "last": -1}[m[1]])


@G.rule("weekend of t", lit(r"(?:the\s+|that\s+)?(week-?end|week|w/c)\s*(?:(?:of|around|starting|beginning|commencing)"
                            r"(?:\s+on)?\b)?"),
        Of(lambda v: isinstance(v, Bare) or is_firm(v) and grain_of(v) == "day"))
def weekend_of_t(m, t):
    if isinstance(t, Bare):  # "the week of the 12th"
        t = t.as_day()
        if t is None:
            return None
        t = t.but(latent=False)
    part = "weekend" if m[1].startswith("weekend") else "week"
    return Part(base=t, part=part, kind=part)


@G.rule("t weekend", Of(lambda v: is_firm(v) and grain_of(v) == "day"), lit(r"week-?end\b"))
def t_weekend(t, m):
    return Part(base=t, part="weekend", kind="weekend")

