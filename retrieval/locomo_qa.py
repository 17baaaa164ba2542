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
from pathlib import Path

from retrieval.conversation_log import Utterance, read_locomo_conversation
from retrieval.jsonio import DataError, read_json


@dataclass(frozen=True)
class EvidenceQuestion:
    sample_id: str
    question: str
    category: int
    evidence: tuple[int, ...]  # response_idx of the evidence turns


def read_samples(path: str | Path) -> list[dict]:
    """The samples of a ``locomo10.json``-style file (a JSON list of {"sample_id", "conversation", "qa"})."""
    data = read_json(path)
    if not isinstance(data, list):
        raise DataError(f"{path}: expected a JSON list of LoCoMo samples")
    for i, sample in enumerate(data):
        if not isinstance(sample, dict) or "conversation" not in sample:
            raise DataError(f"{path}: sample {sample_id(sample, i)} has no 'conversation'")
    return data


def sample_id(sample: dict, position: int) -> str:
    return str(sample.get("sample_id", position)) if isinstance(sample, dict) else str(position)


def sample_utterances(sample: dict, where: str = "locomo") -> list[Utterance]:
    return read_locomo_conversation(sample["conversation"], where=f"{where}: {sample.get('sample_id', '?')}")


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
                                        tuple(evidence)))
    return out
