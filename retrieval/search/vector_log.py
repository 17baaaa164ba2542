"""Embeddings appended to one file, a row per document: the vectors a growing dense index is rebuilt from.

``vectors.f32`` holds float32 rows of ``dim`` values, nothing else (what encoded them is recorded by the
owner, e.g. the memory's database, beside it). Appending writes whole rows at the end and flushes them to the
operating system; nothing is fsync'ed, because the file is never the only copy of anything: the owner keeps
the documents in a database, and a file that lags it (a process killed between the two writes, a torn last
row) is repaired on open by :meth:`VectorLog.repair` (torn rows cut off, surplus rows dropped) and the owner
encoding the missing rows again. A flat FAISS index is one copy of these rows, so the memory builds it on open
instead of storing it twice (``retrieval/memory/memory_folder.py``).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np

logger = logging.getLogger(__name__)


class VectorLog:
    """An append-only file of float32 rows of ``dim`` values."""

    def __init__(self, path: str | Path, dim: int):
        self.path, self.dim = Path(path), int(dim)
        self.row_bytes = 4 * self.dim
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.touch(exist_ok=True)

    def __len__(self) -> int:
        return self.path.stat().st_size // self.row_bytes

    def repair(self, rows: int) -> int:
        """Keep at most ``rows`` whole rows (cut a torn last row, drop rows past ``rows``); the rows kept."""
        size = self.path.stat().st_size
        keep = min(size // self.row_bytes, rows)
        if size != keep * self.row_bytes:
            logger.warning("%s: %d bytes for %d rows of %d; keeping the first %d whole rows", self.path, size,
                           rows, self.dim, keep)
            os.truncate(self.path, keep * self.row_bytes)
        return keep

    def append(self, embeddings: np.ndarray) -> None:
        """Write (N, dim) rows at the end of the file."""
        emb = np.ascontiguousarray(embeddings, dtype="<f4")
        if emb.ndim != 2 or emb.shape[1] != self.dim:
            raise ValueError(f"expected embeddings of shape (N, {self.dim}), got {emb.shape}")
        with self.path.open("ab") as f:
            f.write(emb.tobytes())
            f.flush()

    def read(self, rows: int | None = None) -> np.ndarray:
        """The first ``rows`` rows (all by default): (rows, dim) float32, mapped from the file (a FAISS ``add``
        then copies them once, from the page cache)."""
        n = len(self) if rows is None else rows
        if n == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.memmap(self.path, dtype="<f4", mode="r", shape=(n, self.dim))
