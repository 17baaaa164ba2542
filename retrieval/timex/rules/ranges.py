"""Ranges and bounds: "from X to Y", "between X and Y", "X - Y", "X through Y", and a time with one side of it
("since Friday", "before May 8", "until now", "from May 3 on").

The ends of a range are any times; what is written once for both ends ("from 4 to 22 this month", "tomorrow
between 8am and 2pm", "nov 18 - dec 19, 2015") is shared by both (:func:`~retrieval.timex.rules.parts.intersect`).
A bare number at one end takes its reading from the other ("3-8pm": 15:00 to 20:00; "from 4 to January 22": the
4th), and an hour at the end follows the start ("from 10:30 to 3": 15:00).
"""

from __future__ import annotations

from dataclasses import replace

from retrieval.timex import series as S
from retrieval.timex.grammar import Grammar, Of, optional, words
from retrieval.timex.rules.parts import Bare, clock_of, grain_of, is_time, meridiem, with_clock
from retrieval.timex.values import Bound, Now, Part, Range, Recurring, Relative, Time, Within

G = Grammar()

_TO = ("to", "till", "til", "until", "through", "thru", "-", "~", "–", "up to", "up until", "and up to", "-to-")


def _closest_before(start: Recurring, end: Recurring) -> Recurring:
    """Of the two halves of the day an hour may be in, the one that comes before ``end`` and nearest it ("7:00 to
    8:00pm": 19:00; "half past seven to 4pm": 07:30)."""
    if not isinstance(start.series, S.Union) or not isinstance(end.series, S.Daily):
        return start
    stop = end.series.offset
    options = [o for o in (start.series.a, start.series.b) if isinstance(o, S.Daily) and o.offset < stop]
    return replace(start, series=max(options, key=lambda o: o.offset)) if options else start


def ends(start: Time, end: Time) -> tuple[Time, Time] | None:
    """The two ends as times: a bare number read from the other end (an hour beside a clock time, a day of the
    month beside a date); an hour without am / pm before one with it in the half that comes just before ("3-8pm":
    15:00); two bare numbers stay bare until a shared time says which they are."""
    if isinstance(start, Bare) and isinstance(end, Bare):
        return start, end
    clock_end = clock_of(end)
    read_start: Time | None = start
    read_end: Time | None = end
    if isinstance(start, Bare):
        read_start = start.as_hour() if clock_end is not None else start.as_day()
    elif isinstance(end, Bare):
        read_end = end.as_hour() if clock_of(start) is not None or grain_of(start) in ("hour", "minute", "second") \
            else end.as_day()
    if read_start is None or read_end is None:
        return None
    start, end = read_start, read_end
    clock_start = clock_of(start)
    if clock_start is not None and clock_end is not None and meridiem(clock_end):
        start = with_clock(start, _closest_before(clock_start, clock_end))
    return start.but(latent=False) if start.latent and not end.latent else start, end


def instants(t: Time, at: str) -> Time:
    """"The start / middle / end of X" as a range's end is the instant X starts, is half over or ends ("from 2007 to
    the end of 2008", "between the middle of March and the end of September")."""
    if isinstance(t, Part) and t.part in ("beginning", "middle", "end"):
        return replace(t, part={"beginning": "start_instant", "middle": "middle_instant", "end": "end_instant"}[t.part])
    return t


def factor(start: Time, end: Time) -> tuple[Time, Time, Time | None]:
    """A day written with one end of a range of clock times is the day of both ("Jan 15, 1:00 pm - 1:15 pm", "from
    3 to 5pm tomorrow"): (start, end, that day) with the day taken out, else the ends as they are and None."""
    for one, other, first in ((start, end, True), (end, start, False)):
        if isinstance(one, Within) and one.kind == "clock" and clock_of(other) is not None and \
                not isinstance(other, Within):
            clock = Recurring(series=one.fine, period="day", kind="clock")
            return (clock, other, one.coarse) if first else (other, clock, one.coarse)
        if isinstance(one, Recurring) and isinstance(one.series, S.Intersect) and clock_of(other) is not None and \
                not isinstance(other, Within) and one.kind == "clock":
            fine, coarse = one.series.a, one.series.b
            if isinstance(fine, (S.Daily, S.Union)):
                day = Recurring(series=coarse, period=one.period, kind="date")
                clock = Recurring(series=fine, period="day", kind="clock")
                return (clock, other, day) if first else (other, clock, day)
    return start, end, None


def make_range(start: Time, end: Time, firm: bool) -> Range | None:
    start, end, day = factor(start, end)
    parsed = ends(instants(start, "start"), instants(end, "end"))
    if parsed is None:
        return None
    start, end = parsed
    if day is not None:
        return Range(start=start, end=end, kind="span", shared=day)
    # "now" beside a date is today ("between Jan 22 and now")
    if isinstance(start, Now) and grain_of(end) not in ("hour", "minute", "second"):
        start = Relative(grain="day", offset=0, kind="day")
    if isinstance(end, Now) and grain_of(start) not in ("hour", "minute", "second"):
        end = Relative(grain="day", offset=0, kind="day")
    latent = not firm and (start.latent or end.latent or isinstance(start, Bare))
    return Range(start=start, end=end, kind="span", latent=latent)


@G.rule("from a to b", words("from", "from the"), Of(is_time), words(*_TO), Of(is_time))
def from_to(_, a, __, b):
    return make_range(a, b, firm=True)


@G.rule("a to b", Of(is_time), words(*_TO), Of(is_time), rank=-1)
def a_to_b(a, _, b):
    return make_range(a, b, firm=not (a.latent or b.latent))


@G.rule("between a and b", words("between", "betw", "btw"), Of(is_time), words("and", *_TO), Of(is_time))
def between(_, a, __, b):
    return make_range(a, b, firm=True)


# ---- bounds ----------------------------------------------------------------------------------------------------------
_BOUNDS = {"since": "since", "ever since": "since", "after": "after", "before": "before", "prior to": "before",
           "until": "until", "till": "until", "til": "until", "up to": "until", "up until": "until", "by": "by",
           "no later than": "by", "not later than": "by", "earlier than": "before", "later than": "after"}


_MET = ("we met on", "we talked on", "we spoke on", "we chatted on", "we met", "we talked", "we spoke")


# a year or a month's name that is also a word ("2016", "may", "march") is a time after a bound: "since may"
@G.rule("since t", words(*_BOUNDS), optional(*_MET),
        Of(lambda v: is_time(v) and not isinstance(v, (Range, Bare))
           and (not v.latent or grain_of(v) in ("year", "month"))))
def since(w, _, t):
    prep = _BOUNDS[" ".join(w[0].split())]
    if isinstance(t, Now):
        return None
    return Bound(base=t.but(latent=False), prep=prep, kind="bound")


@G.rule("from t on", words("from"), Of(lambda v: is_time(v) and not isinstance(v, Range)),
        words("on", "onwards", "onward", "up to now", "until now", "till now", "to now", "until today", "to today",
              "up to today", "to date", "till date"))
def from_on(_, t, __):  # a bound like "since", but "from June on" may be said of a June to come
    return Bound(base=t, prep="from", kind="bound")


__all__ = ["G", "make_range"]
