"""The quantity a table cell states, so that a column's cells can be ordered: "the most", "the longest", "more
than 21".

:func:`magnitude` reads a cell's leading quantity: a clock time or duration ("3:39" as 219, counted in its last
unit: "1:02:03" as 3,723), a date written with a month's name ("September 12, 1982", "28 January 1983", read
as the number yyyymmdd, so that dates order as numbers), or a number at the start of the text, with its sign and
thousands separators ("13,931", "+26", "−9", "996 days", "6th", "2002"). Anything else (a name, an empty cell) is
``nan``. Orders only matter within a column, so a duration and a date never meet.
"""

from __future__ import annotations

import math
import re

from retrieval.search.english import MONTHS

_MINUS = str.maketrans({"\u2212": "-", "\u2013": "-", "\u2014": "-"})
_CLOCK = re.compile(r"^(\d+):(\d{2})(?::(\d{2}))?(?:\.\d+)?(?![\d:])")
_MONTH_DAY_YEAR = re.compile(r"\b([a-z]{3,9})\.? (\d{1,2})(?:st|nd|rd|th)?,? (\d{4})\b")
_DAY_MONTH_YEAR = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)? ([a-z]{3,9})\.?,? (\d{4})\b")
_NUMBER = re.compile(r"^[(\[]?([-+]?)(\d[\d,]*(?:\.\d+)?|\.\d+)")


def _date(text: str) -> float | None:
    for pattern, month_at in ((_MONTH_DAY_YEAR, 0), (_DAY_MONTH_YEAR, 1)):
        m = pattern.search(text)
        if m:
            month = MONTHS.get(m.group(month_at + 1))
            day = int(m.group(2 - month_at))
            if month and 1 <= day <= 31:
                return int(m.group(3)) * 10000 + month * 100 + day
    return None


def magnitude(text: str) -> float:
    """The quantity ``text`` starts with (see the module's description), or ``nan``."""
    t = " ".join(text.lower().translate(_MINUS).split())
    if not t:
        return math.nan
    m = _CLOCK.match(t)
    if m:
        hours_or_minutes, minutes_or_seconds, seconds = int(m.group(1)), int(m.group(2)), m.group(3)
        if seconds is None:
            return float(hours_or_minutes * 60 + minutes_or_seconds)
        return float(hours_or_minutes * 3600 + minutes_or_seconds * 60 + int(seconds))
    date = _date(t)
    if date is not None:
        return float(date)
    m = _NUMBER.match(t)
    if m:
        return float(m.group(1) + m.group(2).replace(",", ""))
    return math.nan
