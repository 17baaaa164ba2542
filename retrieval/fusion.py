"""Hybrid retrieval by reciprocal rank fusion (Cormack et al., SIGIR 2009)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence


def reciprocal_rank_fusion(rankings: Sequence[Sequence[tuple[object, float]]], k: int = 60,
                           weights: Sequence[float] | None = None,
                           top: int | None = None) -> list[tuple[object, float]]:
    """Fuse ranked (id, score) lists: score(id) = sum_r w_r / (k + rank_r(id)), best first."""
    weights = weights or [1.0] * len(rankings)
    fused: dict = defaultdict(float)
    for ranking, w in zip(rankings, weights):
        for rank, (i, _) in enumerate(ranking, start=1):
            fused[i] += w / (k + rank)
    out = sorted(fused.items(), key=lambda x: -x[1])
    return out[:top] if top else out
