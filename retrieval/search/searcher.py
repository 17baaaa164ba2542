"""What a growing table asks of its indices, whichever engine keeps them: a dense searcher (a FAISS index in process,
:class:`~retrieval.search.dense_index.DenseIndex`; pgvector rows in PostgreSQL) and a sparse one (BM25 segments in a
folder, :class:`~retrieval.search.sparse_segments.SegmentedBM25`; postings in PostgreSQL tables)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import numpy as np


class DenseSearcher(Protocol):
    """Top-k search over vectors stored under ids, stamped with the identity of the encoder that wrote them."""

    encoder_id: str | None

    def __len__(self) -> int: ...

    def add(self, embeddings: np.ndarray, ids: Sequence) -> None:
        """Store (N, D) ``embeddings`` under ``ids`` (N,)."""
        ...

    def search(self, queries: np.ndarray, k: int, subset: Iterable | None = None,
               encoder_id: str | None = None) -> list[list[tuple[Any, float]]]:
        """Top-k (id, score) per query (Q, D), best first, among ``subset`` ids when given."""
        ...


class SparseSearcher(Protocol):
    """BM25 over texts added in order (their positions are their ids)."""

    def __len__(self) -> int: ...

    def add(self, texts: Sequence[str]) -> None:
        """Index ``texts`` at the next positions."""
        ...

    def seal(self) -> None:
        """Make what was added durable where the engine keeps postings apart from the rows (a folder's segments)."""
        ...

    def search(self, queries: Sequence[str], k: int,
               subset: Iterable | None = None) -> list[list[tuple[int, float]]]:
        """Top-k (position, score) per query, best first, among ``subset`` positions when given."""
        ...
