"""An event dated by another event: "priya is flying in from perth the day he goes to rehab", "farewell drinks will
be on my last day". The row that tells the event states no time of its own, but it names the day by an event the
memory may date elsewhere ("dad went to rehab friday", "thursday 10 april" in answer to "whens your last day").

    answer = anchored_answer(answer, lambda q: memory.when_evidence(q, now), now, rule, frame)  # or as it was

A phrase **anchors** a day when it is a day's noun followed by what happened on it, or a possessive day that is
someone's own (:func:`anchor_phrase`):

- a unit of the day (day, night, morning, afternoon, evening, weekend) with a clause ("the day he goes to rehab",
  "the night we got back", "the morning that i left") or an "of" phrase ("the morning of the race");
- a unit of the day after or before an event ("the day after the recital", "the night before the race"): the day
  next to that event's;
- a possessive with a modifier and a unit, or a day-naming noun ("my last day", "her first night", "our wedding
  day", "his birthday", "their anniversary").

A unit alone, or one a time phrase already reads ("the day before", "the other day", "the next morning"), anchors
nothing. Only a when-answer read from its row's own timestamp (the row states no time) is anchored, so a row that
states its time is never re-read: the anchor's event is asked as a when-question of its own ("when he goes to
rehab?", "when ben's last day?": the row's speaker for "my", "our"), answered from its evidence as any when-question
is (the anchoring row left out), and its day answers when it states a time. Both rows must be evidence, so the
answer's probability is the product of theirs, and its derivation names both.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta

import pandas as pd

from retrieval.memory.event_time import EventTime
from retrieval.memory.when_answer import WhenAnswer, answer_from_evidence, render

DATED = ("when", "month", "year", "weekend")  # the questions a day answers (not a length)
_UNIT = r"(?:day|night|morning|afternoon|evening|weekend)"
_SUBJECT = r"(?:i|he|she|we|they|you|(?:my|his|her|our|their|your)\s+[a-z]+)"
_POSSESSIVE = r"(?:my|his|her|our|their|your)"
# the unit, then a clause with its own subject ("the day he goes to rehab") or an "of" phrase ("the morning of the
# race"), up to the clause's end (a comma, a full stop, "and", "so", "but", a dash)
_CLAUSE_END = r"(?=\s*(?:[,.;:!?()]|\s-\s|\band\b|\bso\b|\bbut\b|$))"
_WITH_CLAUSE = re.compile(rf"\bthe\s+{_UNIT}\s+(?:(?:that|when)\s+)?(?P<event>{_SUBJECT}\s+[a-z'][a-z' ]*?)"
                          rf"{_CLAUSE_END}", re.IGNORECASE)
_PRONOUN = r"(?:i|he|she|we|they|you|it)\b"
_WITH_OF = re.compile(rf"\bthe\s+{_UNIT}\s+of\s+(?P<event>(?:the|my|his|her|our|their|your)\s+[a-z']+"
                      rf"(?:\s+(?!{_PRONOUN})[a-z']+)?)\b", re.IGNORECASE)  # a noun phrase of one or two words
# a day next to an event: "the day after the recital", "the night before the race" (a day's offset from it)
_AROUND = re.compile(rf"\bthe\s+{_UNIT}\s+(?P<side>after|before)\s+(?P<event>(?:the|my|his|her|our|their|your)\s+"
                     rf"[a-z']+(?:\s+(?!{_PRONOUN})[a-z']+)?)\b", re.IGNORECASE)
# a possessive day: "my last day", "our wedding day" (a modifier before the unit), or a noun that names a day
_OWN_DAY = re.compile(rf"\b(?P<event>{_POSSESSIVE}\s+(?:(?:[a-z]+\s+){{1,2}}{_UNIT}|birthday|anniversary))\b",
                      re.IGNORECASE)
_FIRST_PERSON = {"my": "{speaker}'s", "our": "{speaker}'s", "i": "{speaker}", "we": "{speaker}"}
_NOT_MODIFIERS = re.compile(r"^(?:my|his|her|our|their|your)\s+(?:whole|entire|own|working|the)\s", re.IGNORECASE)


def anchor_phrase(text: str) -> tuple[str, str, int] | None:
    """(the phrase, the event it names, the days from the event to the day it names) of the first anchor in
    ``text`` (see the module), or None."""
    found = [m for rx in (_AROUND, _WITH_CLAUSE, _WITH_OF, _OWN_DAY) for m in rx.finditer(text)
             if not _NOT_MODIFIERS.match(m.group("event"))]
    if not found:
        return None
    m = min(found, key=lambda m: m.start())
    side = m.groupdict().get("side")
    return m.group(0).strip(), m.group("event").strip(), {"after": 1, "before": -1}.get((side or "").lower(), 0)


def anchor_question(event: str, speaker: str) -> str:
    """The when-question that dates ``event``, its first person read as ``speaker``: "when ben's last day?"."""
    words = [_FIRST_PERSON.get(w.lower(), w).format(speaker=speaker) for w in event.split()]
    return f"when {' '.join(words)}?"


def anchored_answer(answer: WhenAnswer, evidence_fn: Callable[[str], pd.DataFrame], now: datetime,
                    rule: str, frame: pd.DataFrame) -> WhenAnswer:
    """``answer`` dated by the event its row names (see the module) when it was read from its row's timestamp and
    that row anchors its day to an event the memory dates; otherwise ``answer`` as it is."""
    if (answer.answer is None or answer.source != "timestamp" or answer.kind not in DATED
            or answer.row not in frame.index):
        return answer
    row = frame.loc[answer.row]
    found = anchor_phrase(str(row["text"]))
    if found is None:
        return answer
    phrase, event, shift = found
    asked = anchor_question(event, str(row["speaker"]))
    rows = evidence_fn(asked)
    rows = rows.drop(index=[answer.row], errors="ignore")
    if not len(rows):
        return answer
    dated = answer_from_evidence(answer.kind, rows, now, rule, frame, question=asked)
    if dated.answer is None or dated.source == "timestamp":
        return answer
    probability = None if answer.probability is None or dated.probability is None else (
        answer.probability * dated.probability)  # both rows must be evidence
    how = [f"row {answer.row} ({row['speaker']}, said {row['timestamp'].isoformat()}) states no time but names the "
           f"day by another event: {phrase!r}; asked {asked!r}: {dated.answer}"] + dated.derivation
    out = replace(dated, evidence=answer.evidence, derivation=how, probability=probability, rival=None)
    if shift and dated.start is not None and dated.end is not None:  # the day after (before) that event's day
        start = dated.start + timedelta(days=shift)
        out.start, out.end, out.granularity = start, start + timedelta(days=1), "day"
        out.answer = render(EventTime(out.start, out.end, "day", phrase, "anchored"), start)
        how.append(f"{'the day after' if shift > 0 else 'the day before'} it: {out.answer}")
    return out
