"""A learned per-turn topic model: the probability that a turn of a conversation is about a trend's topic, from
how close it and the turns around it are to the topic, learned from chats in which a person marked every turn about
a topic (:mod:`retrieval.trends.topic_labels`). A trend's count is then the sum of the probabilities (the expected
number of turns about the topic, ``--threshold turns``).

In a conversation a topic is carried by turns that never name it ("fingers crossed!", "when do you hear back?"),
so beside the turn's own closeness (:data:`FEATURES`: the topic's cosine with and without pseudo-relevance feedback,
raw and as a robust z within the conversation; the share of the topic's content stems it says; its BM25 score) the
model reads its surroundings: the best feedback z of its session's turns within 1, 2 and 3 turns, its distance to
the nearest turn of its session that names the topic, that session's share of such turns and its mean z; and its
length. A logistic regression (:class:`TopicTurnModel`, the memory relevance model's form over these features).

    model = TopicTurnModel.load(PACKAGED_TOPIC_MODEL)          # or a folder of python -m train.topic_turns
    p = topic_probabilities(table, "tess's job hunt", model, rows)

The packaged model is trained on the development chats of the user trial (``eval/trial*``, never the held-out
one); ``python -m eval.trend_turn_folds`` scores the method leave one chat out.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import ClassVar, cast

import numpy as np
import pandas as pd

from retrieval.data.jsonio import DataError
from retrieval.memory.conversation_table import ConversationTable
from retrieval.memory.relevance.features import neighbour_best
from retrieval.memory.relevance.model import RelevanceModel
from retrieval.memory.when_neighbours import content_stems, participant_names
from retrieval.trends.scores import FEEDBACK, topic_scores

FEATURES = ("cosine", "cosine_feedback", "z", "z_feedback", "stems", "bm25", "context_1", "context_2", "context_3",
            "stems_context_2", "seed_distance", "session_stems", "session_z", "length")
SEED_CAP = 10  # turns: the distance to a turn naming the topic, capped (and scaled by it)
NO_NEIGHBOUR_Z = -5.0  # the context z of a turn alone in its session: far below any topic turn's
PACKAGED_TOPIC_MODEL = Path(__file__).with_name("packaged")


@dataclass
class TopicTurnModel(RelevanceModel):
    """The memory relevance model's logistic regression over :data:`FEATURES` (its ``threshold``: the probability a
    turn is shown as counted at)."""

    features: tuple[str, ...] = FEATURES
    FEATURE_NAMES: ClassVar[tuple[str, ...]] = FEATURES
    FILE: ClassVar[str] = "topic_turns.json"
    TRAIN: ClassVar[str] = "python -m train.topic_turns"


def robust_z(x: np.ndarray) -> np.ndarray:
    """``x`` less its median, over its median absolute deviation scaled to a normal's standard deviation."""
    median = np.median(x)
    return (x - median) / (1.4826 * np.median(np.abs(x - median)) + 1e-6)


def seed_distance(sessions: np.ndarray, seed: np.ndarray, cap: int) -> np.ndarray:
    """Each row's distance, in rows, to the nearest row of its session where ``seed`` holds (``cap`` when there is
    none, or it is farther): by session, each row's nearest seed found by bisection, so a large table takes
    O(n log n), not rows times seeds."""
    out = np.full(len(sessions), float(cap))
    for rows in pd.Series(np.arange(len(sessions))).groupby(sessions).indices.values():
        seeds = rows[seed[rows]]
        if not len(seeds):
            continue
        at = np.searchsorted(seeds, rows)
        after = np.abs(seeds[np.minimum(at, len(seeds) - 1)] - rows)
        before = np.abs(rows - seeds[np.maximum(at - 1, 0)])
        out[rows] = np.minimum(np.minimum(after, before), cap)
    return out


def turn_features(table: ConversationTable, topic: str) -> np.ndarray:
    """(turns, len(FEATURES)) for every turn of ``table`` against ``topic``."""
    frame = table.frame
    names, ids = participant_names(frame), frame.index.tolist()
    cosine, feedback = topic_scores(table, topic).to_numpy(), topic_scores(table, topic, FEEDBACK).to_numpy()
    z, zf = robust_z(cosine), robust_z(feedback)
    wanted = content_stems(topic, names)
    stems = np.array([len(content_stems(t, names) & wanted) / max(len(wanted), 1) for t in frame["text"]])
    bm25 = dict(table.rank_sparse(topic, k=len(table)))
    bm = np.array([bm25.get(i, 0.0) for i in frame.index])
    sessions = frame["session"].to_numpy()
    distance = seed_distance(sessions, stems > 0, SEED_CAP)
    return np.column_stack([
        cosine, feedback, z, zf, stems, bm / (bm.max() + 1e-9),
        *(neighbour_best(frame, ids, zf, w, NO_NEIGHBOUR_Z) for w in (1, 2, 3)),
        neighbour_best(frame, ids, stems, 2), distance / SEED_CAP,
        pd.Series(stems > 0).groupby(sessions).transform("mean").to_numpy(),
        pd.Series(zf).groupby(sessions).transform("mean").to_numpy(),
        np.log1p([len(str(t).split()) for t in frame["text"]])])


def topic_probabilities(table: ConversationTable, topic: str, model: TopicTurnModel, rows: pd.DataFrame
                        ) -> pd.Series:
    """P(about ``topic``) of every row of ``rows`` (a slice of the table's frame), its features read over the whole
    table; a DataError when ``model`` was trained on another encoder's scores."""
    encoder = table.encoder_id or table.require_encoder().identity
    if not model.fits_encoder(encoder):
        raise DataError(f"the topic-turn model was trained with the encoder {model.training.get('encoder')}, not "
                        f"this corpus's {encoder}: train one for it (python -m train.topic_turns --encoder ...)")
    p = pd.Series(model.probabilities(turn_features(table, topic)), index=table.frame.index, dtype="float64")
    return p.loc[rows.index]


def load_topic_model(spec: str) -> TopicTurnModel:
    """``packaged`` (:data:`PACKAGED_TOPIC_MODEL`, read once per process: the default count asks for it on every
    trend) or a folder of ``python -m train.topic_turns`` (read each time: it may be retrained)."""
    return _packaged() if spec == "packaged" else cast(TopicTurnModel, TopicTurnModel.load(spec))


@cache
def _packaged() -> TopicTurnModel:
    return cast(TopicTurnModel, TopicTurnModel.load(PACKAGED_TOPIC_MODEL))
