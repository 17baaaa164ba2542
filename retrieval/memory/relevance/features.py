"""What the relevance model sees of one candidate row: the first stage's scores of it, and a few facts of the row
and its neighbours, each computed the same way at training and at answer time.

    ids, x = candidate_features(table, query, fused, prefer, asks_when)     # x: (len(ids), len(FEATURES))

The candidates are the first stage's best :data:`CANDIDATES` rows (the memory's content ranking, fused, before its
cut): the rows that survived the plan's filters, so the model only ever orders what the plan left. Every score is
computed exactly over the candidates (not read off a list that may have cut a row), and the per-question ones are
also given rescaled within the candidates, so a model learns relative evidence, not a conversation's scale.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from retrieval.memory.conversation_table import ConversationTable
from retrieval.memory.when_neighbours import content_stems

CANDIDATES = 50  # first-stage rows the model re-ranks (the content ranking's fusion depth)
VIEWS = ("text", "turn")
FEATURES = (
    "dense_text", "dense_turn", "bm25_text", "bm25_turn",  # raw (BM25 over its best in the candidates)
    "dense_text_mm", "dense_turn_mm", "bm25_text_mm", "bm25_turn_mm",  # min-max within the candidates
    "first_stage", "first_stage_rank",  # the hand-tuned fusion's score (min-max) and 1 / (1 + its rank)
    "named_speaker", "is_question", "log_words", "states_time",
    "asks_when", "asks_when_x_states_time", "asks_when_x_is_question",
    "neighbour_dense",  # the better min-max dense score of the turns before and after it in its session
    "neighbour_first_stage", "neighbour2_first_stage",  # the best first-stage score within 1 (2) turns of it
    "overlap_text", "overlap_turn",  # share of the query's content stems the utterance (with its turn) holds
    "dense_gap",  # its dense score minus the best candidate's
    "log_candidates",
)


def _min_max(v: np.ndarray) -> np.ndarray:
    lo, hi = float(v.min()), float(v.max())
    return (v - lo) / (hi - lo) if hi > lo else np.zeros_like(v)


def _exact(scored: Sequence[tuple[int, float]], ids: Sequence[int]) -> np.ndarray:
    got = dict(scored)
    return np.asarray([got.get(i, 0.0) for i in ids], dtype=np.float64)


def view_scores(table: ConversationTable, query: str, ids: list[int]) -> dict[str, np.ndarray]:
    """Each ranker's score of every candidate, over each view the table has (a view it lacks scores 0)."""
    out = {}
    for view in VIEWS:
        has_view = view == "text" or table.turn_index is not None
        out[f"dense_{view}"] = _exact(table.rank(query, len(ids), ids, view), ids) if has_view else np.zeros(len(ids))
        out[f"bm25_{view}"] = _exact(table.rank_sparse(query, len(ids), ids, view), ids) if has_view else \
            np.zeros(len(ids))
    return out


def neighbour_best(frame: pd.DataFrame, ids: list[int], scores: np.ndarray, window: int = 1,
                   empty: float = 0.0) -> np.ndarray:
    """The best score of the turns of ``ids`` within ``window`` turns of each one in its session (0 for a neighbour
    that is not one of ``ids``; ``empty`` for a turn with no neighbour in its session). Array operations over the
    frame's rows, so a trend over a large memory scores every turn in one pass."""
    position = frame.index.get_indexer(ids)
    sessions = frame["session"].to_numpy()
    full = np.zeros(len(frame))  # each row's score: 0 for a row that is not one of ids
    full[position] = scores
    best = np.full(len(ids), -np.inf)
    found = np.zeros(len(ids), dtype=bool)
    for d in (d for d in range(-window, window + 1) if d):
        q = position + d
        inside = (q >= 0) & (q < len(frame))
        q = np.clip(q, 0, len(frame) - 1)
        same = inside & (sessions[q] == sessions[position])
        best = np.where(same, np.maximum(best, full[q]), best)
        found |= same
    return np.where(found, best, float(empty))


