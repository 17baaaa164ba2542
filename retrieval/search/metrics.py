"""Retrieval metrics as pure functions: ranked ids and relevant ids in, floats out."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

import numpy as np


def reciprocal_rank(ranked: Sequence, relevant: Collection, k: int = 10) -> float:
    """1 / rank of the first relevant id within the top k, or 0."""
    for rank, i in enumerate(ranked[:k], start=1):
        if i in relevant:
            return 1.0 / rank
    return 0.0


def hit_at_k(ranked: Sequence, relevant: Collection, k: int) -> float:
    """1.0 if any relevant id is in the top k."""
    return float(any(i in relevant for i in ranked[:k]))


def ranking_metrics(rankings: Iterable[tuple[Sequence, Collection]], ks: Sequence[int] = (1, 3, 10),
                    mrr_k: int = 10) -> dict[str, float]:
    """Mean MRR@mrr_k and top-k accuracy over (ranked ids, relevant ids) pairs; also the count."""
    rankings = list(rankings)
    if not rankings:
        return {f"mrr@{mrr_k}": 0.0, **{f"top{k}": 0.0 for k in ks}, "n": 0}
    out = {f"mrr@{mrr_k}": float(np.mean([reciprocal_rank(r, rel, mrr_k) for r, rel in rankings]))}
    for k in ks:
        out[f"top{k}"] = float(np.mean([hit_at_k(r, rel, k) for r, rel in rankings]))
    out["n"] = len(rankings)
    return out


def recall(retrieved: Collection, relevant: Collection) -> float:
    """Share of relevant ids retrieved (1.0 when nothing is relevant)."""
    relevant = set(relevant)
    return len(relevant & set(retrieved)) / len(relevant) if relevant else 1.0


def precision(retrieved: Collection, relevant: Collection) -> float:
    """Share of retrieved ids that are relevant (0.0 when nothing is retrieved)."""
    retrieved = set(retrieved)
    return len(retrieved & set(relevant)) / len(retrieved) if retrieved else 0.0


def f_beta(p: float, r: float, beta: float = 2.0) -> float:
    """F-beta of a precision and a recall; beta = 2 weighs recall four times as much."""
    if p == 0 and r == 0:
        return 0.0
    return (1 + beta**2) * p * r / (beta**2 * p + r)
