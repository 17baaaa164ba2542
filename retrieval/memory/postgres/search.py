"""A memory's dense and BM25 rankings computed by PostgreSQL, with the plan's row filter as a ``WHERE`` clause.

Each class stands where the embedded memory has its in-process index (``LiveTable.index`` / ``.turn_index``, a
:class:`~retrieval.search.dense_index.DenseIndex`; ``LiveTable.sparse[view]``, a
:class:`~retrieval.search.sparse_segments.SegmentedBM25`), with the same ``search`` and ``add``: the planner, the
fusion and the cut run unchanged over either engine. ``add`` does nothing here: the rows, vectors and postings were
written by the store's transaction.

**The filter.** The plan selects rows (a time window, a speaker, a session) and ranks within them. A memory's
positions are in time order, so a time window is a range of positions: the selection goes to the database as
``response_idx BETWEEN a AND b`` ranges on the primary key (:func:`position_filter`), or as ``= ANY(array)`` when
it is scattered (a speaker's rows).

**Dense.** Exact by default: the candidate rows are read by the primary key and ordered by inner product
(``<#>``), as a flat FAISS index orders them, so both engines return the same rows. A large candidate set (more
than ``approximate_from`` rows: a question with no time filter over a big memory) uses the HNSW index with
``hnsw.ef_search`` widened, and falls back to the exact scan when the index's nearest rows hold fewer than ``k``
of the candidates (pgvector 0.6 filters after the index scan).

**BM25.** Lucene's BM25 as :class:`~retrieval.search.sparse_segments.SegmentedBM25` computes it, from statistics
kept in tables (postings with each document's length, document frequencies, the memory's row count and total
length), on the same tokens: the positive scores in SQL (ordered at :data:`TIE_DECIMALS` decimals, then by
position, so that the order the database sums in does not break ties), then the rows without a query term at score 0 in
position order, as the segment index returns them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from retrieval.memory.postgres.store import PostgresStore
from retrieval.search.sparse_segments import sorted_positions

APPROXIMATE_FROM = 50_000  # candidate rows from which a dense ranking uses HNSW (exact below: a few ms per 10k rows)
MAX_RANGES = 16  # a selection in more pieces than this goes to the database as an array of positions
EF_SEARCH_MAX = 1000  # pgvector's bound on hnsw.ef_search
# BM25 scores are ordered at this many decimals, then by position: a sum's last bits depend on the order the
# database adds its terms in, and the segment index (float32) scores equal documents exactly equal
TIE_DECIMALS = 5


def position_filter(rows: np.ndarray | None, column: str = "response_idx") -> tuple[str, list]:
    """A ``WHERE`` fragment (and its parameters) keeping the sorted ``rows``: ranges of consecutive positions, or
    an array when there are more than :data:`MAX_RANGES` of them."""
    if rows is None:
        return "TRUE", []
    if len(rows) == 0:
        return "FALSE", []
    breaks = np.flatnonzero(np.diff(rows) != 1) + 1
    starts, ends = rows[np.r_[0, breaks]], rows[np.r_[breaks - 1, len(rows) - 1]]
    if len(starts) > MAX_RANGES:
        return f"{column} = ANY(%s)", [rows.tolist()]
    clause = " OR ".join(f"{column} BETWEEN %s AND %s" for _ in starts)
    return f"({clause})", [int(v) for pair in zip(starts, ends) for v in pair]


class PostgresDense:
    """Dense ranking of one view's vectors (``embedding_<view>``) in the database; :class:`DenseIndex`'s search."""

    def __init__(self, store: PostgresStore, view: str, encoder_id: str | None,
                 approximate_from: int = APPROXIMATE_FROM):
        self.store, self.view, self.encoder_id = store, view, encoder_id
        self.approximate_from = approximate_from

    def add(self, embeddings: np.ndarray, ids: Sequence) -> None:
        """Nothing: the store wrote the vectors with their rows."""

    def __len__(self) -> int:
        return self.store.count()

    def search(self, queries: np.ndarray, k: int, subset: Iterable | None = None,
               encoder_id: str | None = None) -> list[list[tuple[int, float]]]:
        queries = np.asarray(queries, dtype=np.float32)
        queries = queries[None] if queries.ndim == 1 else queries
        n = self.store.count()
        rows = sorted_positions(subset, n)
        size = n if rows is None else len(rows)
        return [self._one(q, min(k, size), rows, size, n) if k > 0 and size else [] for q in queries]

    def _one(self, query: np.ndarray, k: int, rows: np.ndarray | None, size: int, n: int) -> list[tuple[int, float]]:
        if size >= self.approximate_from and n - size < EF_SEARCH_MAX - k:
            found = self._approximate(query, k + (n - size), rows)
            if len(found) >= k:
                return found[:k]
        return self._exact(query, k, rows)

    def _exact(self, query: np.ndarray, k: int, rows: np.ndarray | None) -> list[tuple[int, float]]:
        where, params = position_filter(rows)
        column = f"embedding_{self.view}"
        cur = self.store.db.execute(
            f"WITH c AS MATERIALIZED (SELECT response_idx, {column} AS e FROM {self.store.turns} WHERE memory_id = %s "
            f"AND {where}) SELECT response_idx, -(e <#> %s) FROM c ORDER BY e <#> %s, response_idx LIMIT %s",
            (self.store.memory_id, *params, query, query, k))
        return [(int(i), float(s)) for i, s in cur.fetchall()]

    def _approximate(self, query: np.ndarray, fetch: int, rows: np.ndarray | None) -> list[tuple[int, float]]:
        column = f"embedding_{self.view}"
        with self.store.db.transaction():
            self.store.db.execute(f"SET LOCAL hnsw.ef_search = {min(EF_SEARCH_MAX, max(40, fetch))}")
            cur = self.store.db.execute(
                f"SELECT response_idx, -({column} <#> %s) FROM {self.store.turns} WHERE memory_id = %s "
                f"ORDER BY {column} <#> %s LIMIT %s", (query, self.store.memory_id, query, fetch))
            found = [(int(i), float(s)) for i, s in cur.fetchall()]
        if rows is not None and len(rows) < self.store.count():  # the rows left out, and only those, are dropped
            found = [(i, s) for i, s in found if rows[min(int(np.searchsorted(rows, i)), len(rows) - 1)] == i]
        return found


class PostgresBM25:
    """BM25 over one view's postings in the database; :class:`SegmentedBM25`'s ``search``."""

    def __init__(self, store: PostgresStore, view: str, k1: float = 1.5, b: float = 0.75):
        self.store, self.view, self.k1, self.b = store, view, k1, b

    def add(self, texts: Sequence[str]) -> None:
        """Nothing: the store wrote the postings with their rows."""

    def seal(self) -> None:
        """Nothing to seal: postings are rows of a table."""

    def __len__(self) -> int:
        return self.store.count()

    def search(self, queries: Sequence[str], k: int, subset: Iterable | None = None) -> list[list[tuple[int, float]]]:
        n, lengths = self.store.statistics()
        rows = sorted_positions(subset, n)
        return [self._one(q, k, rows, n, lengths[self.view]) for q in queries]

    def _one(self, query: str, k: int, rows: np.ndarray | None, n: int, length: float) -> list[tuple[int, float]]:
        size = n if rows is None else len(rows)
        k = min(k, size)
        if k <= 0:
            return []
        tokens = self.store.tokenize([query])[0]
        hits: list[tuple[int, float]] = []
        if tokens:
            hits = self._scored(tokens, k, rows, n, length / n)
        if len(hits) < k:  # the rows without a query term, at 0, in position order (as the segment index gives)
            have = {i for i, _ in hits}
            candidates = rows if rows is not None else range(n)
            for i in candidates:
                if len(hits) == k:
                    break
                if int(i) not in have:
                    hits.append((int(i), 0.0))
        return hits

    def _scored(self, tokens: list[str], k: int, rows: np.ndarray | None, n: int,
                average: float) -> list[tuple[int, float]]:
        db, memory = self.store.db, self.store.memory_id
        found = dict(db.execute("SELECT term, df FROM ctbls_df WHERE memory_id = %s AND view = %s AND term = ANY(%s)",
                                (memory, self.view, list(set(tokens)))).fetchall())
        terms = [t for t in tokens if found.get(t, 0) > 0]  # a repeated query token counts again, as in BM25 there
        if not terms:
            return []
        idf = [float(np.log(1 + (n - found[t] + 0.5) / (found[t] + 0.5))) for t in terms]
        where, params = position_filter(None if rows is None or len(rows) == n else rows, "p.response_idx")
        # the k best by score, then every row within reach of the k-th (a tie at TIE_DECIMALS), ordered by the
        # rounded score and position: rounding costs per row, so only those few rows pay it
        cur = db.execute(
            "WITH scored AS MATERIALIZED (SELECT p.response_idx, SUM(q.idf * p.tf / (p.tf + %s * (1 - %s + %s * p.dl "
            "/ %s))) AS s FROM unnest(%s::text[], %s::float8[]) AS q(term, idf) JOIN ctbls_postings p ON "
            f"p.memory_id = %s AND p.view = %s AND p.term = q.term WHERE {where} GROUP BY p.response_idx), "
            "kth AS (SELECT s FROM scored ORDER BY s DESC LIMIT 1 OFFSET %s) "
            "SELECT response_idx, s FROM scored WHERE s >= COALESCE((SELECT s FROM kth), '-infinity') - %s "
            "ORDER BY round(s::numeric, %s) DESC, response_idx LIMIT %s",
            (self.k1, self.b, self.b, average, terms, idf, memory, self.view, *params, k - 1,
             10.0 ** (1 - TIE_DECIMALS), TIE_DECIMALS, k))
        return [(int(i), float(s)) for i, s in cur.fetchall()]
