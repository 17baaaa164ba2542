"""One question's candidates as the relevance model learns from them (:mod:`retrieval.memory.relevance_examples`
asks the open data's questions of the memory to make them)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Example:
    """One question's candidates: their ids (first stage's order), features and labels."""

    conversation: str  # the fold key: "26" for LoCoMo's conv-26 and Zyphra's log 26
    source: str  # "locomo/2" (dataset / category) or "zyphra/time+content"
    question: str
    ids: list[int]
    x: np.ndarray
    relevant: frozenset[int]
    k: int  # rows the plan keeps at most
    cut: bool  # the plan asked for a cut (a margin): the threshold decides how many come back
    asks_when: bool

    @property
    def y(self) -> np.ndarray:
        return np.asarray([float(i in self.relevant) for i in self.ids])
