"""How close every document of a table is to a trend's topic: the cosine of the topic's query, optionally moved
toward its closest documents first (pseudo-relevance feedback). The thresholds of :mod:`retrieval.trends.relevance`
and the learned per-turn model of :mod:`retrieval.trends.topic_turns` read these scores.

    scores = topic_scores(table, "electric cars", feedback=FEEDBACK)   # Series indexed by response_idx
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from retrieval.memory.conversation_table import ConversationTable

# the documents a topic's query is moved toward before scoring (topic_vector, --feedback): Rocchio's pseudo-relevance
# feedback at the depth it is usually run with. Off by default: on the planted topics it makes the reference threshold
# count nearly as well as a labelled one, and the default mixture threshold worse (docs/trends.md)
FEEDBACK = 10


def check_feedback(feedback: int, flag: str = "feedback") -> None:
    """A ValueError naming ``flag`` when ``feedback`` (documents to move the query toward) is negative."""
    if feedback < 0:
        raise ValueError(f"{flag} {feedback}: the number of documents to move the query toward (0: none)")


def topic_vector(table: ConversationTable, topic: str, feedback: int = 0) -> np.ndarray:
    """The topic's query embedding (1, D), moved toward the mean embedding of its ``feedback`` closest documents
    and normalised (Rocchio's pseudo-relevance feedback, query and documents weighted alike): a topic named in two
    words ("electric cars") is said in many ("the new battery on my cousin's Tesla"); 0: the query alone."""
    q = table.encode_query(topic)
    if not feedback or not len(table):
        return q
    top = [i for i, _ in table.rank(q, k=min(feedback, len(table)))]
    docs = table.require_encoder().encode_documents(table.frame.loc[top, "text"].astype(str).tolist())
    v = q[0] + docs.mean(axis=0)
    return (v / np.linalg.norm(v))[None, :].astype(np.float32)


def topic_scores(table: ConversationTable, topic: str, feedback: int = 0) -> pd.Series:
    """Cosine of the topic (:func:`topic_vector`) to every document of the table: (N,) Series indexed by
    response_idx."""
    hits = table.rank(topic_vector(table, topic, feedback), k=len(table))
    return pd.Series(dict(hits), dtype=np.float64).reindex(table.frame.index)
