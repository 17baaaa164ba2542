"""Numbers and ordinals written in words, rewritten as digits: "May eighth" -> "May 8th", "twenty-one" -> "21".

Time expressions mix both forms ("the first through third sessions", "167 days ago"), and the
time rules read digits only.
"""

from __future__ import annotations

import re

UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
ORDINAL_UNITS = ["zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
                 "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
                 "eighteenth", "nineteenth"]
ORDINAL_TENS = ["", "", "twentieth", "thirtieth", "fortieth", "fiftieth", "sixtieth", "seventieth", "eightieth",
                "ninetieth"]

CARDINAL = {w: i for i, w in enumerate(UNITS)} | {w: 10 * i for i, w in enumerate(TENS) if w}
ORDINAL = {w: i for i, w in enumerate(ORDINAL_UNITS)} | {w: 10 * i for i, w in enumerate(ORDINAL_TENS) if w}
ORDINAL["hundredth"] = 100
WORDS = sorted(set(CARDINAL) | set(ORDINAL) | {"hundred"}, key=len, reverse=True)
NUMBER_RUN = re.compile(r"\b(?:{})(?:(?:[\s-]+|\s+and\s+)(?:{}))*\b".format("|".join(WORDS), "|".join(WORDS)),
                        re.IGNORECASE)


def ordinal_suffix(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def _value(words: list[str]) -> tuple[int, bool] | None:
    """(value, is_ordinal) of a run of number words, or None when the run is not one number."""
    total, current, ordinal = 0, 0, False
    for i, w in enumerate(words):
        if ordinal:  # an ordinal ends a number
            return None
        if w == "hundred" or w == "hundredth":
            current = max(current, 1) * 100
            ordinal = w == "hundredth"
            continue
        value = CARDINAL.get(w, ORDINAL.get(w))
        ordinal = w in ORDINAL
        if current % 100 >= 20 and current % 10 == 0 and value < 10:
            current += value  # twenty + one
        elif current % 100 == 0 and (current == 0 or value < 100):
            current += value  # (one) hundred + sixty
        else:
            return None
    return total + current, ordinal


def _single(word: str) -> str:
    if word in ORDINAL:
        return f"{ORDINAL[word]}{ordinal_suffix(ORDINAL[word])}"
    return str(CARDINAL[word]) if word in CARDINAL else ("100" if word == "hundred" else word)


def words_to_digits(text: str) -> str:
    """Replace every run of number words that forms one number with its digits (ordinals keep a suffix)."""

    def repl(m: re.Match) -> str:
        words = [w for w in re.split(r"[\s-]+", m.group(0).lower()) if w and w != "and"]
        parsed = _value(words)
        if parsed is None:  # e.g. "one and three": convert each word on its own, keep the rest
            return re.sub(r"[a-z]+", lambda w: _single(w.group(0)), m.group(0).lower())
        value, ordinal = parsed
        return f"{value}{ordinal_suffix(value)}" if ordinal else str(value)

    return NUMBER_RUN.sub(repl, text)
