"""Relevance to a trend's topic decided by the memory's learned relevance model (:mod:`retrieval.memory.relevance`):
the topic is asked of each session as a topic question, through the memory's two stages, and every row gets the
model's probability that it is evidence for the topic.

    p = model_probabilities(table, "electric cars", Reranker(RelevanceModel.load("runs/memory_relevance")), rows)
    count_weights(p, "count").groupby(rows["month"]).sum()       # the counts per month: rows at p >= 0.5

Asking session by session keeps the model on the candidate lists it was trained on: the first stage's best
:data:`~retrieval.memory.relevance.features.CANDIDATES` rows of one slice of the conversation, never the whole log
at once (a topic said 60 times in a log fits a session's candidates, not one list of 50). A row below its
session's candidates gets 0. Since sessions nest in every period kind, the same weights sum to any period.

Counting rules (:data:`COUNT_RULES`): ``count``, a row counts when its probability reaches a cut (0.5, the decision
that errs least per row when the probabilities are calibrated, or one chosen on labelled data); ``expected``, every
row counts its probability (the expected number of relevant rows, unbiased when they are calibrated). The model
learned *evidence for a question*, one to three rows among fifty, so for a topic said many times its probabilities
run low: ``eval.trends`` chooses the rule and the cut on its calibration log, never on the logs it reports.
"""

from __future__ import annotations

import pandas as pd

from retrieval.memory.content_ranking import FUSION_DEPTH, fuse_content
from retrieval.memory.conversation_table import ConversationTable
from retrieval.memory.relevance.rerank import Reranker
from retrieval.memory.temporal_memory import TemporalMemory

COUNT_RULES = ("count", "expected")


def model_probabilities(table: ConversationTable, topic: str, reranker: Reranker, rows: pd.DataFrame
                        ) -> pd.Series:
    """P(relevant to ``topic``) of every row of ``rows`` (a slice of the table's frame), the topic asked of each
    of its sessions (0 for a row below its session's candidates)."""
    memory = TemporalMemory(table)  # the first stage: its content ranking, fusion and prior, as a question gets
    depth = max(reranker.model.candidates, FUSION_DEPTH)  # as TemporalMemory ranks a question's candidates
    out = pd.Series(0.0, index=rows.index, dtype="float64")
    for _, session in rows.groupby("session", sort=False):
        subset = session.index.tolist()
        fused = fuse_content(memory.content_rankings(topic, depth, subset), memory.fusion, None, (), memory.prior)
        for i, p in reranker.rerank(table, topic, fused, depth, (), None, False):
            out.loc[i] = p
    return out


def count_weights(p: pd.Series, rule: str = "count", cut: float = 0.5) -> pd.Series:
    """Each row's weight in a count by ``rule`` (:data:`COUNT_RULES`) of its probability ``p``: 1 at ``cut`` or
    above (``count``), or ``p`` itself (``expected``)."""
    if rule not in COUNT_RULES:
        raise ValueError(f"count rule must be one of {COUNT_RULES}, got {rule!r}")
    return p if rule == "expected" else (p >= cut).astype("float64")
