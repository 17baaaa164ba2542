"""Training pairs and the collate function for dual-encoder training."""

from __future__ import annotations

import random

import torch

from models.dual_encoder import DualEncoder


class PairCollator:
    """Tokenises a batch of {"query", "document", "doc_id"} pairs for both towers.

    Pairs may carry hard negatives ({"negatives": [text], "negative_ids": [id]}); the
    documents are then the B positives first, then every pair's negatives, as the
    in-batch loss expects.
    """

    def __init__(self, encoder: DualEncoder):
        self.encoder = encoder

    def __call__(self, batch: list[dict]) -> dict:
        documents = [b["document"] for b in batch] + [n for b in batch for n in b.get("negatives", [])]
        doc_ids = [b["doc_id"] for b in batch] + [i for b in batch for i in b.get("negative_ids", [])]
        return {
            "query": self.encoder.tokenize([b["query"] for b in batch], "query"),
            "document": self.encoder.tokenize(documents, "document"),
            "doc_id": torch.tensor(doc_ids, dtype=torch.long),
        }


def cap(examples: list[dict], limit: int | None, seed: int) -> list[dict]:
    """A deterministic random subset of at most ``limit`` examples."""
    if limit is None or len(examples) <= limit:
        return examples
    return random.Random(seed).sample(examples, limit)
