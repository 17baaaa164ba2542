"""Lengths of time: a count of a unit ("3 days", "a fortnight", "2 hrs"), halves ("an hour and a half", "half an
hour"), vague counts ("a few weeks": 3 as usually read, 2 to 5 as the range it covers) and sums ("1 month and 21
days"). They are values of their own (:class:`~retrieval.timex.values.Duration`), which the shifts and windows of
:mod:`.relative` count with.
"""

from __future__ import annotations

from retrieval.timex import calendar as cal
from retrieval.timex.grammar import Grammar, Of, lit, optional
from retrieval.timex.lexicon import UNITS
from retrieval.timex.rules.parts import is_duration
from retrieval.timex.values import Duration

G = Grammar()

UNIT_PATTERN = (r"(seconds?|secs?|minutes?|mins?|mn|hours?|hrs?|h|days?|d|weeks?|wks?|w|fortnights?|months?|mos?|"
                r"mths?|quarters?|qtrs?|years?|yrs?|y|decades?|century|centuries)")


def unit_of(word: str) -> tuple[str, int]:
    w = word.lower()
    if w == "centuries":
        return "century", 1
    if w not in UNITS and w.endswith("s"):
        w = w[:-1]
    return UNITS[w]


def duration(n: float, word: str, fuzzy: tuple[int, int] | None = None) -> Duration:
    grain, mult = unit_of(word)
    return Duration(((grain, n * mult),), fuzzy)


@G.rule("n units", lit(rf"(\d+(?:\.\d+)?|an?|1)\s*{UNIT_PATTERN}\b(?!\s*old)"))
def n_units(m):
    n = 1 if m[1] in ("a", "an") else float(m[1])
    if m[2] in ("h", "d", "w", "y", "mn") and m[1] in ("a", "an"):
        return None
    return duration(n, m[2])


@G.rule("n and a half units", lit(rf"(\d+|an?)\s+and\s+(?:a\s+)?half\s+{UNIT_PATTERN}\b"))
def and_half(m):
    return duration((1 if m[1] in ("a", "an") else int(m[1])) + 0.5, m[2])


@G.rule("units and a half", lit(rf"(an?|\d+)\s+{UNIT_PATTERN}\s+and\s+a\s+half\b"))
def unit_and_half(m):
    return duration((1 if m[1] in ("a", "an") else int(m[1])) + 0.5, m[2])


@G.rule("half an hour", lit(rf"half\s+(?:an?|1)\s+{UNIT_PATTERN}\b"))
def half_unit(m):
    return duration(0.5, m[1])


@G.rule("a few units", lit(rf"(?:a\s+)?(couple|few|several)\s+(?:of\s+)?{UNIT_PATTERN}\b"))
def few_units(m):
    # the usual reading (a few: 3, as Recognizers-Text reads it) and the range a vague count covers
    low, usual, high = {"couple": (2, 2, 3), "few": (2, 3, 5), "several": (2, 3, 5)}[m[1]]
    return duration(usual, m[2], (low, high))


@G.rule("duration duration", Of(is_duration), optional(",", "and", ", and"), Of(is_duration))
def duration_sum(a, _, b):
    if {g for g, _ in a.parts} & {g for g, _ in b.parts} or a.fuzzy or b.fuzzy:
        return None  # "1 month 21 days", "1 month 2 years"; never "3 days 2 days"
    if cal.rank(a.finest) < cal.rank("day") < cal.rank(b.finest):
        return None
    return a.plus(b)
