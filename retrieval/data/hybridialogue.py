"""Reader for HybriDialogue's ``experimental_data.json`` (the cTBLS paper's dataset).

Schema: ``{"conversations": {conv_id: [turn_id, ...]}, "qas": {turn_id: {"conversation_id",
"current_query", "current_cands_ids", "possible_next_cands_ids", "correct_next_cands_ids",
"short_response_to_query", "long_response_to_query", "position"}}, "all_candidates":
{cand_id: {"the_type", "raw_content", "linearized_input", "row", "col", "page_key",
"table_key"}}}``. Tables themselves are OTT-QA's (read with :mod:`retrieval.data.ottqa`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from retrieval.data.jsonio import DataError, read_json
from retrieval.data.types import Conversation, Turn


@dataclass
class Candidate:
    """A piece of knowledge a turn may rest on: a table, row, cell or paragraph."""

    cand_id: str
    kind: str
    text: str
    table_key: str | None = None
    row: int | None = None
    col: int | None = None


@dataclass
class HybriDialogue:
    conversations: list[Conversation]
    candidates: dict[str, Candidate]
    turn_candidates: dict[str, list[str]]  # turn id -> candidate ids to rank ("possible_next")
    turn_correct: dict[str, list[str]]  # turn id -> correct candidate ids


def _int_or_none(v: str | int | None) -> int | None:
    return None if v in (None, "", -1) else int(v)


def load_hybridialogue(path: str | Path) -> HybriDialogue:
    data = read_json(path)
    if not isinstance(data, dict):
        raise DataError(f"{path}: expected a top-level object with 'conversations'")
    for key in ("conversations", "qas", "all_candidates"):
        if not isinstance(data.get(key), dict):
            raise DataError(f"{path}: expected a top-level object with '{key}'")
    candidates = {}
    for cid, c in data["all_candidates"].items():
        try:
            candidates[cid] = Candidate(cid, c["the_type"], c.get("linearized_input") or c.get("raw_content", ""),
                                        c.get("table_key"), _int_or_none(c.get("row")), _int_or_none(c.get("col")))
        except (KeyError, TypeError, ValueError) as e:
            raise DataError(f"{path}: candidate {cid!r} is malformed ({e})") from e
    conversations, turn_candidates, turn_correct = [], {}, {}
    for conv_id, turn_ids in data["conversations"].items():
        turns, table_id = [], None
        for tid in turn_ids:
            qa = data["qas"].get(tid)
            if qa is None:
                raise DataError(f"{path}: conversation {conv_id!r} names turn {tid!r}, which 'qas' lacks")
            correct = [c for c in qa.get("correct_next_cands_ids", []) if c in candidates]
            cells = [(row, col) for c in correct if candidates[c].kind == "cell"
                     and (row := candidates[c].row) is not None and (col := candidates[c].col) is not None]
            table_id = table_id or next((candidates[c].table_key for c in correct if candidates[c].table_key), None)
            turns.append(Turn(tid, qa["current_query"], qa.get("long_response_to_query")
                              or qa.get("short_response_to_query"), table_id, cells))
            turn_candidates[tid] = [c for c in qa.get("possible_next_cands_ids", []) if c in candidates]
            turn_correct[tid] = correct
        conversations.append(Conversation(conv_id, table_id or "", turns))
    return HybriDialogue(conversations, candidates, turn_candidates, turn_correct)
