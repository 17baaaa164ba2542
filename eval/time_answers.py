"""The evaluation's own reading of a time answer ("7 May 2023", "The sunday before 25 May 2023", "June, 2023",
"2022", "4 years"), and how a predicted interval is scored against it.

It shares no code with the time resolver under test (:mod:`retrieval.memory`): its own month and number words,
its own patterns, the standard library's calendar arithmetic. Used for LoCoMo's gold answers and for the answers
an LLM writes. Readings:

- a date ("7 May 2023", "May 7, 2023", "19 January, 2023", "21Janury, 2022"): that day; a date without a year
  is not read; a range of days ("November 5-6, 2022", "between October 19 and 24, 2023"): those days;
- "the <weekday> before D": the latest such weekday before D; "the day before D", "N days before D";
- "the week before D": the 7 days ``[D-7, D)``; "N weeks before D": ``[D-7N, D-7N+7)``; "the week of D": the
  Monday-to-Sunday week holding D; "the weekend before D": the latest Saturday and Sunday before D; "N weekends
  before D": the N-th such; "the weekend of D": D's weekend (a weekday's: the one after it); "the weekend after D":
  the first after it; "the first / second / last weekend of <month> <year>";
- a month with its year ("June 2023", "January, 2023", "April.2023", "around August 2022"): that month;
- "the summer of 2022", "summer 2022": the meteorological season (northern: June-August; winter from December);
- a year ("2022", "in 2013", "since 2016"): that year;
- a duration ("4 years", "10 years ago", "a few years ago", "two weeks"): a length ``(low, high, unit)``
  ("a few", "several": 2-5; "a couple": 2-3).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from datetime import date, timedelta

MONTH_NUMBERS = {name: i + 1 for i, name in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
     "december"])}
FULL_MONTHS = list(MONTH_NUMBERS)
MONTH_NUMBERS.update({name[:3]: n for name, n in list(MONTH_NUMBERS.items())})
MONTH_NUMBERS["sept"] = 9
DAY_NUMBERS = {name: i for i, name in enumerate(
    ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"])}
COUNT_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
               "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
FUZZY = {"a few": (2, 5), "few": (2, 5), "several": (2, 5), "a couple of": (2, 3), "a couple": (2, 3)}
SEASON_START = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}
UNIT_DAYS = {"day": 1, "week": 7, "month": 30.44, "year": 365.25}
ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "last": -1}

_MONTH = r"(?P<mon>" + "|".join(sorted(MONTH_NUMBERS, key=len, reverse=True)) + r")"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d{2})"
DATE_PATTERNS = [rf"{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}", rf"{_MONTH}\s+{_DAY},?\s+{_YEAR}"]
_COUNTS = r"\d+|" + "|".join(COUNT_WORDS)
_COUNT = rf"(?P<n>{_COUNTS})"


@dataclass(frozen=True)
class GoldTime:
    """A time answer read: ``[start, end)`` in days, with its granularity and form, or a duration."""

    form: str  # date, relative ("the X before Y"), month, season, year, duration
    granularity: str  # day, week, weekend, month, season, year, duration
    start: date | None = None
    end: date | None = None
    duration: tuple[float, float, str] | None = None


def month_spelling(word: str) -> str:
    """A misspelt month's name ("janury", "januarty") as the month; any other word as it is."""
    if word in MONTH_NUMBERS or len(word) < 4:
        return word
    close = difflib.get_close_matches(word, FULL_MONTHS, n=1, cutoff=0.8)
    return close[0] if close else word


def clean(text: str) -> str:
    """Lower case; stray marks out ("3` July"); a dot between a word and a number as a space ("April.2023"); a
    space between a number and the word it touches ("21January", "August,2023"); misspelt months corrected."""
    text = re.sub(r"[`´'\"’]", "", str(text).lower())
    text = re.sub(r"(?<=[a-z])\.(?=\d)", " ", text)
    text = re.sub(r"(\d)(?!(?:st|nd|rd|th)\b)([a-z]{3,})", r"\1 \2", text)
    text = re.sub(r",(?=\d)", ", ", text)
    text = re.sub(r"[a-z]+", lambda m: month_spelling(m.group(0)), text)
    return re.sub(r"\s+", " ", text).strip(" .!")


