"""LoCoMo's question annotations: each question with the conversation turns that hold its evidence.

    samples = read_samples("../shared/data/locomo/locomo_open.json")
    utterances = sample_utterances(samples[0], where="locomo_open.json")
    questions = evidence_questions(samples[0], utterances, categories=(1, 3, 4))

Categories (LoCoMo's numbering; see the data folder's SOURCE.md): 1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop, 5 adversarial (a question about something the other speaker said; no true answer).
Evidence ids ("D3:5") that name no turn of the conversation are dropped; a question left with none is skipped.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import pandas as pd

from retrieval.data.conversation_log import Utterance
from retrieval.data.conversation_log import locomo_sample_id as sample_id
from retrieval.data.conversation_log import locomo_sample_utterances as sample_utterances
from retrieval.data.conversation_log import read_locomo_samples as read_samples

__all__ = ["EvidenceQuestion", "evidence_days", "evidence_questions", "read_samples", "sample_id", "sample_utterances"]


@dataclass(frozen=True)
class EvidenceQuestion:
    sample_id: str
    question: str
    category: int
    evidence: tuple[int, ...]  # response_idx of the evidence turns
    answer: str | None = None  # the reference answer as text (None where there is none: most of category 5)
    adversarial_answer: str | None = None  # category 5's ``adversarial_answer``, as the file gives it


def _text(value: object) -> str | None:
    """An answer as text: LoCoMo writes some as numbers (``2022``)."""
    return None if value is None else str(value)


def evidence_questions(sample: dict, utterances: Sequence[Utterance],
                       categories: Collection[int] = (1, 3, 4)) -> list[EvidenceQuestion]:
    """The sample's questions of these categories, each with the response_idx of its evidence turns."""
    turn_of = {u.turn_id: u.response_idx for u in utterances}
    out = []
    for qa in sample.get("qa", []):
        if not isinstance(qa, dict) or qa.get("category") not in categories or not qa.get("question"):
            continue
        evidence = sorted({turn_of[e.strip()] for e in qa.get("evidence", [])
                           if isinstance(e, str) and e.strip() in turn_of})
        if evidence:
            out.append(EvidenceQuestion(str(sample.get("sample_id", "")), qa["question"], qa["category"],
                                        tuple(evidence), _text(qa.get("answer")), _text(qa.get("adversarial_answer"))))
    return out


def evidence_days(frame: pd.DataFrame, evidence: Collection[int]) -> list[int]:
    """The rows (index labels of a conversation table's ``frame``) of the calendar days that hold the evidence:
    what a question naming its date narrows to, the pool a content ranking sorts at answer time."""
    return frame.index[frame["date"].isin(set(frame.loc[list(evidence), "date"]))].tolist()
