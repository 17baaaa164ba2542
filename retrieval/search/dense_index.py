"""A FAISS index over embeddings, with ids stored beside it and the encoder's identity.

Any ``faiss.index_factory`` string works ("Flat", "HNSW32", "IVF256,PQ32", ...); with
``gpu=True`` and a GPU build of FAISS the index lives on every visible GPU. Search can be
restricted to a subset of ids (one table's cells, a conversation's filtered rows): a small
subset (up to ``exact_subset_max`` ids) is scored exactly from its reconstructed vectors,
a larger one through FAISS with an ``IDSelectorBatch`` over internal row numbers. At 1M
vectors the exact path answers a 100-id subset in well under a millisecond where the
selector scans the whole index (``python -m benchmarks.index``), and it keeps approximate
indices (IVF, HNSW) from missing subset members outside the probed lists.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from retrieval.atomic import save_with, write_json

METRICS = {"ip": faiss.METRIC_INNER_PRODUCT, "l2": faiss.METRIC_L2}
EXACT_SUBSET_MAX = 20_000  # subsets up to this size are scored exactly (see the module docstring)

logger = logging.getLogger(__name__)


def to_gpu(index: faiss.Index) -> tuple[faiss.Index, bool]:
    """``index`` copied to every visible GPU, or itself (and False) when FAISS has no GPU here."""
    if not hasattr(faiss, "index_cpu_to_all_gpus") or faiss.get_num_gpus() == 0:
        logger.warning("gpu=True but this FAISS build sees no GPU; the index stays on the CPU")
        return index, False
    return faiss.index_cpu_to_all_gpus(index), True


class EncoderMismatchError(ValueError):
    """The index was built with another encoder than the one searching it."""


class DenseIndex:
    """build / add / search / save / load over (embedding, id) pairs."""

    def __init__(self, dim: int, factory: str = "Flat", metric: str = "ip", encoder_id: str | None = None,
                 gpu: bool = False, exact_subset_max: int = EXACT_SUBSET_MAX):
        if metric not in METRICS:
            raise ValueError(f"metric must be one of {sorted(METRICS)}")
        self.dim, self.factory, self.metric, self.encoder_id = dim, factory, metric, encoder_id
        self.exact_subset_max = exact_subset_max
        self.index = faiss.index_factory(dim, factory, METRICS[metric])
        self.on_gpu = False
        if gpu:
            self.index, self.on_gpu = to_gpu(self.index)
        self.ids: list = []
        self._row_of: dict = {}
        self.built_from: dict | None = None  # what it was encoded from (retrieval.search.index_record)

    @classmethod
    def build(cls, embeddings: np.ndarray, ids: Sequence, factory: str = "Flat", metric: str = "ip",
              encoder_id: str | None = None, gpu: bool = False) -> DenseIndex:
        index = cls(embeddings.shape[1], factory, metric, encoder_id, gpu)
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
               encoder_id: str | None = None) -> list[list[tuple[Any, float]]]:
        """Top-k (id, score) per query, best first, each id as it was added; ``subset`` restricts the candidates to
        those ids.

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
            if len(rows) <= self.exact_subset_max:
                vectors = self._reconstruct(rows)
                if vectors is not None:
                    return self._search_vectors(queries, vectors, rows, k)
            params = self._selector_params(faiss.IDSelectorBatch(rows))
        k = min(k, len(self))
        if k == 0:
            return [[] for _ in range(len(queries))]
        scores, rows_found = self.index.search(queries, k, params=params)
        if self.metric == "l2":
            scores = -scores
        return [[(self.ids[r], float(s)) for r, s in zip(rr, ss) if r >= 0] for rr, ss in zip(rows_found, scores)]

    def _selector_params(self, selector: faiss.IDSelector) -> faiss.SearchParameters:
        """Search parameters carrying ``selector``, of the type the index expects, keeping its own settings
        (IVF rejects plain parameters, and both IVF and HNSW would fall back to default nprobe / efSearch).
        faiss's own stub lacks these classes' keyword arguments and SearchParametersHNSW: hence the ignores."""
        index = self.index
        if isinstance(index, faiss.IndexIVF):
            return faiss.SearchParametersIVF(sel=selector, nprobe=index.nprobe,  # type: ignore[call-arg]
                                             max_codes=index.max_codes)
        if isinstance(index, faiss.IndexHNSW):
            return faiss.SearchParametersHNSW(sel=selector, efSearch=index.hnsw.efSearch)  # type: ignore[attr-defined]
        return faiss.SearchParameters(sel=selector)  # type: ignore[call-arg]

    def _reconstruct(self, rows: np.ndarray) -> np.ndarray | None:
        """The stored vectors of internal ``rows`` (S,) -> (S, D), or None when this index cannot give them."""
        try:
            ivf = faiss.try_extract_index_ivf(self.index) if not self.on_gpu else None
            if ivf is not None and ivf.direct_map.type == faiss.DirectMap.NoMap:  # type: ignore[attr-defined]
                ivf.make_direct_map()  # 8 bytes a vector; IVF indices cannot reconstruct without it
            return self.index.reconstruct_batch(rows)
        except RuntimeError as e:  # e.g. an index type with no stored vectors
            logger.debug("exact subset scoring unavailable (%s); using an ID selector", e)
            return None

    def _search_vectors(self, queries: np.ndarray, vectors: np.ndarray, rows: np.ndarray,
                        k: int) -> list[list[tuple[object, float]]]:
        """Exact top-k of queries (Q, D) over candidate ``vectors`` (S, D) stored at internal ``rows``."""
        if self.metric == "ip":
            scores = queries @ vectors.T  # (Q, S)
        else:
            scores = -(np.sum(queries**2, axis=1)[:, None] - 2 * queries @ vectors.T + np.sum(vectors**2, axis=1))
        top = np.argpartition(-scores, k - 1, axis=1)[:, :k] if k < len(rows) else np.tile(np.arange(len(rows)),
                                                                                          (len(queries), 1))
        top_scores = np.take_along_axis(scores, top, axis=1)
        order = np.argsort(-top_scores, axis=1, kind="stable")
        top, top_scores = np.take_along_axis(top, order, axis=1), np.take_along_axis(top_scores, order, axis=1)
        return [[(self.ids[rows[j]], float(s)) for j, s in zip(tt, ss)] for tt, ss in zip(top, top_scores)]

    def save(self, path: str | Path) -> None:
        """Write ``index.faiss`` and ``index.json`` (ids, factory, metric, encoder identity, ``built_from``).

        Each file is written whole, and ``index.json`` goes first and comes back last: a save stopped
        midway leaves a folder without it, which :meth:`load` refuses, never new vectors under old ids.
        """
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        (path / "index.json").unlink(missing_ok=True)
        cpu = faiss.index_gpu_to_cpu(self.index) if self.on_gpu else self.index
        save_with(lambda partial: faiss.write_index(cpu, str(partial)), path / "index.faiss")
        meta = {"dim": self.dim, "factory": self.factory, "metric": self.metric,
                "encoder_id": self.encoder_id, "built_from": self.built_from, "ids": self.ids}
        write_json(path / "index.json", meta)

    @classmethod
    def load(cls, path: str | Path, encoder_id: str | None = None, gpu: bool = False) -> DenseIndex:
        path = Path(path)
        for name in ("index.faiss", "index.json"):
            if not (path / name).is_file():
                raise FileNotFoundError(f"{path / name}: missing; not an index folder written by DenseIndex.save")
        meta = json.loads((path / "index.json").read_text())
        index = cls.__new__(cls)
        index.dim, index.factory, index.metric = meta["dim"], meta["factory"], meta["metric"]
        index.encoder_id, index.built_from = meta["encoder_id"], meta.get("built_from")
        index.index = faiss.read_index(str(path / "index.faiss"))
        index.on_gpu, index.exact_subset_max = False, EXACT_SUBSET_MAX
        if gpu:
            index.index, index.on_gpu = to_gpu(index.index)
        index.ids = [tuple(i) if isinstance(i, list) else i for i in meta["ids"]]
        if len(index.ids) != index.index.ntotal:
            raise ValueError(f"{path}: {len(index.ids)} ids stored for {index.index.ntotal} vectors")
        index._row_of = {i: r for r, i in enumerate(index.ids)}
        index.check_encoder(encoder_id)
        return index
