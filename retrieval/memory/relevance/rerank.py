"""The memory's second stage: the relevance model re-orders the first stage's candidates by the probability that each
is evidence, and a plan that asks for a cut gets the rows that reach the model's threshold.

    memory = TemporalMemory(table, relevance=Reranker(RelevanceModel.load("runs/memory_relevance")))
    memory.ask("What did Caroline say about the adoption agency in June?")   # ranked and cut by the model

The first stage (dense and BM25 over both views, fused, with the speaker prior) is the memory's hand-tuned content
ranking; without a relevance model it is also the last (its margin cut), so the two are one flag apart: the
commands' ``--relevance`` is ``auto`` by default (the model packaged in ``packaged/``, for the packaged MiniLM
encoder it was trained with), ``none`` for the hand-tuned ranking, or a model folder of one's own.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

import numpy as np

from retrieval.data.jsonio import DataError
from retrieval.memory.conversation_table import ConversationTable
from retrieval.memory.relevance.choices import AUTO, NO_MODEL, PACKAGED, PACKAGED_MODEL
from retrieval.memory.relevance.features import candidate_features
from retrieval.memory.relevance.model import RelevanceModel
from retrieval.memory.when_answer import EVIDENCE_RULE

# A when-question's answer is the reading the model's best five rows hold most ("support", when_answer.supported):
# the model already weighs whether a row states a time (asks_when_x_states_time), where the hand-tuned ranking needed
# the "stated_shared" rule to skip rows that do not, and rows that agree on a day outweigh one likelier row's other
# day. Chosen over "top" (the best row alone) on the development data: LoCoMo's conv-26, 30, 41 by folds 75 against
# 75 right, the first and third trial chats 36 and 29 against 35 and 27 (docs/relevance.md).
RELEVANCE_RULE = "support"

logger = logging.getLogger(__name__)


class SecondStage(Protocol):
    """What re-ranks a memory's content-ranking candidates: :class:`Reranker` (or :class:`RankRecorder`)."""

    def rerank(self, table: ConversationTable, query: str, fused: Sequence[tuple[int, float]], k: int,
               prefer: Sequence[int], margin: float | None, asks_when: bool) -> list[tuple[int, float]]: ...


def relevance_model(choice: str) -> RelevanceModel:
    """The model ``choice`` names: the packaged one (``auto``, ``packaged``) or the one saved in a folder."""
    return RelevanceModel.load(PACKAGED_MODEL if choice in (AUTO, PACKAGED) else choice)


def second_stage(choice: str | None, evidence_rule: str, encoder_id: str | None = None
                 ) -> tuple[Reranker | None, str]:
    """(the second stage ``choice`` names, :data:`RELEVANCE_RULE`), or (None, ``evidence_rule``) for the hand-tuned
    ranking: what a command's ``--relevance`` gives a memory whose encoder is ``encoder_id``.

    ``choice`` (:data:`~retrieval.memory.relevance.choices.CHOICES`, or a folder): ``auto`` (the commands'
    default) the packaged model when the memory's encoder is the one it was trained with, else the hand-tuned
    ranking, said once on the log; ``packaged`` and a folder that model, refused (a DataError) with an encoder it was
    not trained with; ``none`` or None the hand-tuned ranking."""
    if choice is None or choice == NO_MODEL:
        return None, evidence_rule
    model = relevance_model(choice)
    if encoder_id is not None and not model.fits_encoder(encoder_id):
        trained = model.training.get("encoder")
        if choice != AUTO:
            name = "the packaged relevance model" if choice == PACKAGED else f"relevance model {choice}"
            raise DataError(f"{name} was trained on the scores of encoder {trained}, not this memory's {encoder_id}: "
                            f"train one for it (python -m train.memory_relevance --encoder ...) or pass "
                            f"--relevance {NO_MODEL}")
        logger.warning("relevance: the packaged model is for encoder %s, not this memory's %s: the hand-tuned "
                       "ranking answers (--relevance FOLDER: a model trained for it)", trained, encoder_id)
        return None, evidence_rule
    return Reranker(model), RELEVANCE_RULE


class Ranked(Protocol):
    """What :func:`use_relevance` gives a second stage: a memory
    (:class:`~retrieval.memory.temporal_memory.TemporalMemory`)."""

    table: ConversationTable
    relevance: SecondStage | None
    evidence_rule: str


M = TypeVar("M", bound=Ranked)


def use_relevance(memory: M, choice: str | None) -> M:
    """``memory`` with the second stage ``choice`` names for the encoder it was built with (:func:`second_stage`): how
    a command that opens a living memory, whose encoder is its own, applies ``--relevance``."""
    table = memory.table
    encoder_id = table.encoder_id or (table.encoder.identity if table.encoder is not None else None)
    memory.relevance, memory.evidence_rule = second_stage(choice, EVIDENCE_RULE, encoder_id)
    return memory


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
