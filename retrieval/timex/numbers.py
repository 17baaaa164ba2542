"""Numbers and ordinals written in words, rewritten as digits: "May eighth" -> "May 8th", "twenty-one" -> "21",
"nineteen seventy eight" -> "1978", "two thousand and eighteen" -> "2018".

Time expressions mix both forms ("the first through third sessions", "167 days ago", "September the
twenty-first nineteen seventy eight"); the grammar reads digits only. A run of number words is read as one number
where it forms one; a run that is two numbers side by side, the first from 10 to 99 ("nineteen seventy eight",
"twenty twenty", "nineteen oh one"), is a year as people say years.
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

CARDINAL = {w: i for i, w in enumerate(UNITS)} | {w: 10 * i for i, w in enumerate(TENS) if w} | {"oh": 0}
ORDINAL = {w: i for i, w in enumerate(ORDINAL_UNITS)} | {w: 10 * i for i, w in enumerate(ORDINAL_TENS) if w}
SCALES = {"hundred": 100, "thousand": 1000}
ORDINAL_SCALES = {"hundredth": 100, "thousandth": 1000}
WORDS = sorted(set(CARDINAL) | set(ORDINAL) | set(SCALES) | set(ORDINAL_SCALES), key=len, reverse=True)
NUMBER_RUN = re.compile(r"\b(?:{0})(?:(?:[\s-]+|\s+and\s+)(?:{0}))*\b".format("|".join(WORDS)), re.IGNORECASE)


def ordinal_suffix(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def _number(words: list[str]) -> tuple[int, bool] | None:
    """(value, is_ordinal) of a run of words that is one number ("one thousand seven hundred and eighty nine"),
    else None."""
    total, current, ordinal = 0, 0, False
    for w in words:
        if ordinal or w == "oh":  # an ordinal ends a number; "oh" is a digit only inside a year
            return None
        if w in SCALES or w in ORDINAL_SCALES:
            scale = SCALES.get(w) or ORDINAL_SCALES[w]
            ordinal = w in ORDINAL_SCALES
            if scale == 1000:
                total, current = total + max(current, 1) * 1000, 0
            else:
                if current % 100 and current >= 100:
                    return None
                current = max(current, 1) * 100
            continue
        value = CARDINAL[w] if w in CARDINAL else ORDINAL[w]  # a word of NUMBER_RUN
        ordinal = w in ORDINAL
        if current % 100 >= 20 and current % 10 == 0 and value < 10:
            current += value  # twenty + one
        elif current % 100 == 0 and (current + total == 0 or value < 100):
            current += value  # (one) hundred + sixty
        else:
            return None
    return total + current, ordinal


def _year(words: list[str]) -> int | None:
    """A year said in two parts: "nineteen seventy eight" (1978), "twenty twenty" (2020), "nineteen oh one"."""
    for cut in range(1, len(words)):
        head, tail = _number(words[:cut]), words[cut:]
        if head is None or head[1] or not 10 <= head[0] <= 99:
            continue
        if tail[0] in ("oh", "zero") and len(tail) == 2 and tail[1] in CARDINAL and CARDINAL[tail[1]] < 10:
            return head[0] * 100 + CARDINAL[tail[1]]
        rest = _number(tail)
        if rest is not None and not rest[1] and 10 <= rest[0] <= 99:
            return head[0] * 100 + rest[0]
    return None


def _single(word: str) -> str:
    if word in ORDINAL:
        return f"{ORDINAL[word]}{ordinal_suffix(ORDINAL[word])}"
    if word in ORDINAL_SCALES:
        return f"{ORDINAL_SCALES[word]}th"
    if word == "oh":
        return word
    return str(CARDINAL.get(word, SCALES.get(word, word)))


def _digits(words: list[str]) -> str:
    """The digits of a run of number words: one number, a year in two parts, else the longest numbers from the
    left, one after another ("one and three" -> "1 and 3")."""
    parsed = _number(words)
    if parsed is not None:
        value, ordinal = parsed
        return f"{value}{ordinal_suffix(value)}" if ordinal else str(value)
    year = _year(words)
    if year is not None:
        return str(year)
    for test in (_number, _year):  # the longest number from the left; failing one, the longest year
        for cut in range(len(words) - 1, 0, -1):
            if test(words[:cut]) is not None:
                return _digits(words[:cut]) + " " + _digits(words[cut:])
    return " ".join(_single(w) for w in words)


# "one" after a weekday or a part of the day, and not before a clock's words, is a pronoun: "the tuesday one", "the
# morning one" (a flight, a class), not "Tuesday the 1st"
_PART = r"(?:morning|afternoon|evening|night)"
_PRONOUN_ONE_BEFORE = re.compile(rf"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\s+(?:{_PART}\s+)?$|\b{_PART}\s+$",
                                 re.IGNORECASE)
_CLOCK_AFTER = re.compile(r"\s*(?:o'?clock|am\b|pm\b|a\.m|p\.m|:|thirty|fifteen|forty|twenty|ten\b|oh\b)",
                          re.IGNORECASE)


def words_to_digits(text: str) -> str:
    """Replace every run of number words with its digits (ordinals keep a suffix); the rest of the text as is.
    An "and" inside a number follows "hundred" or "thousand" ("two thousand and eighteen"); any other "and"
    separates two numbers ("sessions one and three"). A lone "one" after a weekday or a part of the day is a pronoun
    ("the tuesday one") and stays a word."""

    def repl(m: re.Match) -> str:
        if m.group(0).lower() == "one" and _PRONOUN_ONE_BEFORE.search(m.string, 0, m.start()) \
                and not _CLOCK_AFTER.match(m.string, m.end()):
            return m.group(0)
        parts = re.split(r"(?<!hundred)(?<!thousand)\s+and\s+", m.group(0).lower())
        out = []
        for part in parts:
            words = [w for w in re.split(r"[\s-]+", part) if w and w != "and"]
            if words == ["oh"] or (words[0] == "oh" and _number(words[1:]) is None):
                out.append(part)  # the interjection
            else:
                out.append(_digits(words))
        return " and ".join(out)

    return NUMBER_RUN.sub(repl, text)


def number_words_back(text: str, original: str) -> str:
    """``text``, a part of ``normalise(original)``, with each number ``original`` wrote in words written in them
    again ("when was 1st day at linden?" -> "when was first day at linden?"): the digits are for the time grammar;
    a question's words are for searching text that says "first" (a number written in digits stays in digits)."""
    back: dict[str, str] = {}
    for m in NUMBER_RUN.finditer(original):
        words = m.group(0).lower()
        digits = words_to_digits(words)
        if digits != words and not re.search(rf"(?<!\w){re.escape(digits)}(?!\w)", original.lower()):
            back.setdefault(digits, words)
    if not back:
        return text
    found = re.compile(r"(?<!\w)({})(?!\w)".format("|".join(map(re.escape, sorted(back, key=len, reverse=True)))))
    return found.sub(lambda m: back[m.group(1)], text)
