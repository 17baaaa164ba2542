"""A length between two events ("How many weeks passed between Maria adopting Coco and Shadow?", "How long did
John work there before he quit?"): each event's time from its own evidence, and the length between them.

    parts = between_parts("How many weeks passed between Maria adopting Coco and Shadow?")
    # ("maria adopting coco", "maria adopting shadow"): a short second part borrows the first one's words
    answer = answer_between(rows_a, rows_b, asked_unit(question))      # "2 weeks", duration (2, 2, "week")

Each event's time is its evidence row's event time when it states one, else the day it was said (as for a
when-question, :func:`~retrieval.memory.when_answer.pick_evidence`); the length is between the middles of the two
intervals, in the unit the question asks for ("how many weeks"), else in the largest unit of which it holds at
least two (days under two weeks, weeks under two months, months under two years, then years), rounded.
"""

from __future__ import annotations

import re
from datetime import datetime

import pandas as pd

from retrieval.memory.event_time import EventTime, day_of, event_time_of
from retrieval.memory.when_answer import (
    UNIT_DAYS,
    WhenAnswer,
    answer_from_evidence,
    length_text,
    pick_evidence,
    row_probability,
    states_length,
    unit_for,
)

UNIT = r"(?:days|weeks|months|years)"
HOW = rf"how\s+(?:long|many\s+{UNIT}|much\s+time)"
# "between X and Y"; "X before Y" / "X after Y" / "X until Y" after a how-long opening
_BETWEEN = re.compile(rf"^\W*{HOW}\b.*?\bbetween\s+(?P<a>.+?)\s+and\s+(?P<b>.+?)\W*$", re.I)
_BEFORE = re.compile(rf"^\W*{HOW}\s+(?:\w+\s+){{0,2}}?(?P<a>.+?)\s+(?:before|after|until|till)\s+(?P<b>.+?)\W*$",
                     re.I)
_AFTER = re.compile(rf"^\W*{HOW}\s+(?:before|after)\s+(?P<a>.+?)\s+(?:did|does|do|was|were|had|has|have|is|will)\s+"
                    r"(?P<b>.+?)\W*$", re.I)
_ORDINAL = r"(?:first|second|third|fourth|fifth|last|\d+(?:st|nd|rd|th))"
_HOW_PREFIX = re.compile(rf"^\W*{HOW}\s+(?:(?:has|have|had|did|was|were|is|are|does|do|passed|elapsed|went\s+by|"
                         r"it|between)\s+)*", re.I)


def _two_events(question: str) -> re.Match | None:
    """The pattern a question names two events by: "between X and Y", "how long after X did Y", "X before Y"."""
    return _BETWEEN.match(question) or _AFTER.match(question) or _BEFORE.match(question)


def between_parts(question: str) -> tuple[str, str] | None:
    """The two events a how-long question measures between, or None when it names one (see the module)."""
    m = _two_events(question)
    if not m:
        return None
    a, b = m.group("a").strip(), m.group("b").strip()
    if m.re is _BEFORE:  # the first event is the question's own clause: "how long did John work there | before"
        a = re.sub(r"\s+(?:before|after|until|till)$", "", _HOW_PREFIX.sub("", question[:m.start("b")]).strip(),
                   flags=re.I)
    a, b = _HOW_PREFIX.sub("", a), b
    words, tail = a.split(), b.split()
    if len(tail) == 1 and tail[0][:1].isupper() and len(words) > 2:  # "adopting Coco and Shadow": Shadow too
        b = " ".join(words[:-1] + tail)
    elif re.fullmatch(_ORDINAL, words[-1], re.I) and len(tail) > 1:  # "her first and second tattoo"
        a = f"{a} {tail[-1]}"
    return a, b


def measures_first_event(question: str) -> bool:
    """Whether the question's first event is its own clause, whose length it may ask ("how long did John work
    there before he quit?"), not a point it measures from ("how long after we adopted Miso did she ...?", "how
    many weeks passed between X and Y?")."""
    m = _two_events(question)
    return m is not None and m.re is _BEFORE


