"""What placing a time gives: a span with its grain and the choices made on the way, or the reason it names none."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from retrieval.timex.calendar import Span

OPEN_START = datetime(1900, 1, 1)  # the start of an open range ("before May 8")


class Unplaceable(ValueError):
    """A time that names no span near the reference ("February 30", "after tomorrow's end")."""


@dataclass(frozen=True)
class Choice:
    """A reading the resolver chose: ``what`` was chosen (``value``) and ``why``."""

    what: str
    value: str
    why: str

    def text(self) -> str:
        return f"{self.what}: {self.value} ({self.why})"


@dataclass(frozen=True)
class Placed:
    start: datetime
    end: datetime
    grain: str
    choices: tuple[Choice, ...] = ()
    point: bool = False  # an instant (start == end): "now", "in 5 minutes"

    @property
    def span(self) -> Span:
        return self.start, self.end


def take(it, n: int) -> list:
    """The first ``n`` items of an iterator (fewer when it ends)."""
    out = []
    for x in it:
        out.append(x)
        if len(out) >= n:
            break
    return out
