"""A length between two events ("How many weeks passed between Maria adopting Coco and Shadow?", "How long did
John work there before he quit?", "how long was it from the demo to the counters going in?"): each event's time from
its own evidence, and the length between them.

    parts = between_parts("How many weeks passed between Maria adopting Coco and Shadow?")
    # ("maria adopting coco", "maria adopting shadow"): a short second part borrows the first one's words
    answer = answer_between(rows_a, rows_b, asked_unit(question))      # "2 weeks", duration (2, 2, "week")

Each event's time is the answer to "when <that event>?" from its own evidence rows, read as any when-question's is
(:func:`~retrieval.memory.when_answer.answer_from_evidence`: the evidence rule, the clause that tells the event, a plan
a later row says moved, else the day it was said); the length is between the middles of the two intervals, in the
unit the question asks for ("how many weeks"), else in the largest unit of which it holds at least two (days under
two weeks, weeks under two months, months under two years, then years), rounded.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime

import pandas as pd

from retrieval.data.types import ContextTurn
from retrieval.memory.content_carry import pronoun_event
from retrieval.memory.when_answer import (
    EVIDENCE_RULE,
    UNIT_DAYS,
    WhenAnswer,
    answer_from_evidence,
    length_text,
    pick_evidence,
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
# "how long was it from X to Y", "how many days from X until Y"
_FROM = re.compile(rf"^\W*{HOW}\b.*?\bfrom\s+(?P<a>.+?)\s+(?:to|until|till)\s+(?P<b>.+?)\W*$", re.I)
_ORDINAL = r"(?:first|second|third|fourth|fifth|last|\d+(?:st|nd|rd|th))"
_HOW_PREFIX = re.compile(rf"^\W*{HOW}\s+(?:(?:has|have|had|did|was|were|is|are|does|do|passed|elapsed|went\s+by|"
                         r"it|between)\s+)*", re.I)


def _two_events(question: str) -> re.Match | None:
    """The pattern a question names two events by: "between X and Y", "from X to Y", "how long after X did Y", "X
    before Y"."""
    return _BETWEEN.match(question) or _FROM.match(question) or _AFTER.match(question) or _BEFORE.match(question)


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


def middle(a: WhenAnswer) -> datetime:
    assert a.start is not None and a.end is not None
    return a.start + (a.end - a.start) / 2


def split_evidence(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Evidence rows of both events together (gold evidence): the first row, and the rest."""
    return rows.iloc[:1], rows.iloc[1:]


def event_answer(rows: pd.DataFrame, part: str | None, now: datetime | None, rule: str,
                 frame: pd.DataFrame | None) -> WhenAnswer:
    """When one event of a between question happened: "when <part>?" answered from its evidence ``rows`` as any
    when-question is; ``now`` defaults to the last row said."""
    last = (frame if frame is not None else rows)["timestamp"].max().to_pydatetime()
    return answer_from_evidence("when", rows, now or last, rule, frame, question=part)


def answer_between(rows_a: pd.DataFrame, rows_b: pd.DataFrame, unit: str | None = None, now: datetime | None = None,
                   rule: str = EVIDENCE_RULE, frame: pd.DataFrame | None = None,
                   parts: tuple[str, str] | None = None) -> WhenAnswer:
    """The length between the events of ``rows_a`` and ``rows_b`` (each best first), in ``unit`` (None: by its
    size): each event's time is the answer to "when <part>?" from its rows (:func:`event_answer`; ``parts`` the
    question's two events, ``frame`` the whole log), and the length lies between the two answers' middles. No answer
    when either has none, or when both are the same row's same time (one row cannot tell both events; a row that
    times each in its own clause can)."""
    part_a, part_b = parts or (None, None)
    a = event_answer(rows_a, part_a, now, rule, frame) if len(rows_a) else None
    b = event_answer(rows_b, part_b, now, rule, frame) if len(rows_b) else None
    if a is not None and b is not None and a.row == b.row and (a.start, a.end) == (b.start, b.end):
        rest = rows_b.drop(index=[a.row])
        b = event_answer(rest, part_b, now, rule, frame) if len(rest) else None
    evidence = pd.concat([rows_a, rows_b[~rows_b.index.isin(rows_a.index)]])
    if a is None or b is None or a.answer is None or b.answer is None:
        return WhenAnswer("between", None, evidence=evidence,
                          derivation=["a length between two events needs evidence for each: one has none"])
    how = [f"{'first' if n == 0 else 'second'} event{f' ({part!r})' if part else ''}: {e.answer}, from "
           + "; ".join(e.derivation) for n, (e, part) in enumerate(((a, part_a), (b, part_b)))]
    days = abs((middle(b) - middle(a)).total_seconds()) / 86400
    asked, unit = unit, unit or unit_for(days)
    n = round(days / UNIT_DAYS[unit])
    first, last = sorted((a, b), key=middle)
    p = None if a.probability is None or b.probability is None else a.probability * b.probability  # both evidence
    source = f"{a.source}+{b.source}"
    assert first.start is not None and last.end is not None
    if asked is None and unit != "day" and a.granularity == b.granularity == "day":  # two days: the exact count
        d = round(days)
        how.append(f"{d} days between the two days (about {length_text(n, n, unit)})")
        return WhenAnswer("between", f"{length_text(d, d, 'day')} (about {length_text(n, n, unit)})", first.start,
                          last.end, "duration", (d, d, "day"), source=source, evidence=evidence, derivation=how,
                          probability=p, events=[a, b])
    how.append(f"{days:.1f} days between their middles: {n} {unit}(s)")
    return WhenAnswer("between", length_text(n, n, unit), first.start, last.end, "duration", (n, n, unit),
                      source=source, evidence=evidence, derivation=how, probability=p, events=[a, b])


def answer_length_between(question: str, rows_a: pd.DataFrame, rows_b: pd.DataFrame, now: datetime,
                          rule: str = EVIDENCE_RULE, frame: pd.DataFrame | None = None,
                          parts: tuple[str, str] | None = None) -> WhenAnswer:
    """A ``between`` question answered: the length the first event's evidence states itself when the question asks
    it (:func:`measures_first_event`: "I worked there for 3 years before I quit"), else the length between the two
    events (:func:`answer_between`, each event's time answered by ``rule`` over ``frame``; ``parts`` the two events,
    by default :func:`between_parts` of ``question``), else, with evidence
    for one event only, that event's length as a how-long question's."""
    first = pick_evidence(rows_a)
    own = states_length(first) and measures_first_event(question)
    out = None if own else answer_between(rows_a, rows_b, asked_unit(question), now, rule, frame,
                                          parts or between_parts(question))
    if out is None or out.answer is None:
        out = answer_from_evidence("how_long", rows_a, now)
        out.derivation.insert(0, "the length the first event's evidence gives (how long)")
        out.kind = "between"
    return out


def length_between_events(question: str, history: Sequence[ContextTurn] | None,
                          evidence: Callable[[str], pd.DataFrame], now: datetime, rule: str = EVIDENCE_RULE,
                          frame: pd.DataFrame | None = None) -> WhenAnswer | None:
    """A question that names two events answered (:func:`answer_length_between`), each event's rows ranked by
    ``evidence``; an event named by a pronoun alone is the earlier question's ("how many days after that did he
    start?", :func:`~retrieval.memory.content_carry.pronoun_event`). None when the question names no two events."""
    parts = between_parts(question)
    if parts is None:
        return None
    parts = (pronoun_event(parts[0], history), pronoun_event(parts[1], history))
    return answer_length_between(question, evidence(parts[0]), evidence(parts[1]), now, rule, frame, parts)
