"""What a memory command's ``--relevance`` takes (no heavy imports: the commands' argument classes read it at start):
``auto`` (the default: the packaged model for memories of the encoder it was trained with, else the hand-tuned
ranking), ``packaged``, ``none`` (the hand-tuned ranking), or a model folder. :func:`~retrieval.memory.relevance.rerank.
second_stage` turns a choice into a memory's second stage.

The packaged model is trained on every open conversation (LoCoMo and Zyphra) by ``python -m train.memory_relevance
--config configs/memory_relevance.yaml --package-dir retrieval/memory/relevance/packaged``; figures for conversations
it never saw come from the evaluations' folds.
"""

from __future__ import annotations

from pathlib import Path

AUTO, PACKAGED, NO_MODEL = "auto", "packaged", "none"
CHOICES = (AUTO, PACKAGED, NO_MODEL)
PACKAGED_MODEL = Path(__file__).with_name("packaged")
# every memory command's --relevance says the same
RELEVANCE_HELP = ("the relevance model that re-ranks and cuts the content ranking's candidates: auto (the packaged "
                  "one, for the packaged encoder), packaged, none (the hand-tuned margin cut) or a model folder")