def _count(token: str) -> int:
    return int(token) if token.isdigit() else COUNT_WORDS[token]


def find_date(text: str) -> tuple[date, re.Match] | None:
    """The first full date (day, month and year) in ``text``."""
    hits = []
    for pattern in DATE_PATTERNS:
        for m in re.finditer(rf"\b{pattern}\b", text):
            try:
                hits.append((m.start(), date(int(m["year"]), MONTH_NUMBERS[m["mon"]], int(m["day"])), m))
            except ValueError:
                continue
    if not hits:
        return None
    _, d, m = min(hits, key=lambda h: h[0])
    return d, m


def month_days(year: int, month: int) -> tuple[date, date]:
    nxt = date(year + month // 12, month % 12 + 1, 1)
    return date(year, month, 1), nxt


def saturday_before(d: date, n: int = 1) -> date:
    """The Saturday of the n-th latest Saturday-Sunday pair whose Sunday is before ``d``."""
    back = (d.weekday() - 6) % 7 or 7  # days back to the latest Sunday before d
    return d - timedelta(days=back + 1 + 7 * (n - 1))


def relative_to(text: str, anchor: date) -> GoldTime | None:
    """ "the X before / of D", where ``text`` is what comes before the date."""
    t = text.strip()
    m = re.search(rf"(?:the\s+)?(?:{_COUNT}\s+)?(day|week|weekend|{'|'.join(DAY_NUMBERS)})s?\s+(before|of|after)$", t)
    if not m:
        return None
    n = _count(m["n"]) if m["n"] else 1
    unit, rel = m.group(2), m.group(3)
    if unit in DAY_NUMBERS:
        back = (anchor.weekday() - DAY_NUMBERS[unit]) % 7 or 7
        d = anchor - timedelta(days=back + 7 * (n - 1)) if rel == "before" else None
        return GoldTime("relative", "day", d, d + timedelta(days=1)) if d else None
    if unit == "day":
        d = anchor + timedelta(days=n if rel == "after" else -n if rel == "before" else 0)
        return GoldTime("relative", "day", d, d + timedelta(days=1))
    if unit == "week":
        if rel == "of":
            monday = anchor - timedelta(days=anchor.weekday())
            return GoldTime("relative", "week", monday, monday + timedelta(days=7))
        start = anchor - timedelta(days=7 * n) if rel == "before" else anchor + timedelta(days=1 + 7 * (n - 1))
        return GoldTime("relative", "week", start, start + timedelta(days=7))
    if rel == "before":
        sat = saturday_before(anchor, n)
    elif rel == "of" and anchor.weekday() >= 5:  # the weekend holding a Saturday or Sunday
        sat = anchor - timedelta(days=anchor.weekday() - 5)
    else:  # the weekend after (or "of" a weekday): the first Saturday after the day
        sat = anchor + timedelta(days=(5 - anchor.weekday()) % 7 or 7) + timedelta(days=7 * (n - 1))
    return GoldTime("relative", "weekend", sat, sat + timedelta(days=2))


def nth_weekend(text: str) -> GoldTime | None:
    m = re.search(rf"\b(first|second|third|fourth|last)\s+weekend\s+of\s+{_MONTH},?\s+{_YEAR}", text)
    if not m:
        return None
    first, nxt = month_days(int(m["year"]), MONTH_NUMBERS[m["mon"]])
    days = [first + timedelta(days=i) for i in range((nxt - first).days)]
    saturdays = [d for d in days if d.weekday() == 5]
    sat = saturdays[-1 if m.group(1) == "last" else ORDINALS[m.group(1)] - 1]
    return GoldTime("relative", "weekend", sat, sat + timedelta(days=2))


def day_range(text: str) -> GoldTime | None:
    """ "November 5-6, 2022", "between October 19 and 24, 2023", "October 30 to 31, 2022": the days, both ends in."""
    m = re.search(rf"\b{_MONTH}\s+(?P<a>\d{{1,2}})(?:st|nd|rd|th)?\s*(?:-|to|and|through)\s*(?P<b>\d{{1,2}})"
                  rf"(?:st|nd|rd|th)?,?\s+{_YEAR}", text)
    if not m:
        return None
    try:
        first, last = (date(int(m["year"]), MONTH_NUMBERS[m["mon"]], int(m[k])) for k in ("a", "b"))
    except ValueError:
        return None
    return GoldTime("relative", "span", first, last + timedelta(days=1)) if first <= last else None


def duration(text: str) -> GoldTime | None:
    m = re.fullmatch(rf"(?:about\s+|around\s+|over\s+|almost\s+|nearly\s+)?(?P<q>{'|'.join(FUZZY)}|{_COUNTS})\s+"
                     r"(?P<unit>day|week|month|year)s?(?:\s+ago)?", text)
    if not m:
        return None
    lo, hi = FUZZY.get(m["q"]) or (_count(m["q"]),) * 2
    return GoldTime("duration", "duration", duration=(lo, hi, m["unit"]))


def parse_time_answer(text: object) -> GoldTime | None:
    """A time answer -> :class:`GoldTime`, or None when it is not one this parser reads (see the module)."""
    t = clean(text)
    if not t:
        return None
    found = None if re.search(r"\d\s*(?:-|to|and|through)\s*\d", t) else find_date(t)
    if found:
        d, m = found
        rel = relative_to(t[:m.start()], d)
        return rel or GoldTime("date", "day", d, d + timedelta(days=1))
    for reader in (day_range, nth_weekend, duration):
        got = reader(t)
        if got:
            return got
    m = re.search(rf"\b(spring|summer|fall|autumn|winter)\s+(?:of\s+)?{_YEAR}", t)
    if m:
        y, mo = int(m["year"]), SEASON_START[m.group(1)]
        end = date(y + (mo + 3 > 12), (mo + 2) % 12 + 1, 1)
        return GoldTime("season", "season", date(y, mo, 1), end)
    m = re.search(rf"\b{_MONTH},?\s+{_YEAR}\b", t)
    if m:
        return GoldTime("month", "month", *month_days(int(m["year"]), MONTH_NUMBERS[m["mon"]]))
    m = re.search(rf"\b{_YEAR}\b", t)
    if m and not re.search(r"\d", t[:m.start()] + t[m.end():]):
        y = int(m["year"])
        return GoldTime("year", "year", date(y, 1, 1), date(y + 1, 1, 1))
    return None


# ---- scoring --------------------------------------------------------------------------------------------
def widen(start: date, end: date, granularity: str) -> tuple[date, date]:
    """``[start, end)`` widened to whole units of ``granularity``: months for a month or season, years for a year,
    days otherwise."""
    if granularity in ("month", "season"):
        last = end - timedelta(days=1)
        return date(start.year, start.month, 1), month_days(last.year, last.month)[1]
    if granularity == "year":
        return date(start.year, 1, 1), date((end - timedelta(days=1)).year + 1, 1, 1)
    return start, end


def in_unit(value: tuple[float, float, str], unit: str) -> tuple[float, float]:
    lo, hi, u = value
    f = UNIT_DAYS[u] / UNIT_DAYS[unit]
    return lo * f, hi * f


def score(gold: GoldTime, start: date | None, end: date | None,
          length: tuple[float, float, str] | None = None) -> tuple[bool, bool]:
    """(strict, lenient) for a prediction ``[start, end)`` (days) and, for a length, ``length``.

    Strict: the prediction, widened to the gold's granularity, is the gold's interval (a duration: the same
    length, rounded, in the gold's unit). Lenient: the intervals overlap and the prediction is no coarser (no
    longer) than the gold's (a duration: the ranges overlap, to half a unit)."""
    if gold.duration is not None:
        if length is None:
            return False, False
        lo, hi = in_unit(length, gold.duration[2])
        strict = (round(lo), round(hi)) == (round(gold.duration[0]), round(gold.duration[1]))
        return strict, strict or (lo - 0.5 <= gold.duration[1] and gold.duration[0] <= hi + 0.5)
    if start is None or end is None:
        return False, False
    strict = widen(start, end, gold.granularity) == (gold.start, gold.end)
    overlap = start < gold.end and gold.start < end
    return strict, strict or (overlap and (end - start) <= (gold.end - gold.start))
