"""A conversation table that grows a turn at a time (:class:`LiveTable`): the table of a living memory
(:mod:`retrieval.memory.living_memory`), whichever engine keeps its rows and indices."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from models.encoder import Encoder
from retrieval.data.timestamps import CalendarZone
from retrieval.memory.conversation_table import ConversationTable
from retrieval.memory.growing_frame import GrowingFrame
from retrieval.memory.live_rows import extend_records, last_record, records_frame
from retrieval.search.searcher import DenseSearcher, SparseSearcher


class LiveTable(ConversationTable):
    """A :class:`ConversationTable` whose rows can be appended: the frame grows by a pending tail (joined on the
    next read of ``frame``), the dense indices by their ``add``, BM25 by its own (a folder's segments, or PostgreSQL's
    postings)."""

    _growing: GrowingFrame | None  # the frame's buffers (None before the first rows)
    _frame: pd.DataFrame

    def __init__(self, frame: pd.DataFrame, index: DenseSearcher | None, encoder: Encoder,
                 turn_index: DenseSearcher | None, zone: CalendarZone, sparse: Mapping[str, SparseSearcher]):
        self._pending: dict[str, list] = {}  # the rows appended since the frame was last read, as columns
        super().__init__(frame, index, encoder, turn_index, zone)
        self.sparse = sparse
        self.end = frame["timestamp"].max() if len(frame) else None

    @property
    def frame(self) -> pd.DataFrame:
        if self._pending:
            tail = records_frame(self._pending, self.zone.zone)
            if self._growing is None:  # the memory's first rows
                self._growing = GrowingFrame(tail)
            else:  # each join writes only the new rows into the buffers (not a concat of the whole frame: O(N))
                self._growing.extend(tail)
            self._frame = self._growing.frame()
            self._pending = {}
        return self._frame

    @frame.setter
    def frame(self, value: pd.DataFrame) -> None:
        """The frame read on open: copied once into growable buffers (part of the reopen, not of a question)."""
        self._growing = GrowingFrame(value) if len(value) else None
        self._frame, self._pending = value if self._growing is None else self._growing.frame(), {}

    def __len__(self) -> int:
        return len(self._frame) + len(self._pending.get("response_idx", ()))

    @property
    def tz(self):
        return self.zone.zone

    def last_row(self) -> pd.Series | None:
        if self._pending:
            return last_record(self._pending)
        return self._frame.iloc[-1] if len(self._frame) else None

    def append(self, rows: dict[str, list], embeddings: dict[str, np.ndarray], sparse_texts: dict[str, list[str]]):
        """Add ``rows`` (the next positions, :func:`~retrieval.memory.live_rows.utterance_records` columns) with
        their embeddings and BM25 texts per view."""
        ids = list(rows["response_idx"])
        for view, index in (("text", self.index), ("turn", self.turn_index)):
            if index is not None:
                index.add(embeddings[view], ids)
        for view, texts in sparse_texts.items():
            self.sparse[view].add(texts)
        extend_records(self._pending, rows)
        self._zoned.clear()
        self.end = max(rows["timestamp"])

    def rank_sparse(self, query: str, k: int, subset: Sequence[int] | None = None,
                    view: str = "text") -> list[tuple[int, float]]:
        if view not in self.sparse:
            raise ValueError(f"this memory has no BM25 over the {view!r} view; it has {sorted(self.sparse)}")
        return self.sparse[view].search([query], k, subset=subset)[0]
