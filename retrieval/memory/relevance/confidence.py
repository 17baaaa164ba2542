"""How sure an answer is, from the relevance model's probabilities, said first when it is more likely wrong than
right: the memory's way of not answering wrong in silence.

    rows = with_probabilities(execution, memory.relevance)    # each ranked row's P(evidence), column "evidence_p"
    note = weak_evidence_note(answer, rows)                    # "weak evidence: ..." or None
    note = rival_note(answer)                                  # "conflicting evidence: ..." or None

The model's row probabilities are calibrated on conversations it never saw (out of fold over the open data, the
rows it gives 0.3-0.5 are evidence 38 % of the time, those above 0.7, 80 %: docs/relevance.md), so the line is drawn
where the model itself says "more likely not": an answer whose evidence is evidence with probability under
:data:`WEAK_EVIDENCE` (0.5, not tuned) says so, with the probability, before anything else. For a when-answer the
probability is that of the row it was read from (of both rows for a length between two events); for rows shown,
that of the likeliest. Without a relevance model the scores are not probabilities and nothing is said.

A when-answer is also doubted when another row the model finds likely evidence (:data:`WEAK_EVIDENCE` or more)
states a time apart from the answer's (:func:`~retrieval.memory.when_support.rival`): both are named, first.
"""

from __future__ import annotations

import math

import pandas as pd

from retrieval.memory.answer_notes import RIVAL_NOTE, WEAK_NOTE
from retrieval.memory.relevance.rerank import Reranker
from retrieval.memory.table_ops import Execution
from retrieval.memory.when_answer import WhenAnswer
from retrieval.memory.when_support import LIKELY, PROBABILITY

WEAK_EVIDENCE = LIKELY  # below it, the evidence is more likely not evidence: said first


def with_probabilities(execution: Execution, second_stage) -> pd.DataFrame:
    """The execution's rows, with each ranked row's probability of being evidence in :data:`PROBABILITY` when the
    second stage is a relevance model (its scores are probabilities); the rows as they are otherwise."""
    rows = execution.rows
    if not isinstance(second_stage, Reranker) or not execution.scores or not len(rows):
        return rows
    return rows.assign(**{PROBABILITY: [execution.scores.get(i, math.nan) for i in rows.index]})


def answer_is_weak(answer: WhenAnswer, threshold: float = WEAK_EVIDENCE) -> bool | None:
    """Whether a when-``answer`` is read from evidence under ``threshold`` (False without an answer); None without a
    probability (no relevance model: nothing to say)."""
    if answer.probability is None:
        return None
    return answer.answer is not None and answer.probability < threshold


def answer_is_doubted(answer: WhenAnswer, threshold: float = WEAK_EVIDENCE) -> bool | None:
    """Whether a when-``answer`` says first that it may be wrong: its evidence is weak (:func:`answer_is_weak`) or a
    likely row says another time (:func:`rival_note`); None without a probability."""
    weak = answer_is_weak(answer, threshold)
    return None if weak is None else weak or (answer.answer is not None and answer.rival is not None)


def weak_evidence_note(answer: WhenAnswer | None, rows: pd.DataFrame, threshold: float = WEAK_EVIDENCE
                       ) -> str | None:
    """The warning for an answer whose evidence is more likely not evidence (probability under ``threshold``):
    a when-``answer`` by its own probability (:func:`answer_is_weak`), else by the likeliest of ``rows`` (with
    :data:`PROBABILITY`); None when it is likely enough or there is no probability."""
    if answer is not None:
        if not answer_is_weak(answer, threshold):
            return None
        return (f"{WEAK_NOTE} the answer {answer.answer!r} is read from evidence the relevance model gives "
                f"probability {answer.probability:.2f} of being about the question: check it in the rows below")
    if PROBABILITY not in rows or not rows[PROBABILITY].notna().any():
        return None
    best = float(rows[PROBABILITY].max())
    if best >= threshold:
        return None
    return (f"{WEAK_NOTE} no row shown is likely about the question (the likeliest has probability {best:.2f} under "
            "the relevance model)")


def rival_note(answer: WhenAnswer | None) -> str | None:
    """For a when-``answer`` with a rival (another likely row that states a time apart from it,
    :func:`~retrieval.memory.when_support.rival`): both readings, said first; None otherwise."""
    if answer is None or answer.answer is None or answer.rival is None:
        return None
    said, row, phrase, p = answer.rival
    return (f"{RIVAL_NOTE} row {row}, which the relevance model gives probability {p:.2f} of being about the "
            f"question, says {phrase!r} ({said}), not {answer.answer!r}: check both rows")
