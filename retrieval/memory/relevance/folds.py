"""Leave-conversations-out folds for the relevance model: every choice (its weights, its cut) is made on
conversations other than the one it is scored on.

    folds = assign_folds(by_conversation, 5)                   # conversation key -> fold
    models = fold_models(by_conversation, folds)              # conversation key -> a model that never saw it
    model = fit_with_cut(all_examples)                  # the shipped model: inner folds choose its form and cut

The model's form (its inputs' degree, :func:`~retrieval.memory.relevance.model.expanded`, and its L2 strength)
and its cut (how many rows a question that asks for one gets back) are chosen on out-of-fold probabilities of the
training conversations (inner folds), never on the conversation scored: the form with the lowest log loss of the
candidate rows there (the simpler of two within :data:`TIE`, so float noise does not pick between equals), then, on
that form's probabilities, the expected-F2 decision or the probability threshold with the best mean F2 of the
questions whose plan cuts, whichever has the better mean F2.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from retrieval.data.jsonio import DataError
from retrieval.memory.relevance.example import Example
from retrieval.memory.relevance.model import DEGREES, RelevanceModel, kept_positions

THRESHOLDS = tuple(round(t, 2) for t in np.arange(0.02, 0.91, 0.02))  # the grid the cut is chosen on
INNER_FOLDS = 4
TIE = 1e-4  # log losses this close are a tie, won by the simpler form (the lower degree, then the stronger L2)
CS = (0.01, 0.1, 1.0)  # the inverse L2 strengths they choose from (the default, and ten and a hundred times stronger)


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


def out_of_fold(examples: Sequence[Example], folds: Mapping[str, int], c: float = 1.0, degree: int = 1
                ) -> list[np.ndarray]:
    """Each example's candidate probabilities from a model (of inverse L2 strength ``c`` over inputs of ``degree``)
    fitted without its fold."""
    out: list[np.ndarray] = [np.zeros(0)] * len(examples)
    for fold in sorted(set(folds.values())):
        train = [e for e in examples if folds[e.conversation] != fold]
        model = RelevanceModel.fit(*stacked(train), c=c, degree=degree)
        for n, e in enumerate(examples):
            if folds[e.conversation] == fold and len(e.ids):
                out[n] = model.probabilities(e.x)
    return out


def log_loss(examples: Sequence[Example], probabilities: Sequence[np.ndarray]) -> float:
    """The mean negative log likelihood of every candidate row's label under ``probabilities``."""
    y = np.concatenate([e.y for e in examples if len(e.ids)])
    p = np.clip(np.concatenate([p for e, p in zip(examples, probabilities) if len(e.ids)]), 1e-12, 1 - 1e-12)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def fit_with_cut(examples: Sequence[Example], inner_folds: int = INNER_FOLDS, cs: Sequence[float] = CS,
                 degrees: Sequence[int] = DEGREES) -> RelevanceModel:
    """A model fitted on every example, its form (a degree of ``degrees``, by default every one
    :data:`~retrieval.memory.relevance.model.DEGREES` allows, a strength of ``cs``: the lowest log loss,
    within :data:`TIE` the simplest) and its cut chosen on the out-of-fold probabilities of ``inner_folds``
    leave-conversations-out folds over the same examples."""
    if not cs or not degrees:
        raise DataError("the relevance model needs at least one L2 strength (c) and one degree to choose from")
    if any(c <= 0 for c in cs) or any(d not in DEGREES for d in degrees):
        raise DataError(f"the relevance model's L2 strengths must be above 0 and its degrees among {DEGREES}: "
                        f"got cs {list(cs)}, degrees {list(degrees)}")
    conversations = sorted({e.conversation for e in examples})
    inner = assign_folds(conversations, min(inner_folds, len(conversations)))
    tried = {(d, c): out_of_fold(examples, inner, c, d) for d in degrees for c in cs}
    losses = {form: round(log_loss(examples, p), 5) for form, p in tried.items()}
    best = min(losses.values())
    degree, c = min(form for form, loss in losses.items() if loss <= best + TIE)
    rule, threshold, inner_f2 = choose_cut(examples, tried[degree, c])
    named = {f"degree {form[0]}, C {form[1]}": loss for form, loss in losses.items()}
    sources = sorted({e.source for e in examples})
    training = {"conversations": conversations, "questions": len(examples),
                "questions_by_source": {s: sum(e.source == s for e in examples) for s in sources},
                "candidate_rows": int(sum(len(e.ids) for e in examples)), "c": c, "degree": degree,
                "inner_folds": len(set(inner.values())), "inner_log_loss_by_form": named,
                "inner_f2_by_cut": inner_f2, "cut_questions": sum(e.cut for e in examples)}
    return RelevanceModel.fit(*stacked(examples), c=c, threshold=threshold, cut=rule, training=training,
                              degree=degree)


def fold_models(by_conversation: Mapping[str, Sequence[Example]], folds: Mapping[str, int],
                inner_folds: int = INNER_FOLDS, cs: Sequence[float] = CS, degrees: Sequence[int] = DEGREES
                ) -> dict[str, RelevanceModel]:
    """Conversation key -> the model fitted (its form and threshold chosen) on the other folds' conversations only."""
    models: dict[int, RelevanceModel] = {}
    for fold in sorted(set(folds.values())):
        train = [e for key, got in by_conversation.items() if folds[key] != fold for e in got]
        models[fold] = fit_with_cut(train, inner_folds, cs, degrees)
    return {key: models[folds[key]] for key in folds}
