"""The memory's second stage: the relevance model re-orders the first stage's candidates by the probability that each
is evidence, and a plan that asks for a cut gets the rows that reach the model's threshold.

    memory = TemporalMemory(table, relevance=Reranker(RelevanceModel.load("runs/memory_relevance")))
    memory.ask("What did Caroline say about the adoption agency in June?")   # ranked and cut by the model

The first stage (dense and BM25 over both views, fused, with the speaker prior) is the memory's hand-tuned content
ranking; without a relevance model it is also the last (its margin cut), so the two are one flag apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from retrieval.memory.conversation_table import ConversationTable
from retrieval.memory.relevance.features import candidate_features
from retrieval.memory.relevance.model import RelevanceModel

# A when-question's answer comes from the model's best row ("top"): the model already weighs whether a row states a
# time (asks_when_x_states_time), where the hand-tuned ranking needed the "stated_shared" rule to skip rows that do
# not. On the 5 folds of LoCoMo the two are one question apart (70.4 against 70.0 end to end, docs/relevance.md).
RELEVANCE_RULE = "top"


class SecondStage(Protocol):
    """What re-ranks a memory's content-ranking candidates: :class:`Reranker` (or :class:`RankRecorder`)."""

    def rerank(self, table: ConversationTable, query: str, fused: Sequence[tuple[int, float]], k: int,
               prefer: Sequence[int], margin: float | None, asks_when: bool) -> list[tuple[int, float]]: ...


def second_stage(folder: str | None, evidence_rule: str) -> tuple[Reranker | None, str]:
    """(the second stage of the model in ``folder``, :data:`RELEVANCE_RULE`), or (None, ``evidence_rule``) without
    one: what a command's ``--relevance`` gives a memory."""
    if not folder:
        return None, evidence_rule
    return Reranker(RelevanceModel.load(folder)), RELEVANCE_RULE


@dataclass
class Reranker:
    """Ranks by :class:`RelevanceModel` probabilities; ``min_rows``: what a cut keeps at least (the best row)."""

    model: RelevanceModel
    min_rows: int = 1

    def rerank(self, table: ConversationTable, query: str, fused: Sequence[tuple[int, float]], k: int,
               prefer: Sequence[int], margin: float | None, asks_when: bool) -> list[tuple[int, float]]:
        """The top ``k`` of the first stage's candidates by P(evidence), best first, (id, probability); when the plan
        cuts (``margin`` not None) only the rows the model's cut keeps (:meth:`RelevanceModel.kept`), at least
        ``min_rows``."""
        ids, x = candidate_features(table, query, fused, prefer, asks_when, candidates=self.model.candidates)
        if not ids:
            return []
        p = self.model.probabilities(x)
        if margin is None:
            order = np.argsort(-p, kind="stable")[:k]
        else:
            order = self.model.kept(p, k, self.min_rows)
        return [(ids[j], float(p[j])) for j in order]


@dataclass
class RankCall:
    """One first-stage ranking a question made: enough to compute its candidates' features again."""

    table: ConversationTable
    query: str
    fused: list[tuple[int, float]]
    k: int
    prefer: list[int]
    margin: float | None
    asks_when: bool


@dataclass
class RankRecorder:
    """A stand-in second stage that records every ranking it is asked for and returns the first stage's own order
    (uncut): how training sees exactly the candidates a question gets at answer time."""

    calls: list[RankCall] = field(default_factory=list)

    def rerank(self, table: ConversationTable, query: str, fused: Sequence[tuple[int, float]], k: int,
               prefer: Sequence[int], margin: float | None, asks_when: bool) -> list[tuple[int, float]]:
        self.calls.append(RankCall(table, query, list(fused), k, list(prefer), margin, asks_when))
        return list(fused[:k])
