"""The relevance model scored by leave-conversations-out folds, for the evaluations' ``--folds K``: every open
conversation's questions (LoCoMo categories 1-4, Zyphra's time+content) are turned into examples once, a model is
fitted per fold on the other folds' conversations (its cut chosen by inner folds there), and each conversation is
then asked with the model that never saw it: not its QA, not its utterances, not its log.

    models = fold_relevance(5, encoder)                      # conversation key ("26") -> RelevanceModel
    memory = with_relevance(memory, models[conversation_key("conv-26")])
"""

from __future__ import annotations

import logging
from pathlib import Path

from retrieval.data.jsonio import DataError
from retrieval.data.paths import LOCOMO_FILE, ZYPHRA_DIR
from retrieval.memory.relevance.folds import assign_folds, fold_models
from retrieval.memory.relevance.model import RelevanceModel
from retrieval.memory.relevance.rerank import RELEVANCE_RULE, Reranker
from retrieval.memory.relevance_examples import conversation_key, examples
from retrieval.memory.temporal_memory import TemporalMemory

logger = logging.getLogger("eval.relevance_folds")


def fold_relevance(k: int, encoder, locomo: str | Path | None = LOCOMO_FILE, zyphra_dir: str | Path | None = ZYPHRA_DIR,
                   cache_dir: str | None = None) -> dict[str, RelevanceModel]:
    """Conversation key -> the relevance model of the fold that holds it out, from ``k`` folds over every conversation
    of both sources (None or '' leaves a source out; one named but missing is a DataError naming it)."""
    for name, where, there in (("--locomo", locomo, Path.is_file), ("--zyphra-dir", zyphra_dir, Path.is_dir)):
        if where and not there(Path(where)):
            raise DataError(f"{name} {where}: not found (pass {name} '' to train the folds without it)")
    by_conversation = examples(encoder, locomo or None, zyphra_dir or None, cache_dir)
    folds = assign_folds(list(by_conversation), k)
    logger.info("relevance folds: %s", {f: sorted(c for c, g in folds.items() if g == f) for f in range(k)})
    return fold_models(by_conversation, folds)


def with_relevance(memory: TemporalMemory, model: RelevanceModel, evidence_rule: str = RELEVANCE_RULE
                   ) -> TemporalMemory:
    """The same memory (table, planner, first stage) with ``model`` as its second stage, its when-answers from the
    ``evidence_rule`` (default: the model's best row)."""
    return TemporalMemory(memory.table, planner=memory.planner, rewrite=memory.rewrite,
                          llm_rewriter=memory.llm_rewriter, ranker=memory.ranker, fusion=memory.fusion,
                          cut=memory.cut, prior=memory.prior, evidence_rule=evidence_rule, folder=memory.folder,
                          relevance=Reranker(model))


def model_for(models: dict[str, RelevanceModel], name: str) -> RelevanceModel:
    """The held-out model of conversation ``name`` ("conv-26" or "26")."""
    key = conversation_key(name)
    if key not in models:
        raise KeyError(f"conversation {name!r} is in no fold (folds over {sorted(models)})")
    return models[key]
