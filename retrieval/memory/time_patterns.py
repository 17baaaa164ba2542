"""The vocabulary of time expressions: month and weekday names, parts of the day, the regex fragments the
rules are built from, the cue words of a phrase no rule resolves, and the normalisation every question goes
through first (number words as digits, a misspelt month beside a day number corrected)."""

from __future__ import annotations

import difflib
import re
from functools import lru_cache

from retrieval.memory.number_words import words_to_digits
from retrieval.search.english import MONTHS

WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
PARTS_OF_DAY = {"morning": (0, 12), "afternoon": (12, 18), "evening": (17, 24), "night": (18, 24), "day": (0, 24)}

# Fragments of the rules' patterns: a month's name, a day of the month, a year, a date, a month with its year, a
# word for a session, a count ("a" is one), a word that joins a range's ends, a message and its number, and a
# preposition that bounds a range.
MON = r"(?:{})\.?(?![a-z])".format("|".join(sorted(MONTHS, key=len, reverse=True)))
DAYN = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?(?![\d:])"
YR = r"(?:19|20)\d{2}\b"
DATE = (rf"(?:{MON}\s+{DAYN}(?:,?\s+{YR})?|(?:the\s+)?{DAYN}(?:\s+of)?\s+{MON}(?:,?\s+{YR})?"
        rf"|\d{{4}}-\d{{1,2}}-\d{{1,2}}|\d{{1,2}}/\d{{1,2}}/(?:\d{{4}}|\d{{2}})\b)")
MON_Y = rf"{MON}(?:,?\s+(?:of\s+)?{YR})?"
SESS = r"(?:sessions?|discussions?|conversations?|chats?|talks?|meetings?)"
NUM = r"(\d+|an?)"
TO = r"(?:and|to|through|thru|until|till|-|–)"
RESP = r"(?:responses?|messages?|utterances?)"
RESP_NUM = r"(?:#\s*|number\s+|no\.?\s*)?(\d+)"
PREP = r"(?:since|before|after|until|till|by)"
# A session named by its date, before the date: "the session on", "our chat of", "the one on" (optional).
DATED_SESSION = (rf"(?:(?:(?:the|our)\s+(?:1|ones?|{SESS})|we\s+(?:talked|spoke|met|chatted))\s+(?:on|of|from)\s+)?")
WEEKDAY = "(?:{})".format("|".join(WEEKDAYS))
PART = r"(morning|afternoon|evening|night)"
# "may" and "march" are words too: as bare months they need a preposition before them or a year after.
BARE_MONTH = (rf"(?:(?:(?P<inprep>in|during|of|for|over|since|before|after|until|by|from)\s+(?:the\s+month\s+of\s+)?)"
              rf"(?P<m1>{MON})(?:,?\s+(?P<y1>{YR}))?|(?P<m2>{MON})\s+(?P<y2>{YR})"
              rf"|(?P<m3>(?!may\b|march\b|mar\b){MON})\b)")
# Words that say a phrase is about time: one that no rule resolves is reported, not dropped. A bare unit noun
# ("how many sessions", "what day") is a time reference only after a quantity ("a few weeks", "those days").
_CUE_MONTHS = "|".join(m for m in MONTHS if len(m) > 3 and m not in ("may", "march"))
CUES = re.compile(r"\b(?:\d+\s+\w+\s+ago|ago|yesterday|tomorrow|tonight|weekends?|mornings?|afternoons?|"
                  r"evenings?|(?:(?:a\s+)?(?:few|couple(?:\s+of)?|several|some|those|these|\d+)\s+(?:\w+\s+)?)"
                  r"(?:weeks?|months?|years?|days?|sessions?)|recently|lately|earlier|next|"
                  rf"{'|'.join(WEEKDAYS)}|{_CUE_MONTHS})\b")

# Cue words that name no period of their own ("what had she recently taken up"): beside a time the question does
# read, they belong to what it asks about, not to when.
VAGUE_CUES = frozenset({"recently", "lately", "earlier", "next", "ago"})

FULL_MONTHS = [max((m for m in MONTHS if MONTHS[m] == n), key=len) for n in range(1, 13)]
# A word beside a day number ("Janurary 17th", "the 3rd of Febuary"), to check for a misspelt month.
_BESIDE_DAY = re.compile(r"\b([a-z]{4,})(?=\s+\d{1,2}(?:st|nd|rd|th)?\b)"
                         r"|(?<=\d)((?:st|nd|rd|th)?\s+(?:of\s+)?)([a-z]{4,})\b")


def _month_spelling(word: str) -> str:
    """``word`` if it is a month or not close to one; else the month it misspells ("janurary", "febuary"). A word
    that starts with a month's name ("augusta") is left alone."""
    if word in MONTHS or any(word.startswith(m) for m in FULL_MONTHS):
        return word
    close = difflib.get_close_matches(word, FULL_MONTHS, n=1, cutoff=0.85)
    return close[0] if close else word


@lru_cache(maxsize=4096)  # the planner and the resolver both normalise each question
def normalise(text: str) -> str:
    """Lower case, number words as digits, typographic quotes and dashes folded, and a misspelt month beside a
    day number corrected."""
    text = text.replace("’", "'").replace("—", " - ").replace("–", " - ")
    text = words_to_digits(text.lower())
    return _BESIDE_DAY.sub(lambda m: _month_spelling(m.group(1)) if m.group(1)
                           else m.group(2) + _month_spelling(m.group(3)), text)

