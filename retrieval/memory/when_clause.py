"""Which of an utterance's time phrases answers a question: the one in the sentence that tells the asked event.

An utterance may tell two events and time only one: "I'm expanding my studio's social media presence. I'm also
hosting a dance competition next month." Its event time (:mod:`retrieval.memory.event_time`: the first phrase
that resolves) is the competition's; asked "When did he start expanding his social media presence?", the answer
is the day it was said. So, at answer time, the evidence row's text is read sentence by sentence (with the same
resolver, :func:`~retrieval.memory.event_time.read_event_time`; a sentence that states two times, clause by clause:
"the tram ride on Friday and the fado bar on Saturday night") and the sentence sharing the most content words with
the question (:func:`~retrieval.memory.when_neighbours.content_stems`) decides:

- it states a time: that time (it may be a later phrase than the row's first; a "today" too: "I had the
  interview last week. Today they offered me the job!", asked when the job was offered, though at ingest, with
  no question, "today" gives way to the row's other phrases);
- it states none, and the sentence of the row's time shares some of the question's words but only ones that
  sentence has too (a proper subset: "studio" beside "expanding my studio's social media presence"): that time is
  another event's, and the answer is the day the row was said; a time whose sentence brings a word of the
  question of its own ("This hoodie is from my own collection. I made a limited line last week", asked about
  a limited collection of hoodies) stands;
- it states a time in a clause that denies its event ("first day was meant to be yesterday, but I ended up starting
  today"): the row's event time stands (the grammar gave it to the time that is not denied,
  :mod:`~retrieval.memory.event_time`);
- two or more sentences share as many of the question's words ("I heard back from Linden today. They want me in for
  the onsite next Tuesday", asked about the onsite at Linden): none tells the event more than another, and the
  row's event time stands;
- otherwise (the time's sentence shares no word: a frame such as "Guess what I did this week?" before the
  event; or no sentence shares any): the row's event time stands.
"""

from __future__ import annotations

import re
from datetime import datetime

import pandas as pd

from retrieval.memory.event_time import EventReading, EventTime, read_event_time
from retrieval.memory.when_neighbours import content_stems

_SENTENCE = re.compile(r"(?<=[.!?])\s+")


# where a sentence that times two events splits into one clause per event ("the tram ride on Friday and the fado
# bar on Saturday night")
_CLAUSE = re.compile(r"[,;:]\s+|\s+(?:and|but|then|while)\s+")


def sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE.split(str(text).strip()) if s.strip()]


def _span_at(text: str, index: int, separator: re.Pattern, lo: int = 0, hi: int | None = None) -> tuple[int, int]:
    """(start, end) of the piece of ``text[lo:hi]`` between two ``separator`` matches that holds ``index``."""
    hi = len(text) if hi is None else hi
    start = max((m.end() for m in separator.finditer(text, lo, hi) if m.end() <= index), default=lo)
    end = next((m.start() for m in separator.finditer(text, lo, hi) if m.start() >= index), hi)
    return start, end


def sentence_at(text: str, index: int) -> str:
    """The sentence of ``text`` (split as :func:`sentences` splits it) that holds the character at ``index``."""
    start, end = _span_at(text, index, _SENTENCE)
    return text[start:end]


def clause_at(text: str, index: int) -> str:
    """The clause of ``text`` (its sentence split where :func:`clauses` splits one) that holds the character at
    ``index``."""
    start, end = _span_at(text, index, _CLAUSE, *_span_at(text, index, _SENTENCE))
    return text[start:end]


def clauses(text: str, said: datetime) -> list[tuple[str, EventReading]]:
    """The sentences of ``text`` with their event readings (the time, and whether its clause denies it), a sentence
    that states two or more times split into its clauses, so that each time is read with the words of its own
    event."""
    out: list[tuple[str, EventReading]] = []
    for sentence in sentences(text):
        parts = [(p, read_event_time(p, said)) for p in _CLAUSE.split(sentence) if p.strip()]
        timed = sum(r.time is not None for _, r in parts)
        out += parts if timed >= 2 else [(sentence, read_event_time(sentence, said))]
    return out


def clause_time(row: pd.Series, question: str, names: list[str]) -> tuple[EventTime | None, str] | None:
    """The event time of ``row`` that answers ``question`` when it differs from the row's stored one (see the
    module): ``(time or None for the day it was said, why)``; None when the stored reading stands."""
    said: datetime = row["timestamp"].to_pydatetime()
    readings = clauses(row["text"], said)
    parts = [(part, reading.time) for part, reading in readings]
    if len(parts) < 2:
        return None
    asked = content_stems(question, names)
    shared = [asked & content_stems(p, names) for p, _ in parts]
    best = max(range(len(parts)), key=lambda i: len(shared[i]))
    if not shared[best] or sum(len(s) == len(shared[best]) for s in shared) > 1:
        return None  # no sentence, or more than one, tells the asked event best: the stored reading stands
    own = parts[best][1]
    stored = row.get("event_phrase")
    if own is not None and readings[best][1].denied:
        return None  # the sentence telling the event denies its time ("was meant to be yesterday"): the row's stands
    if own is not None:
        if own.phrase == stored:
            return None
        return own, f"the sentence that shares most words with the question says {own.phrase!r}"
    if not isinstance(stored, str):
        return None
    timed = [i for i, (_, t) in enumerate(parts) if t is not None and t.phrase == stored]
    if timed and shared[timed[0]] and shared[timed[0]] < shared[best]:
        return None, (f"{stored!r} is in a sentence about something else (its words of the question, "
                      f"{sorted(shared[timed[0]])}, are all in the sentence telling the event, "
                      f"{sorted(shared[best])}): the day it was said")
    return None
