"""Leave-conversations-out folds for the relevance model: every choice (its weights, its cut) is made on
conversations other than the one it is scored on.

    folds = assign_folds(by_conversation, 5)                   # conversation key -> fold
    models = fold_models(by_conversation, folds)              # conversation key -> a model that never saw it
    model = fit_with_cut(all_examples)                  # the shipped model: inner folds choose its cut

The cut (how many rows a question that asks for one gets back) is chosen on out-of-fold probabilities of the
training conversations (inner folds), never on the conversation scored: the expected-F2 decision, or the probability
threshold with the best mean F2 of the questions whose plan cuts, whichever has the better mean F2 there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from retrieval.data.jsonio import DataError
from retrieval.memory.relevance.example import Example
from retrieval.memory.relevance.model import RelevanceModel, kept_positions

THRESHOLDS = tuple(round(t, 2) for t in np.arange(0.02, 0.91, 0.02))  # the grid the cut is chosen on
INNER_FOLDS = 4
C = 1.0  # the logistic regression's inverse L2 strength (not tuned: the default)


def assign_folds(conversations: Sequence[str], k: int) -> dict[str, int]:
    """Conversation key -> fold in [0, k): sorted (numerically where they are numbers), dealt in turn."""
    keys = sorted(set(conversations), key=lambda c: (not c.isdigit(), int(c) if c.isdigit() else 0, c))
    if k < 2 or k > len(keys):
        raise DataError(f"--folds {k}: need 2 to {len(keys)} folds for {len(keys)} conversations")
    return {c: n % k for n, c in enumerate(keys)}


def stacked(examples: Sequence[Example]) -> tuple[np.ndarray, np.ndarray]:
    xs = [e.x for e in examples if len(e.ids)]
    if not xs:
        raise DataError("no candidate rows to fit the relevance model on")
    return np.concatenate(xs), np.concatenate([e.y for e in examples if len(e.ids)])


def kept_rows(example: Example, p: np.ndarray, cut: str, threshold: float = 0.5, min_rows: int = 1) -> list[int]:
    """The ids a question gets back when its plan cuts (:func:`~retrieval.memory.relevance.model.kept_positions`)."""
    return [example.ids[j] for j in kept_positions(p, example.k, cut, threshold, min_rows)]


def f2(kept: Sequence[int], relevant: frozenset[int]) -> float:
    hit = len(set(kept) & relevant)
    if not hit:
        return 0.0
    p, r = hit / len(kept), hit / len(relevant)
    return 5 * p * r / (4 * p + r)


def choose_cut(examples: Sequence[Example], probabilities: Sequence[np.ndarray]) -> tuple[str, float, dict]:
    """(cut rule, threshold, mean F2 of each candidate rule) over the examples that ask for a cut: the expected-F2
    decision, and the probability threshold of :data:`THRESHOLDS` with the best mean F2; the better of the two."""
    cut = [(e, p) for e, p in zip(examples, probabilities) if e.cut and len(e.ids)]
    if not cut:
        return "expected_f2", 0.5, {}
    by_threshold = [np.mean([f2(kept_rows(e, p, "threshold", t), e.relevant) for e, p in cut]) for t in THRESHOLDS]
    best = int(np.argmax(by_threshold))
    scores = {"expected_f2": float(np.mean([f2(kept_rows(e, p, "expected_f2"), e.relevant) for e, p in cut])),
              "threshold": float(by_threshold[best])}
    rule = max(scores, key=lambda r: scores[r])
    return rule, THRESHOLDS[best], {r: round(100 * v, 2) for r, v in scores.items()}


def out_of_fold(examples: Sequence[Example], folds: Mapping[str, int], c: float = C) -> list[np.ndarray]:
    """Each example's candidate probabilities from a model fitted without its fold."""
    out: list[np.ndarray] = [np.zeros(0)] * len(examples)
    for fold in sorted(set(folds.values())):
        train = [e for e in examples if folds[e.conversation] != fold]
        model = RelevanceModel.fit(*stacked(train), c=c)
        for n, e in enumerate(examples):
            if folds[e.conversation] == fold and len(e.ids):
                out[n] = model.probabilities(e.x)
    return out


def fit_with_cut(examples: Sequence[Example], inner_folds: int = INNER_FOLDS, c: float = C) -> RelevanceModel:
    """A model fitted on every example, its threshold chosen on the out-of-fold probabilities of ``inner_folds``
    leave-conversations-out folds over the same examples."""
    conversations = sorted({e.conversation for e in examples})
    inner = assign_folds(conversations, min(inner_folds, len(conversations)))
    rule, threshold, inner_f2 = choose_cut(examples, out_of_fold(examples, inner, c))
    sources = sorted({e.source for e in examples})
    training = {"conversations": conversations, "questions": len(examples),
                "questions_by_source": {s: sum(e.source == s for e in examples) for s in sources},
                "candidate_rows": int(sum(len(e.ids) for e in examples)), "c": c,
                "inner_folds": len(set(inner.values())),
                "inner_f2_by_cut": inner_f2, "cut_questions": sum(e.cut for e in examples)}
    return RelevanceModel.fit(*stacked(examples), c=c, threshold=threshold, cut=rule, training=training)


def fold_models(by_conversation: Mapping[str, Sequence[Example]], folds: Mapping[str, int],
                inner_folds: int = INNER_FOLDS, c: float = C) -> dict[str, RelevanceModel]:
    """Conversation key -> the model fitted (with its threshold) on the other folds' conversations only."""
    models: dict[int, RelevanceModel] = {}
    for fold in sorted(set(folds.values())):
        train = [e for key, got in by_conversation.items() if folds[key] != fold for e in got]
        models[fold] = fit_with_cut(train, inner_folds, c)
    return {key: models[folds[key]] for key in folds}
