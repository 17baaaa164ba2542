"""The content ranking's fusion and cut: how the rows a plan's time ops kept are ordered by a topic, and how many
of them come back.

The lists fused are the memory's rankers over its views (dense and BM25, over the utterance and over the turn it
follows: :meth:`~retrieval.memory.temporal_memory.TemporalMemory.content_rankings`); the rows of a participant the
question names get a prior; a margin then keeps the rows close enough to the best (:func:`cut_content`).
Every setting here was chosen on LoCoMo's development conversations (``python -m experiments.content_proxy``, README
section 4), never on Zyphra's questions.
"""

from __future__ import annotations

from collections.abc import Sequence

from retrieval.search.fusion import absolute_cut, min_max_fusion, reciprocal_rank_fusion, spread_cut

FUSION_DEPTH = 50  # candidates each ranker contributes to the fusion
RRF_K = 60  # reciprocal rank fusion's constant (Cormack et al.)
# The speaker prior, in shares of one list's top (a min-max score of 1; for rrf, its top vote). Chosen with the
# cut and its margin on LoCoMo's development conversations (python -m experiments.content_proxy, README section 4): at
# the margin that reaches 90% recall there, F2 65.1 with the prior 1.5 and the pool cut, against 63.7 with the
# prior 1.0 and the spread cut it was chosen with before (58.5 with 0.3); rrf keeps the 0.3 it was chosen with.
PRIOR_WEIGHTS = {"scores": 1.5, "rrf": 0.3}
# How a rank op's margin is read (cut_content); the first is the default.
CUTS = ("pool", "spread", "top")


def fuse_content(rankings: Sequence[Sequence[tuple[int, float]]], fusion: str, k: int | None,
                 prefer: Sequence[int] = (), prior: float | None = None) -> list[tuple[int, float]]:
    """The top ``k`` (None: every candidate) of the content ranking's lists fused by ``fusion``: ``scores`` (each
    list min-max rescaled and summed, the default) or ``rrf`` (reciprocal rank); ``prefer`` rows get ``prior``
    (None: the fusion's :data:`PRIOR_WEIGHTS`) times one list's top."""
    prior = PRIOR_WEIGHTS[fusion] if prior is None else prior
    if fusion == "rrf":
        return reciprocal_rank_fusion(rankings, k=RRF_K, top=k, boost=set(prefer), boost_weight=prior)
    return min_max_fusion(rankings, top=k, boost=set(prefer), boost_weight=prior)


def cut_content(fused: Sequence[tuple[int, float]], margin: float | None, cut: str, fusion: str,
                k: int | None = None) -> list[tuple[int, float]]:
    """The rows of the top ``k`` of a fused list (every candidate, best first; None: all of it) that a margin
    keeps: within ``margin`` times a spread of the best, the spread from the best to the last *candidate*
    (``pool``, the default: it does not move with ``k``) or to the ``k``-th (``spread``, the cut before it), or
    within ``margin`` times one list's top score (``top``: 1 for ``scores``, one vote 1 / (RRF_K + 1) for
    ``rrf``; the content ranking's earliest cut, rrf with 0.3)."""
    if cut not in CUTS:
        raise ValueError(f"cut must be one of {CUTS}, got {cut!r}")
    head = list(fused[:k] if k is not None else fused)
    if cut == "pool":
        return spread_cut(head, margin, fused[-1][1] if fused else None)
    if cut == "spread":
        return spread_cut(head, margin)
    return absolute_cut(head, margin, 1 / (RRF_K + 1) if fusion == "rrf" else 1.0)
