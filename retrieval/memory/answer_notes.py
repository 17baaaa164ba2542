"""What an answer says first: the words of the question it could not read, and, when it has nothing to show, the
dates it searched, the "now" it counted from and the span the memory holds, so that "nothing" is never mistaken
for "nothing on that day" when the days searched were not the ones meant (a memory of last year asked about "May
1st" this year)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import pandas as pd

from retrieval.memory.table_ops import FALLBACK_NOTE, day_span

WEAK_NOTE = "weak evidence:"  # the evidence is more likely not evidence (retrieval.memory.relevance.confidence)
# The notes that say part of a question was not read, that nothing was found, or that the evidence is weak: an
# answer shows them first.
WARNINGS = ("unreadable time phrase", "not read as English", "no rows:", FALLBACK_NOTE, WEAK_NOTE)


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
