"""Hybrid retrieval by reciprocal rank fusion (Cormack et al., SIGIR 2009)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence


def reciprocal_rank_fusion(rankings: Sequence[Sequence[tuple[object, float]]], k: int = 60,
                           weights: Sequence[float] | None = None,
                           top: int | None = None, boost: Collection | None = None,
                           boost_weight: float = 0.3) -> list[tuple[object, float]]:
    """Fuse ranked (id, score) lists: score(id) = sum_r w_r / (k + rank_r(id)), best first.

    ``boost``: ids given a prior of ``boost_weight`` times the vote of one ranker's top rank, ``1 / (k + 1)``.
    With k = 60, 0.3 is worth about 26 places below the top of one ranking: a boosted row passes rows that
    the rankers placed a little ahead of it, not a row that several of them put far ahead.
    """
    weights = weights or [1.0] * len(rankings)
    fused: dict = defaultdict(float)
    for ranking, w in zip(rankings, weights):
        for rank, (i, _) in enumerate(ranking, start=1):
            fused[i] += w / (k + rank)
    for i in boost or ():
        if i in fused:
            fused[i] += boost_weight / (k + 1)
    out = sorted(fused.items(), key=lambda x: -x[1])
    return out[:top] if top else out
