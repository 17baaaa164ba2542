"""What an answer says first: the words of the question it could not read, and, when it has nothing to show, the
dates it searched, the "now" it counted from and the span the memory holds, so that "nothing" is never mistaken
for "nothing on that day" when the days searched were not the ones meant (a memory of last year asked about "May
1st" this year)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta, timezone

import pandas as pd

from retrieval.memory.plan_change import is_plan
from retrieval.memory.table_ops import FALLBACK_NOTE, day_span

WEAK_NOTE = "weak evidence:"  # the evidence is more likely not evidence (retrieval.memory.relevance.confidence)
# The notes that say part of a question was not read, that nothing was found, or that the evidence is weak: an
# answer shows them first.
PLAN_NOTE = "from a plan:"  # a when-answer read from what was planned, about a time now past (plan_note)
NO_ANSWER_NOTE = "no answer:"  # a question that asks when, left without a date or length (no_answer_note)
RIVAL_NOTE = "conflicting evidence:"  # a likely row says another time (retrieval.memory.relevance.confidence)
FUTURE_NOTE = "now is after this machine's clock:"  # a "now" (given, or a log's last turn) from the future
WARNINGS = ("unreadable time phrase", "not read as English", "no rows:", FALLBACK_NOTE, WEAK_NOTE, PLAN_NOTE,
            NO_ANSWER_NOTE, RIVAL_NOTE, FUTURE_NOTE)


def future_note(now: datetime, given: bool, skew: timedelta) -> str | None:
    """When ``now`` lies after this machine's clock by more than ``skew``: said first, since every "last week" of the
    question counts from it (a log whose last turn is a mistyped year, a ``--now`` in the wrong century); None
    otherwise. ``given``: whether the asker gave it (else it is the log's last turn)."""
    clock = datetime.now(timezone.utc)
    if now <= clock + skew:
        return None
    whose = "as given" if given else "the log's last turn"
    return (f"{FUTURE_NOTE} {now.isoformat(timespec='minutes')} ({whose}) is after {clock:%Y-%m-%d %H:%M} UTC: a "
            "mistyped time? the calendar words count from it")


def no_answer_note(answer) -> str | None:
    """For a when-``answer`` (:class:`~retrieval.memory.when_answer.WhenAnswer`) with no date or length: why, said
    first (the rows shown are then only what was found, not an answer); None when it answers."""
    if answer is None or answer.answer is not None:
        return None
    why = answer.derivation[-1] if answer.derivation else "nothing to read it from"
    return f"{NO_ANSWER_NOTE} the question asks {answer.kind}, and no {answer.kind} could be read: {why}"


def warnings(notes: Sequence[str]) -> list[str]:
    """The notes of :data:`WARNINGS`, in order."""
    return [n for n in notes if n.startswith(WARNINGS)]


def empty_note(expressions: Sequence[dict], frame: pd.DataFrame, now: datetime) -> str:
    """What an answer with no rows searched, and the span the memory holds: said first, so that "nothing" is
    never mistaken for "nothing on that day" when the days searched were not the ones meant."""
    spans = [day_span(a, b) for e in expressions for a, b in e.get("intervals", [])]
    searched = f"searched {'; '.join(spans)}" if spans else "searched the whole memory"
    first, last = frame["timestamp"].iloc[0], frame["timestamp"].iloc[-1]
    return (f"no rows: {searched} (reading 'now' as {now.isoformat(timespec='minutes')}); the memory holds "
            f"{first:%Y-%m-%d} to {last:%Y-%m-%d}")


def plan_note(answer, now: datetime) -> str | None:
    """For a when-``answer`` (:class:`~retrieval.memory.when_answer.WhenAnswer`) read from a plan, a row said before
    the day it names ("the surgery is scheduled for the 26th"), about a day now past: what it was read from, said
    first, since plans move and the row only says what was planned; for a length between two events, that of the
    first event read from such a plan; None otherwise."""
    if answer is not None and answer.answer is not None and answer.events:
        return next((f"{note} (one end of the length {answer.answer!r})" for e in answer.events
                     if (note := plan_note(e, now))), None)
    if answer is None or answer.answer is None or answer.said is None or answer.start is None or answer.end is None:
        return None
    if answer.kind not in ("when", "month", "year", "weekend") or answer.source == "timestamp":
        return None
    if not is_plan(answer.start, answer.said) or answer.end > now:
        return None
    return (f"{PLAN_NOTE} {answer.answer!r} is when it was planned on {answer.said:%d %B %Y}, not a report that it "
            "happened then: plans move, so check the later rows")
