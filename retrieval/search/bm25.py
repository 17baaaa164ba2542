"""BM25 baseline (Robertson & Zaragoza 2009) through the ``bm25s`` library, with English stemming."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import bm25s
import numpy as np

from retrieval.search.english import english_stemmer


def _stemmer():
    try:
        return english_stemmer()
    except ImportError:  # stemming is optional; bm25s works without it
        return None


class BM25Retriever:
    """BM25 over texts with ids; search returns (id, score) lists, best first, like DenseIndex."""

    def __init__(self, texts: Sequence[str], ids: Sequence, k1: float = 1.5, b: float = 0.75, stem: bool = True):
        if len(texts) != len(ids):
            raise ValueError(f"{len(ids)} ids for {len(texts)} texts")
        if not texts:
            raise ValueError("BM25 needs at least one document")
        self.ids = list(ids)
        self._row_of = {i: r for r, i in enumerate(self.ids)}
        # stem: English Snowball stems (better on experiments.content_variants)
        self.stemmer = _stemmer() if stem else None
        self.model = bm25s.BM25(k1=k1, b=b)
        self.model.index(self._tokenize(list(texts)), show_progress=False)

    def _tokenize(self, texts: list[str]):
        return bm25s.tokenize(texts, stopwords="en", stemmer=self.stemmer, show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every document for one query: (N,)."""
        tokens = bm25s.tokenize([query], stopwords="en", stemmer=self.stemmer, show_progress=False,
                                return_ids=False)[0]
        if not tokens:  # only stop words or punctuation: nothing matches (bm25s itself fails on an empty query)
            return np.zeros(len(self.ids), dtype=np.float32)
        return self.model.get_scores(tokens)

    def search(self, queries: Sequence[str], k: int,
               subset: Iterable | None = None) -> list[list[tuple[Any, float]]]:
        """Top-k (id, score) per query, best first, each id as it was added; ``subset`` restricts the candidates to
        those ids."""
        rows = None
        if subset is not None:
            rows = np.array(sorted({self._row_of[i] for i in subset if i in self._row_of}), dtype=np.int64)
        results: list[list[tuple[Any, float]]] = []
        for query in queries:
            s = self.scores(query)
            cand = rows if rows is not None else np.arange(len(s))
            if len(cand) == 0:
                results.append([])
                continue
            top = cand[np.argsort(-s[cand], kind="stable")[:k]]
            results.append([(self.ids[r], float(s[r])) for r in top])
        return results
