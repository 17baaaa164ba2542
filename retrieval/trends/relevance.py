"""Deciding which documents are relevant to a topic: a threshold on the encoder's cosine
score, optionally confirmed by an LLM judge.

Thresholds (all on the cosine between the topic query and each document, higher = closer):

- ``null``: no labels. The documents of the corpus are mostly *not* about any one topic, so the
  bulk of the topic's score distribution is the null (off-topic) distribution. Its centre is the
  median and its spread is estimated from the lower half only (a one-sided MAD: the lower half is not
  contaminated by the relevant tail), ``sigma = 1.4826 * median(median - s | s < median)``; the
  threshold is ``median + z(1 - alpha) * sigma``, so about ``alpha`` of off-topic documents pass if
  the null is roughly symmetric. Assumes the topic is a minority of the documents (under half).
- ``mixture``: no labels. The scores are fitted as two Gaussians, the off-topic bulk and the topic's tail, and a
  document counts where the tail's posterior reaches 0.5. Unlike the null it does not promise a share of
  off-topic documents let through; it estimates where the topic's own scores begin. Chosen over the null on the
  planted-topic evaluation's calibration log (``eval.trends``), reported on its other logs.
- ``reference``: no labels, but a reference corpus known not to be about the topic (another log, a random
  sample of unrelated documents): the ``1 - alpha`` quantile of the topic's scores against it. Makes no
  assumption about the null's shape, only that the reference is off-topic and scored by the same encoder.
- ``labelled``: a few documents labelled relevant / not relevant (texts or ids); the threshold that
  maximises F1 on them (midway between neighbouring scores). Labels drawn at the corpus's own
  prevalence make that F1 the one that matters for counting.
- ``fixed``: a value given by the user.
- ``relevance``: not a cosine threshold: the memory's learned relevance model gives each document a probability of
  being about the topic, asked session by session (:mod:`retrieval.trends.model_relevance`).
- ``turns``: not a cosine threshold either: the learned per-turn topic model (:mod:`retrieval.trends.topic_turns`,
  trained on chats a person marked) gives each turn a probability of being about the topic, read from it and the
  turns around it; the count is their sum.

LLM confirmation (``confirm_stratified``) does not assume that relevance is monotone in similarity,
which the binary search of Temporal Augmented Retrieval (``binary_search_boundary``, kept for
comparison) does: candidates above a low floor are split into score strata, a random sample of each
stratum is judged by the LLM, and every unjudged document counts as its stratum's yes-rate. The
judged sample also measures monotonicity: the share of (higher-scored "no", lower-scored "yes") pairs
among pairs with different verdicts (0 = perfectly monotone, 0.5 = no relation).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from statistics import NormalDist

import numpy as np

from retrieval.llm.base import LLMBackend

# "relevance": the memory's learned relevance model decides instead of a cosine threshold
# (retrieval.trends.model_relevance; the Threshold then holds its probability cut, 0.5); "turns": the per-turn topic
# model (retrieval.trends.topic_turns), whose probabilities are summed; "auto": "turns" over a conversation whose
# encoder the model was trained with, else "mixture" (retrieval.trends.analysis.count_method)
THRESHOLD_METHODS = ("auto", "null", "mixture", "reference", "labelled", "fixed", "relevance", "turns")
DEFAULT_ALPHA = 0.01
MIXTURE_MIN = 20  # documents a mixture is fitted on at least (fewer: the null threshold)
MIXTURE_FIT_MAX = 50_000  # a larger corpus's mixture is fitted on a random sample of this many scores


@dataclass
class Threshold:
    """A decided cosine threshold and how it was reached (``details`` holds the method's statistics)."""

    value: float
    method: str
    details: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def null_threshold(scores: Sequence[float] | np.ndarray, alpha: float = DEFAULT_ALPHA) -> Threshold:
    """Threshold from the score distribution itself: ``median + z(1-alpha) * lower-half sigma``.

    ``scores``: (N,) cosines of the topic query against the documents (the whole corpus, not only the
    window, so that a short window does not make a noisy null).
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.size < 10:
        raise ValueError(f"the null threshold needs at least 10 scored documents, got {s.size}")
    if not 0 < alpha < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5), got {alpha}")
    median = float(np.median(s))
    lower = median - s[s < median]
    sigma = 1.4826 * float(np.median(lower)) if lower.size else 0.0
    z = NormalDist().inv_cdf(1 - alpha)
    value = median + z * sigma
    return Threshold(value, "null", {"median": median, "sigma": sigma, "alpha": alpha, "z": z, "n": int(s.size),
                                     "share_above": float((s >= value).mean())})


def mixture_threshold(scores: Sequence[float] | np.ndarray, seed: int = 0) -> Threshold:
    """Threshold from a two-component Gaussian mixture of the scores themselves: the off-topic bulk and the
    topic's tail. A document counts where the tail's posterior reaches 0.5: the lowest score above the bulk's mean
    at which it does. Never below the null threshold (alpha 0.01): a topic the corpus barely holds leaves no tail,
    and the mixture then splits the bulk itself (2 planted documents counted as 230 before this floor). Assumes, as
    the null does, that the topic is a minority; when the fitted tail holds half the documents or more, or there are
    fewer than :data:`MIXTURE_MIN` documents, the null threshold is used, and said."""
    from sklearn.mixture import GaussianMixture

    s = np.asarray(scores, dtype=np.float64)
    if s.size < MIXTURE_MIN:  # too few to fit two components: the null's threshold, said
        null = null_threshold(s)
        why = f"null: fewer than {MIXTURE_MIN} documents to fit a mixture"
        return Threshold(null.value, "mixture", {"n": int(s.size), "share_above": float((s >= null.value).mean()),
                                                 "fallback": why})
    fit_on = s if s.size <= MIXTURE_FIT_MAX else np.random.default_rng(seed).choice(s, MIXTURE_FIT_MAX, replace=False)
    mixture = GaussianMixture(2, random_state=seed, n_init=3).fit(fit_on.reshape(-1, 1))
    means, weights = mixture.means_.ravel(), mixture.weights_
    tail, bulk = int(np.argmax(means)), int(np.argmin(means))
    details = {"means": [float(means[bulk]), float(means[tail])], "tail_weight": float(weights[tail]),
               "n": int(s.size)}
    floor = null_threshold(s).value
    if weights[tail] >= 0.5 or tail == bulk:
        return Threshold(floor, "mixture", details | {"fallback": "null: the fitted tail is no minority",
                                                      "share_above": float((s >= floor).mean())})
    grid = np.linspace(means[bulk], s.max(), 2001)
    posterior = mixture.predict_proba(grid.reshape(-1, 1))[:, tail]
    above = grid[posterior >= 0.5]
    crossing = float(above[0]) if above.size else float(s.max()) + 1e-9
    value = max(crossing, floor)
    return Threshold(value, "mixture", details | {"crossing": crossing, "null_floor": floor,
                                                  "share_above": float((s >= value).mean())})


def reference_threshold(reference_scores: Sequence[float] | np.ndarray, alpha: float = DEFAULT_ALPHA) -> Threshold:
    """The ``1 - alpha`` quantile of the topic's cosines against off-topic reference documents (N,)."""
    s = np.asarray(reference_scores, dtype=np.float64)
    if s.size < 1 / alpha:
        raise ValueError(f"a reference threshold at alpha={alpha} needs at least {int(np.ceil(1 / alpha))} reference "
                         f"documents, got {s.size}")
    value = float(np.quantile(s, 1 - alpha, method="higher"))
    return Threshold(value, "reference", {"alpha": alpha, "n_reference": int(s.size)})


def labelled_threshold(positive: Sequence[float], negative: Sequence[float]) -> Threshold:
    """The threshold maximising F1 of "score >= t" on labelled scores (ties: the higher threshold)."""
    pos, neg = np.asarray(positive, dtype=np.float64), np.asarray(negative, dtype=np.float64)
    if pos.size == 0 or neg.size == 0:
        raise ValueError("a labelled threshold needs at least one relevant and one non-relevant example")
    values = np.unique(np.concatenate([pos, neg]))
    # Candidates: midway between neighbouring distinct scores, and just below the lowest positive.
    cands = np.concatenate([(values[:-1] + values[1:]) / 2, [values[-1] + 1e-6, values[0] - 1e-6]])
    best_t, best_f1 = float(cands[0]), -1.0
    for t in sorted(cands, reverse=True):
        tp, fp = int((pos >= t).sum()), int((neg >= t).sum())
        fn = pos.size - tp
        f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
        if f1 > best_f1:
            best_t, best_f1 = float(t), f1
    return Threshold(best_t, "labelled", {"f1": best_f1, "n_positive": int(pos.size), "n_negative": int(neg.size)})


# ---- LLM confirmation --------------------------------------------------------------------------------------
JUDGE_PROMPT = ("Is the following message about {topic}? Answer only yes or no.\n\n"
                "Message: \"{text}\"\n\nIs it about {topic}? Answer yes or no.")
Judge = Callable[[Sequence[str]], list[bool | None]]


def llm_judge(backend: LLMBackend, topic: str, max_chars: int = 400) -> Judge:
    """A judge over texts: one yes/no LLM call per text (batched); None where the call failed or was unclear."""

    def judge(texts: Sequence[str]) -> list[bool | None]:
        if not texts:
            return []
        prompts = [[{"role": "user", "content": JUDGE_PROMPT.format(topic=topic, text=t[:max_chars])}] for t in texts]
        try:
            results = backend.generate(prompts, max_new_tokens=3, temperature=0.0)
        except Exception:  # a backend that raises instead of returning ok=False: no verdicts, not a crash
            return [None] * len(texts)
        return [parse_yes_no(r.text) if r.ok else None for r in results]

    return judge


def parse_yes_no(text: str) -> bool | None:
    """True for an answer starting with yes, False for no, None otherwise."""
    m = re.match(r"\W*(yes|no)\b", text.strip().lower())
    return None if m is None else m.group(1) == "yes"


@dataclass
class Confirmation:
    """LLM-confirmed relevance: an expected relevance weight per candidate and what the judge said."""

    weights: dict  # id -> probability of relevance in [0, 1] (judged: 0/1; unjudged: its stratum's yes-rate)
    verdicts: dict  # id -> True / False (judged ids only; failed calls are left out)
    strata: list[dict]  # per stratum: score range, size, judged, yes-rate
    inversion_rate: float | None  # discordant pairs / pairs with different verdicts (1 - AUC)
    calls: int
    failed_calls: int
    method: str = "stratified"

    def to_dict(self) -> dict:
        return {"method": self.method, "strata": self.strata, "inversion_rate": self.inversion_rate,
                "calls": self.calls, "failed_calls": self.failed_calls,
                "verdicts": {str(k): v for k, v in self.verdicts.items()}}


def inversion_rate(scores: Sequence[float], verdicts: Sequence[bool]) -> float | None:
    """Share of (yes, no) pairs in which the "no" has the higher score; None without both verdicts."""
    yes = [s for s, v in zip(scores, verdicts) if v]
    no = [s for s, v in zip(scores, verdicts) if not v]
    if not yes or not no:
        return None
    discordant = sum((n > y) + 0.5 * (n == y) for y in yes for n in no)
    return discordant / (len(yes) * len(no))


def confirm_stratified(scores: dict, texts: dict, judge: Judge, floor: float, n_strata: int = 4,
                       per_stratum: int = 8, seed: int = 0) -> Confirmation:
    """Estimate relevance of every candidate with ``score >= floor`` from a stratified LLM sample.

    ``scores`` / ``texts``: id -> cosine / text. Strata are equal-count slices of the candidates by score;
    ``per_stratum`` random members of each are judged. Candidates below the floor get weight 0.
    """
    cands = sorted((i for i, s in scores.items() if s >= floor), key=lambda i: -scores[i])
    rng = random.Random(seed)
    weights, verdicts, strata, calls, failed = {}, {}, [], 0, 0
    bounds = np.linspace(0, len(cands), n_strata + 1).round().astype(int) if cands else []
    for a, b in zip(bounds[:-1], bounds[1:]):
        members = cands[a:b]
        if not members:
            continue
        picked = rng.sample(members, min(per_stratum, len(members)))
        said = judge([texts[i] for i in picked])
        calls += len(picked)
        failed += sum(v is None for v in said)
        judged = {i: v for i, v in zip(picked, said) if v is not None}
        verdicts.update(judged)
        # Without a single usable verdict the stratum keeps the threshold's decision (1: it is above the floor
        # only if the caller put the floor at the threshold; the caller sees rate=None and decides).
        rate = sum(judged.values()) / len(judged) if judged else None
        for i in members:
            weights[i] = float(judged[i]) if i in judged else (rate if rate is not None else 1.0)
        strata.append({"score_max": scores[members[0]], "score_min": scores[members[-1]], "size": len(members),
                       "judged": len(judged), "yes_rate": rate})
    ids = list(verdicts)
    inv = inversion_rate([scores[i] for i in ids], [verdicts[i] for i in ids])
    return Confirmation(weights, verdicts, strata, inv, calls, failed)


def binary_search_boundary(ranked: Sequence, texts: dict, judge: Judge) -> tuple[int, int]:
    """Temporal Augmented Retrieval's search: assuming relevance falls monotonically down ``ranked``
    (ids, best first), the number of relevant ids, found with about log2(n) judge calls.

    Returns (count, calls). A failed call counts as "no". Kept to compare with the stratified estimate.
    """
    lo, hi, calls = 0, len(ranked), 0  # invariant: ranked[:lo] relevant, ranked[hi:] not
    while lo < hi:
        mid = (lo + hi) // 2
        calls += 1
        if judge([texts[ranked[mid]]])[0]:
            lo = mid + 1
        else:
            hi = mid
    return lo, calls

