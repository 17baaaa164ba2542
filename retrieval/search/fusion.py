"""Hybrid retrieval: fusing the ranked lists of several rankers, and cutting a fused list where it stops being sure.

- :func:`reciprocal_rank_fusion` (Cormack et al., SIGIR 2009): by rank only.
- :func:`min_max_fusion` (CombSUM over min-max normalised scores; Fox & Shaw, TREC-2 1994; Lee, SIGIR 1997):
  by score, each ranker's list rescaled to [0, 1], so a clear winner of one ranker stands out by how clear it is.
- :func:`spread_cut`: keep the rows of a fused list within a fraction of its spread (best to last, or to the last of
  the longer list it heads) of the best;
  :func:`absolute_cut`, within a fixed score (the cut the content ranking used before: 0.3 of one RRF vote).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Hashable, Sequence
from typing import TypeVar

import numpy as np

Id = TypeVar("Id", bound=Hashable)  # what the lists rank: a row, a table, a cell (each list's ids of one kind)
FUSIONS = ("scores", "rrf")  # min_max_fusion, reciprocal_rank_fusion


def reciprocal_rank_fusion(rankings: Sequence[Sequence[tuple[Id, float]]], k: int = 60,
                           weights: Sequence[float] | None = None,
                           top: int | None = None, boost: Collection | None = None,
                           boost_weight: float = 0.3) -> list[tuple[Id, float]]:
    """Fuse ranked (id, score) lists: score(id) = sum_r w_r / (k + rank_r(id)), best first.

    ``boost``: ids given a prior of ``boost_weight`` times the vote of one ranker's top rank, ``1 / (k + 1)``.
    With k = 60, 0.3 is worth about 26 places below the top of one ranking: a boosted row passes rows that
    the rankers placed a little ahead of it, not a row that several of them put far ahead.
    """
    weights = weights or [1.0] * len(rankings)
    fused: dict[Id, float] = defaultdict(float)
    for ranking, w in zip(rankings, weights):
        for rank, (i, _) in enumerate(ranking, start=1):
            fused[i] += w / (k + rank)
    for i in boost or ():
        if i in fused:
            fused[i] += boost_weight / (k + 1)
    out = sorted(fused.items(), key=lambda x: -x[1])
    return out[:top] if top else out


def min_max_fusion(rankings: Sequence[Sequence[tuple[Id, float]]], top: int | None = None,
                   boost: Collection | None = None, boost_weight: float = 0.3) -> list[tuple[Id, float]]:
    """Fuse ranked (id, score) lists by the sum of each list's scores rescaled to [0, 1] (its best 1, its last
    0), best first; ties keep the order ids were first seen in. A list whose scores are all equal (BM25 with no
    query term in any row) says nothing and adds 0; an id missing from a list gets that list's 0.

    ``boost``: ids given a prior of ``boost_weight`` times one ranker's top score (1), the same share of a vote
    as :func:`reciprocal_rank_fusion`'s.
    """
    fused: dict[Id, float] = defaultdict(float)
    for ranking in rankings:
        if not ranking:
            continue
        scores = np.asarray([s for _, s in ranking], dtype=np.float64)  # (n,)
        lo, hi = float(scores.min()), float(scores.max())
        scaled = (scores - lo) / (hi - lo) if hi > lo else np.zeros_like(scores)
        for (i, _), v in zip(ranking, scaled):
            fused[i] += float(v)
    for i in boost or ():
        if i in fused:
            fused[i] += boost_weight
    out = sorted(fused.items(), key=lambda x: -x[1])
    return out[:top] if top else out


def spread_cut(fused: Sequence[tuple[Id, float]], margin: float | None,
               last: float | None = None) -> list[tuple[Id, float]]:
    """The rows of a fused list (best first) scored within ``margin`` times its spread (best minus ``last``, by
    default the list's own last score) of the best: 0 keeps the best (and exact ties), 1 or more keeps them all,
    None cuts nothing. Measured against the list's own spread, so the same margin means the same for any fusion
    and any number of rankers. ``last``: the score the spread reaches down to when ``fused`` is the head of a
    longer list (the content ranking's "pool" cut: the spread of every candidate, not of the k kept)."""
    if margin is None or margin >= 1 or not fused:
        return list(fused)
    best = fused[0][1]
    last = fused[-1][1] if last is None else last
    floor = best - margin * (best - last) - 1e-12 * abs(best)  # a rounding error never drops a tie
    return [(i, s) for i, s in fused if s >= floor]


def absolute_cut(fused: Sequence[tuple[Id, float]], margin: float | None, unit: float = 1.0
                 ) -> list[tuple[Id, float]]:
    """The rows of a fused list (best first) scored within ``margin * unit`` of the best (None: all); ``unit`` is
    one ranker's top score: ``1 / (k + 1)`` for :func:`reciprocal_rank_fusion`, 1 for :func:`min_max_fusion`."""
    if margin is None or not fused:
        return list(fused)
    floor = fused[0][1] - margin * unit
    return [(i, s) for i, s in fused if s >= floor - 1e-12 * abs(fused[0][1])]
