"""Composite time expressions, read whole before their parts (registered with a higher priority than the plain
rules of :mod:`retrieval.memory.time_rules`): a weekday beside a date (a check on the date, not a second day), the
n-th or last weekday of a month, a part of a dated day, a slice of a month (a half, its early / mid / late days,
its n-th or last week), the week of a date, the week before last, "since Friday", and "the first / last / n-th
time we talked".

Conventions: a week runs Monday to Sunday; a month's early / mid / late days are 1-10 / 11-20 / 21 to its end;
its n-th week is days 7n-6 to 7n and its last week its last seven days; parts of the day are
:data:`~retrieval.memory.time_patterns.PARTS_OF_DAY` (soft: dropped, and the drop noted, when they would keep
no row of the day).
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from retrieval.memory.time_calendar import Calendar, add_months
from retrieval.memory.time_patterns import DATE, MON_Y, PART, PARTS_OF_DAY, WEEKDAY, WEEKDAYS
from retrieval.memory.time_rules import TimeExpression, expr, rule, with_prep

COMPOSITE = 10  # the priority of these rules: tried before the plain ones

ORDINAL = r"(\d)(?:st|nd|rd|th)"
LAST = r"(?:last|final)"


def _month(cal: Calendar, text: str) -> tuple[int, int, int]:
    """(year, month, days in it) of a month's name as written ("june", "june 2023")."""
    y, m = cal.month_of(text)
    ny, nm = add_months(y, m, 1)
    return y, m, (date(ny, nm, 1) - timedelta(days=1)).day


def _day(cal: Calendar, kind: str, d: date, **kw) -> TimeExpression:
    return expr(kind, intervals=cal.days(d, d), **kw)


@rule(rf"\b(?:on\s+)?(?P<wd>{WEEKDAY}),?\s+(?P<d>{DATE})",
      rf"\b(?:on\s+)?(?P<d2>{DATE}),?\s+(?:a\s+|which\s+was\s+a\s+)?(?P<wd2>{WEEKDAY})\b", priority=COMPOSITE)
def weekday_and_date(cal: Calendar, m: re.Match) -> TimeExpression:
    """"Friday the 9th of June", "June 9th, a Friday": the date; the weekday checks it, and a mismatch is noted."""
    text = m.group("d") if m.groupdict().get("d") else m.group("d2")
    named = m.group("wd") if m.groupdict().get("wd") else m.group("wd2")
    d = cal.parse_date(text)
    if d is None:
        return expr("date", unresolved=f"could not read the date {text!r}")
    note = None
    if WEEKDAYS[d.weekday()] != named:
        note = (f"{named.capitalize()} does not match {d.isoformat()}, a {WEEKDAYS[d.weekday()].capitalize()}: "
                "read as the date")
    return _day(cal, "date", d, nearby_intervals=cal.nearby(d), weekday=WEEKDAYS[d.weekday()].capitalize(), note=note)


@rule(rf"\b(?:on\s+)?(?:the\s+)?(?:{ORDINAL}|(?P<last>{LAST}))\s+(?P<wd>{WEEKDAY})\s+(?:of|in)\s+(?P<mon>{MON_Y})",
      priority=COMPOSITE)
def nth_weekday_of_month(cal: Calendar, m: re.Match) -> TimeExpression:
    """"The second Monday of June", "the last Friday in August"."""
    y, mo, days = _month(cal, m.group("mon"))
    wd = WEEKDAYS.index(m.group("wd"))
    if m.group("last"):
        d = date(y, mo, days)
        d -= timedelta(days=(d.weekday() - wd) % 7)
    else:
        first = date(y, mo, 1)
        d = first + timedelta(days=(wd - first.weekday()) % 7 + 7 * (int(m.group(1)) - 1))
        if d.month != mo:
            return expr("weekday_of_month", unresolved=f"{m.group(0).strip()!r}: that month has no such day")
    return _day(cal, "weekday_of_month", d)


@rule(rf"\b(?:on\s+|in\s+)?the\s+{PART}\s+(?:of|on)\s+(?P<d>{DATE})",
      rf"\b(?:on\s+)?(?P<d2>{DATE}),?\s+in\s+the\s+(?P<p2>morning|afternoon|evening|night)\b", priority=COMPOSITE)
def part_of_dated_day(cal: Calendar, m: re.Match) -> TimeExpression:
    """"The evening of June 2", "on June 2 in the morning": the day, and the part of it as soft hours."""
    text = m.group("d") if m.groupdict().get("d") else m.group("d2")
    part = m.group(1) if m.groupdict().get("d") else m.group("p2")
    d = cal.parse_date(text)
    if d is None:
        return expr("date", unresolved=f"could not read the date {text!r}")
    return _day(cal, "part_of_day", d, hours=PARTS_OF_DAY[part])


