"""How late a plan came: "how many days did the hockey final get pushed back?", "how many days late was the install
in the end?" asks the length from the day a plan first named to the day it ended on, not a length the evidence
states.

The evidence is ranked as for "when was it?"; the best-ranked row (of the first :data:`DELAY_DEPTH`) whose time is a
plan that a later row moved, called off or reported on another day (:func:`~retrieval.memory.plan_change.moved_plan`)
answers: the days from its planned day to the last day its story reached
(:func:`~retrieval.memory.when_answer.answer_from_evidence` says them exactly, "7 days"). A plan that nothing moved
gives no delay, and the question is then answered as any "how long" question is.

    delay = plan_delay(rows, read, frame, "how many days did the final get pushed back?", now)   # or None
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import pandas as pd

from retrieval.memory.event_time import EventTime
from retrieval.memory.plan_change import moved_plan

# a question about how far a plan moved ("pushed back", "delayed", "how many days late")
ASKS_DELAY = re.compile(r"(?i)\b(?:late|delayed|postponed|pushed\s+(?:back|out)|put\s+back|set\s+back|"
                        r"moved\s+back|rescheduled)\b")
DELAY_DEPTH = 5  # the ranked rows whose plans are looked at (the support rule's depth; set before any run)
Read = Callable[[pd.Series], tuple[pd.Series, EventTime, str, list[str]]]  # a ranked row's (row, time, source, how)


@dataclass
class Delay:
    """A plan's move: the ranked row it was found from, the row that said the plan, its planned and its last time,
    the source of the planned time and the derivation."""

    ranked: pd.Series
    said: pd.Series
    planned: EventTime
    last: EventTime
    source: str
    how: list[str]

    @property
    def days(self) -> int:
        """From the planned day to the last (negative: brought forward)."""
        return (self.last.start.date() - self.planned.start.date()).days


def plan_delay(rows: pd.DataFrame, read: Read, frame: pd.DataFrame, question: str, now: datetime,
               depth: int = DELAY_DEPTH) -> Delay | None:
    """The move of the best-ranked plan among the first ``depth`` of ``rows`` (each read by ``read``: its time and
    where it came from), when ``question`` asks how late a plan came (:data:`ASKS_DELAY`); else None."""
    if not ASKS_DELAY.search(question):
        return None
    for _, row in rows.head(depth).iterrows():
        said, t, source, how = read(row)
        if source == "timestamp" or t.granularity != "day":
            continue
        moved = moved_plan(said, t, frame, question, now)
        if moved is not None:
            return Delay(row, said, t, moved[1], source, how + moved[2])
    return None
