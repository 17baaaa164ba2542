"""Topics a person marked in a chat: a trend question and every turn about its topic, the labels the learned
per-turn model (:mod:`retrieval.trends.topic_turns`) is trained and scored on.

A chat folder holds ``chat.jsonl`` (``{"id", "speaker", "text", "timestamp"}`` a line) and ``questions.jsonl``,
whose trend questions carry a counts key (the user trial's format, ``eval.user_trial``):

    {"id": "gT1", "question": "how often did donnacha's cup run come up, week by week",
     "now": "2025-04-17T09:00:00+01:00", "key": {"expect": "counts", "period": "week", "turns": ["x012", ...]}}

    topics = labelled_topics("eval/trial_dev5", encoder)      # [LabelledTopic], each with its chat's corpus
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np

from retrieval.data.jsonio import DataError, iter_jsonl
from retrieval.trends.corpus import Corpus, load_corpus
from retrieval.trends.question import parse_trend_question

KEY_PERIODS = ("week", "session")  # the periods a counts key is scored by


def check_counts_key(key: dict, where: str) -> None:
    """A DataError naming ``where`` unless ``key`` is a counts key: its ``turns`` a list, its ``period`` one of
    :data:`KEY_PERIODS`."""
    if not isinstance(key.get("turns"), list):
        raise DataError(f"{where}: a counts key needs 'turns', a list of the chat's turn ids")
    if key.get("period") not in KEY_PERIODS:
        raise DataError(f"{where}: a counts key needs 'period', one of {', '.join(KEY_PERIODS)}")


@dataclass
class LabelledTopic:
    """One trend question of a chat: the chat's folder name, the question (with its ``now`` and counts key), the
    chat's corpus and, per row of its table, whether a person marked it as about the topic."""

    chat: str
    question: dict
    corpus: Corpus
    about: np.ndarray

    @property
    def period(self) -> str:
        return self.question["key"]["period"]

    @property
    def topic(self) -> str:
        """The topic as the trend analysis reads it from the question."""
        speakers = sorted(self.corpus.table.frame["speaker"].unique())
        return parse_trend_question(self.question["question"], datetime.fromisoformat(self.question["now"]),
                                    speakers).topic


def labelled_topics(folder: str | Path, encoder) -> list[LabelledTopic]:
    """The trend questions (counts keys) of the chat in ``folder``, each with the chat's corpus embedded by
    ``encoder``; a DataError naming the file and line of a malformed one, or of a turn the chat does not have."""
    folder = Path(folder)
    path = folder / "questions.jsonl"
    marked = []
    for lineno, q in iter_jsonl(path):
        key = q.get("key") if isinstance(q, dict) else None
        if not isinstance(key, dict) or key.get("expect") != "counts":
            continue
        if not isinstance(q.get("question"), str) or not isinstance(q.get("now"), str):
            raise DataError(f"{path}:{lineno}: a trend question needs 'question' and 'now'")
        check_counts_key(key, f"{path}:{lineno}")
        marked.append(q)
    if not marked:
        raise DataError(f"{path}: no trend questions (counts keys)")
    corpus = load_corpus(folder / "chat.jsonl", encoder)
    row = {turn: i for i, turn in corpus.source_ids.items()}
    out = []
    for q in marked:
        unknown = sorted(set(q["key"]["turns"]) - set(row))
        if unknown:
            raise DataError(f"{path}: keys name turns the chat does not have: {unknown[:10]}")
        about = corpus.table.frame.index.isin([row[t] for t in q["key"]["turns"]]).astype(float)
        out.append(LabelledTopic(folder.name, q, corpus, about))
    return out
