"""What the response commands share: generating many prompts with an LLM backend (each distinct prompt once, in
chunks, a failing backend recorded per prompt) and scoring the texts with ROUGE. Library code: commands import it,
it imports no command (:mod:`eval.response`, :mod:`eval.response_sqa`, :mod:`eval.answer_llm`,
:mod:`eval.locomo_answers`)."""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Sequence

import numpy as np
from rouge_score import rouge_scorer

from retrieval.llm import GenerationResult, LLMBackend

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")
logger = logging.getLogger(__name__)


@functools.cache
def _scorer() -> rouge_scorer.RougeScorer:
    return rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=True)


def rouge_scores(predictions: Sequence[str], references: Sequence[str]) -> dict[str, float]:
    """Mean ROUGE-1/2/L precision, recall and F1 (keys like ``rouge1_p``) of predictions against references."""
    scorer = _scorer()
    sums = {f"{r}_{m}": [] for r in ROUGE_TYPES for m in "prf"}
    for pred, ref in zip(predictions, references, strict=True):
        scores = scorer.score(ref, pred)
        for r in ROUGE_TYPES:
            sums[f"{r}_p"].append(scores[r].precision)
            sums[f"{r}_r"].append(scores[r].recall)
            sums[f"{r}_f"].append(scores[r].fmeasure)
    return {k: float(np.mean(v)) if v else 0.0 for k, v in sums.items()}


def generate_all(llm: LLMBackend, prompts: Sequence[list[dict]], *, max_new_tokens: int, temperature: float,
                 chunk: int = 16) -> list[GenerationResult]:
    """Answers to ``prompts``, each distinct prompt generated once, in chunks so progress (and the cache) advance.

    A backend that raises is recorded as a failure of that chunk, never lost to the run.
    """
    keys = [json.dumps(p, sort_keys=True) for p in prompts]
    unique = sorted(dict.fromkeys(keys), key=len)  # similar lengths together pad less
    results: dict[str, GenerationResult] = {}
    started = time.perf_counter()
    for start in range(0, len(unique), chunk):
        part = unique[start:start + chunk]
        try:
            answers = llm.generate([json.loads(k) for k in part], max_new_tokens=max_new_tokens,
                                   temperature=temperature)
        except Exception as exc:  # a backend bug must not lose the run: record it per prompt
            answers = [GenerationResult("", False, f"{type(exc).__name__}: {exc}", 0.0, getattr(llm, "name", "?"),
                                        getattr(llm, "identity", "?")) for _ in part]
        results.update(zip(part, answers))
        done = start + len(part)
        logger.info("generated %d/%d distinct prompts (%.0f s, %d failed so far)", done, len(unique),
                    time.perf_counter() - started, sum(not r.ok for r in results.values()))
    return [results[k] for k in keys]
