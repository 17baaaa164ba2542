"""What the parts of :class:`~retrieval.timex.resolve.Placer` (:mod:`~retrieval.timex.resolve_spans`,
:mod:`~retrieval.timex.resolve_ranges`) use of the whole: its reference and conventions, its dispatch and its notes.
The Placer defines them; declared here so that each part reads as typed code on its own."""

from __future__ import annotations

from datetime import datetime

from retrieval.timex.context import Conventions
from retrieval.timex.placed import Placed
from retrieval.timex.values import Time


class PlacerPart:
    """A part of the Placer: ``reference`` (naive local), ``conventions``, :meth:`_place` and :meth:`note`."""

    reference: datetime
    conventions: Conventions

    def _place(self, t: Time, anchor: datetime, lean: str | None) -> Placed:
        raise NotImplementedError  # the Placer's dispatch

    def note(self, what: str, value: str, why: str) -> None:
        raise NotImplementedError  # the Placer's record of a choice
