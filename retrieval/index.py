"""A FAISS index over embeddings, with ids stored beside it and the encoder's identity.

Any ``faiss.index_factory`` string works ("Flat", "HNSW32", "IVF256,PQ32", ...). Search
can be restricted to a subset of ids (one table's cells, a conversation's filtered rows),
which FAISS does with an ``IDSelectorBatch`` over internal row numbers.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

import faiss
import numpy as np

METRICS = {"ip": faiss.METRIC_INNER_PRODUCT, "l2": faiss.METRIC_L2}


class EncoderMismatchError(ValueError):
    """The index was built with another encoder than the one searching it."""


class DenseIndex:
    """build / add / search / save / load over (embedding, id) pairs."""

    def __init__(self, dim: int, factory: str = "Flat", metric: str = "ip", encoder_id: str | None = None):
        if metric not in METRICS:
            raise ValueError(f"metric must be one of {sorted(METRICS)}")
        self.dim, self.factory, self.metric, self.encoder_id = dim, factory, metric, encoder_id
        self.index = faiss.index_factory(dim, factory, METRICS[metric])
        self.ids: list = []
        self._row_of: dict = {}

    @classmethod
    def build(cls, embeddings: np.ndarray, ids: Sequence, factory: str = "Flat", metric: str = "ip",
              encoder_id: str | None = None) -> DenseIndex:
        index = cls(embeddings.shape[1], factory, metric, encoder_id)
        index.add(embeddings, ids)
        return index

    def __len__(self) -> int:
        return self.index.ntotal

    def add(self, embeddings: np.ndarray, ids: Sequence) -> None:
        """Add (N, D) embeddings under N new, unique ids; trains the index first if it needs it."""
        embeddings = np.ascontiguousarray(embeddings, dtype=np.float32)
        if embeddings.ndim != 2 or embeddings.shape[1] != self.dim:
            raise ValueError(f"expected embeddings of shape (N, {self.dim}), got {embeddings.shape}")
        if len(ids) != len(embeddings):
            raise ValueError(f"{len(ids)} ids for {len(embeddings)} embeddings")
        if not self.index.is_trained:
            self.index.train(embeddings)
        for i in ids:
            if i in self._row_of:
                raise ValueError(f"id {i!r} is already in the index")
            self._row_of[i] = len(self.ids)
            self.ids.append(i)
        self.index.add(embeddings)

    def check_encoder(self, encoder_id: str | None) -> None:
        if encoder_id is not None and self.encoder_id is not None and encoder_id != self.encoder_id:
            raise EncoderMismatchError(
                f"this index was built with encoder {self.encoder_id!r} but is searched with {encoder_id!r}; "
                "rebuild the index with the new encoder")

    def search(self, queries: np.ndarray, k: int, subset: Iterable | None = None,
               encoder_id: str | None = None) -> list[list[tuple[object, float]]]:
        """Top-k (id, score) per query, best first; ``subset`` restricts the candidates to those ids.

        Scores are inner products (metric "ip") or negated squared L2 distances ("l2"), so
        higher is always better.
        """
        self.check_encoder(encoder_id)
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        if queries.ndim == 1:
            queries = queries[None]
        params = None
        if subset is not None:
            rows = np.array(sorted({self._row_of[i] for i in subset if i in self._row_of}), dtype=np.int64)
            if len(rows) == 0:
                return [[] for _ in range(len(queries))]
            k = min(k, len(rows))
            params = faiss.SearchParameters(sel=faiss.IDSelectorBatch(rows))
        k = min(k, len(self))
        if k == 0:
            return [[] for _ in range(len(queries))]
        scores, rows_found = self.index.search(queries, k, params=params)
        if self.metric == "l2":
            scores = -scores
        return [[(self.ids[r], float(s)) for r, s in zip(rr, ss) if r >= 0] for rr, ss in zip(rows_found, scores)]

    def save(self, path: str | Path) -> None:
        """Write ``index.faiss`` and ``index.json`` (ids, factory, metric, encoder identity)."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        faiss.write_index(self.index, str(path / "index.faiss"))
        meta = {"dim": self.dim, "factory": self.factory, "metric": self.metric,
                "encoder_id": self.encoder_id, "ids": self.ids}
        (path / "index.json").write_text(json.dumps(meta))

    @classmethod
    def load(cls, path: str | Path, encoder_id: str | None = None) -> DenseIndex:
        path = Path(path)
        for name in ("index.faiss", "index.json"):
            if not (path / name).is_file():
                raise FileNotFoundError(f"{path / name}: missing; not an index folder written by DenseIndex.save")
        meta = json.loads((path / "index.json").read_text())
        index = cls.__new__(cls)
        index.dim, index.factory, index.metric = meta["dim"], meta["factory"], meta["metric"]
        index.encoder_id = meta["encoder_id"]
        index.index = faiss.read_index(str(path / "index.faiss"))
        index.ids = [tuple(i) if isinstance(i, list) else i for i in meta["ids"]]
        if len(index.ids) != index.index.ntotal:
            raise ValueError(f"{path}: {len(index.ids)} ids stored for {index.index.ntotal} vectors")
        index._row_of = {i: r for r, i in enumerate(index.ids)}
        index.check_encoder(encoder_id)
        return index