@rule(rf"\b(?:in\s+|during\s+|over\s+)?(?:the\s+)?(?P<which>1st|2nd|first|second|last|latter)\s+half\s+of\s+"
      rf"(?P<mon>{MON_Y})",
      rf"\b(?:in\s+|during\s+|around\s+)?(?P<which>early|mid|late)[\s-]+(?:in\s+)?(?P<mon>{MON_Y})",
      rf"\b(?:in\s+|during\s+|over\s+)?the\s+(?P<which>start|beginning|middle|end)\s+of\s+(?P<mon>{MON_Y})",
      rf"\b(?:in\s+|during\s+|over\s+)?the\s+(?P<week>[1-4](?:st|nd|rd|th)|last|final)\s+week\s+of\s+(?P<mon>{MON_Y})",
      priority=COMPOSITE)
def month_slice(cal: Calendar, m: re.Match) -> TimeExpression:
    """A half of a month (1-15, 16 to the end), its early / mid / late days, or its n-th or last week."""
    y, mo, days = _month(cal, m.group("mon"))
    week = m.groupdict().get("week")
    if week:
        first = days - 6 if week in ("last", "final") else 7 * int(week[0]) - 6
        last = min(first + 6, days)
    else:
        first, last = {"1st": (1, 15), "first": (1, 15), "2nd": (16, days), "second": (16, days),
                       "last": (16, days), "latter": (16, days), "early": (1, 10), "start": (1, 10),
                       "beginning": (1, 10), "mid": (11, 20), "middle": (11, 20), "late": (21, days),
                       "end": (21, days)}[m.group("which")]
    return expr("month_part", intervals=cal.days(date(y, mo, first), date(y, mo, last)))


@rule(rf"\b(?:in\s+|during\s+|over\s+)?the\s+week\s+of\s+(?P<d>{DATE})",
      r"\b(?:in\s+|during\s+|over\s+)?the\s+week\s+of\s+the\s+(?P<n>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)\b",
      priority=COMPOSITE)
def week_of(cal: Calendar, m: re.Match) -> TimeExpression:
    """"The week of June 12th": its Monday to Sunday; "the week of the 12th": of the latest 12th up to today."""
    if m.groupdict().get("d"):
        d = cal.parse_date(m.group("d"))
    else:
        n, d = int(m.group("n")), cal.today
        while d.day != n:  # back to the latest such day of a month
            d -= timedelta(days=1)
    if d is None:
        return expr("week", unresolved=f"could not read the date of {m.group(0).strip()!r}")
    monday = d - timedelta(days=d.weekday())
    return expr("week", intervals=cal.days(monday, monday + timedelta(days=6)))


@rule(r"\b(?:in\s+|during\s+|over\s+)?the\s+week\s+before\s+last\b", priority=COMPOSITE)
def week_before_last(cal: Calendar, m: re.Match) -> TimeExpression:
    monday = cal.today - timedelta(days=cal.today.weekday() + 14)
    return expr("week", intervals=cal.days(monday, monday + timedelta(days=6)))


_UNTIL_NOW = r"(?:\s+(?:until|till|to|up\s+to)\s+(?:now|today)|\s+on(?:wards?)?)"


@rule(rf"\bsince\s+(?:last\s+|this\s+past\s+)?(?P<wd>{WEEKDAY})\b{_UNTIL_NOW}?",
      rf"\bfrom\s+(?:last\s+|this\s+past\s+)?(?P<wd>{WEEKDAY}){_UNTIL_NOW}\b",
      rf"\bsince\s+(?P<d>{DATE}){_UNTIL_NOW}?", rf"\bfrom\s+(?P<d>{DATE}){_UNTIL_NOW}\b", priority=COMPOSITE)
def since(cal: Calendar, m: re.Match) -> TimeExpression:
    """"Since Tuesday" (the latest Tuesday before today), "from June 9 until now": from that day on."""
    if m.groupdict().get("wd"):
        back = (cal.today.weekday() - WEEKDAYS.index(m.group("wd"))) % 7 or 7
        d = cal.today - timedelta(days=back)
    else:
        d = cal.parse_date(m.group("d"))
        if d is None:
            return expr("date", unresolved=f"could not read the date {m.group('d')!r}")
    return with_prep(cal, "since", "date", cal.days(d, d))


@rule(r"\b(?:the|our)\s+(?:very\s+)?(?P<n>\d+(?:st|nd|rd|th)|last|latest|final|most\s+recent|previous)\s+time\s+"
      r"(?:that\s+)?(?:we|i|you)\s+(?:\w+\s+)?(?:talked|spoke|met|chatted|discussed|had\s+a\s+\w+)\b",
      priority=COMPOSITE)
def nth_time_we_talked(cal: Calendar, m: re.Match) -> TimeExpression:
    """"The first time we talked" (session 1), "the last time we spoke" (the latest), "the 2nd time we met"."""
    n = m.group("n")
    if n[0].isdigit():
        k = int(re.match(r"\d+", n).group(0))
        return expr("session", session_positions=(k, k))
    return expr("relative_session", session_positions=(-1, -1))