def _overlap(query_stems: set[str], texts: Sequence[str]) -> np.ndarray:
    if not query_stems:
        return np.zeros(len(texts))
    return np.asarray([len(query_stems & content_stems(t)) / len(query_stems) for t in texts])


def candidate_features(table: ConversationTable, query: str, fused: Sequence[tuple[int, float]],
                       prefer: Sequence[int], asks_when: bool, frame: pd.DataFrame | None = None,
                       candidates: int = CANDIDATES) -> tuple[list[int], np.ndarray]:
    """(ids, features) of the best ``candidates`` rows of the first stage's ``fused`` list (id, score), best first,
    for ``query`` (the plan's content query); ``prefer``: rows of the speaker the question names; ``asks_when``: the
    ranking is for a when-question's evidence. ``frame``: the table's rows in the question's zone (default its own)."""
    head = list(fused[:candidates])
    ids = [i for i, _ in head]
    if not ids:
        return ids, np.zeros((0, len(FEATURES)))
    frame = table.frame if frame is None else frame
    rows = frame.loc[ids]
    scores = view_scores(table, query, ids)
    first = np.asarray([s for _, s in head], dtype=np.float64)
    words = rows["text"].astype(str).str.split().str.len().to_numpy(dtype=np.float64)
    is_question = rows["text"].astype(str).str.contains("?", regex=False).to_numpy(dtype=np.float64)
    states = rows["event_start"].notna().to_numpy(dtype=np.float64) if "event_start" in rows else np.zeros(len(ids))
    when = float(asks_when)
    stems = content_stems(query)
    turn_texts = _turn_texts(frame, ids)
    named = set(prefer)
    dense_mm = _min_max(scores["dense_text"])
    bm25 = {v: scores[f"bm25_{v}"] / max(float(scores[f"bm25_{v}"].max()), 1e-9) for v in VIEWS}
    columns = {
        "dense_text": scores["dense_text"], "dense_turn": scores["dense_turn"],
        "bm25_text": bm25["text"], "bm25_turn": bm25["turn"],
        "dense_text_mm": dense_mm, "dense_turn_mm": _min_max(scores["dense_turn"]),
        "bm25_text_mm": _min_max(scores["bm25_text"]), "bm25_turn_mm": _min_max(scores["bm25_turn"]),
        "first_stage": _min_max(first), "first_stage_rank": 1.0 / (1.0 + np.arange(len(ids))),
        "named_speaker": np.asarray([float(i in named) for i in ids]),
        "is_question": is_question, "log_words": np.log1p(words), "states_time": states,
        "asks_when": np.full(len(ids), when), "asks_when_x_states_time": when * states,
        "asks_when_x_is_question": when * is_question,
        "neighbour_dense": neighbour_best(frame, ids, dense_mm),
        "neighbour_first_stage": neighbour_best(frame, ids, _min_max(first)),
        "neighbour2_first_stage": neighbour_best(frame, ids, _min_max(first), 2),
        "overlap_text": _overlap(stems, rows["text"].astype(str).tolist()),
        "overlap_turn": _overlap(stems, turn_texts),
        "dense_gap": scores["dense_text"] - float(scores["dense_text"].max()),
        "log_candidates": np.full(len(ids), math.log(len(ids))),
    }
    return ids, np.stack([columns[f] for f in FEATURES], axis=1)


def _turn_texts(frame: pd.DataFrame, ids: list[int]) -> list[str]:
    """Each candidate's utterance after the one before it in its session (the turn view's words)."""
    order, sessions, texts = frame.index, frame["session"], frame["text"].astype(str)
    out = []
    for i in ids:
        p = order.get_loc(i)
        before = texts.iloc[p - 1] + " " if p > 0 and sessions.iloc[p - 1] == sessions.loc[i] else ""
        out.append(before + texts.loc[i])
    return out