def asked_unit(question: str) -> str | None:
    """The unit a question asks its length in ("how many weeks ..."), or None."""
    m = re.search(rf"\bhow\s+many\s+({UNIT})\b", question, re.I)
    return m.group(1).lower().rstrip("s") if m else None


def row_time(row: pd.Series) -> tuple[EventTime, str]:
    """A row's event time, else the day it was said; and which it is."""
    t = event_time_of(row)
    if t is not None:
        return t, "event_time"
    start, end = day_of(row["timestamp"].to_pydatetime())
    return EventTime(start, end, "day", "", "timestamp"), "timestamp"


def middle(t: EventTime) -> datetime:
    return t.start + (t.end - t.start) / 2


def split_evidence(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Evidence rows of both events together (gold evidence): the first row, and the rest."""
    return rows.iloc[:1], rows.iloc[1:]


def answer_between(rows_a: pd.DataFrame, rows_b: pd.DataFrame, unit: str | None = None) -> WhenAnswer:
    """The length between the events of ``rows_a`` and ``rows_b`` (each best first), in ``unit`` (None: by its
    size); no answer when either has no row, or both pick the same row."""
    a = pick_evidence(rows_a)
    rest = rows_b if a is None else rows_b.drop(index=[a.name], errors="ignore")
    b = pick_evidence(rest)
    evidence = pd.concat([rows_a, rest])
    if a is None or b is None:
        return WhenAnswer("between", None, evidence=evidence,
                          derivation=["a length between two events needs evidence for each: one has none"])
    (ta, sa), (tb, sb) = row_time(a), row_time(b)
    days = abs((middle(tb) - middle(ta)).total_seconds()) / 86400
    asked, unit = unit, unit or unit_for(days)
    n = round(days / UNIT_DAYS[unit])
    how = [f"row {r.name} ({r['speaker']}, said {r['timestamp'].date()}): {t.phrase!r} -> "
           f"[{t.start.date()}, {t.end.date()})" if s == "event_time" else
           f"row {r.name} ({r['speaker']}) states no time of its own: the day it was said, {t.start.date()}"
           for r, t, s in ((a, ta, sa), (b, tb, sb))]
    first, last = sorted((ta, tb), key=middle)
    pa, pb = row_probability(a), row_probability(b)
    p = None if pa is None or pb is None else pa * pb  # both rows are evidence
    if asked is None and unit != "day" and ta.granularity == tb.granularity == "day":  # two days: the exact count
        d = round(days)
        how.append(f"{d} days between the two days (about {length_text(n, n, unit)})")
        return WhenAnswer("between", f"{length_text(d, d, 'day')} (about {length_text(n, n, unit)})", first.start,
                          last.end, "duration", (d, d, "day"), source=f"{sa}+{sb}", evidence=evidence, derivation=how,
                          probability=p)
    how.append(f"{days:.1f} days between their middles: {n} {unit}(s)")
    return WhenAnswer("between", length_text(n, n, unit), first.start, last.end, "duration", (n, n, unit),
                      source=f"{sa}+{sb}", evidence=evidence, derivation=how, probability=p)


def answer_length_between(question: str, rows_a: pd.DataFrame, rows_b: pd.DataFrame, now: datetime) -> WhenAnswer:
    """A ``between`` question answered: the length the first event's evidence states itself when the question asks
    it (:func:`measures_first_event`: "I worked there for 3 years before I quit"), else the length between the two
    events (:func:`answer_between`), else, with evidence
    for one event only, that event's length as a how-long question's."""
    first = pick_evidence(rows_a)
    own = states_length(first) and measures_first_event(question)
    out = None if own else answer_between(rows_a, rows_b, asked_unit(question))
    if out is None or out.answer is None:
        out = answer_from_evidence("how_long", rows_a, now)
        out.derivation.insert(0, "the length the first event's evidence gives (how long)")
        out.kind = "between"
    return out
