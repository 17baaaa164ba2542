"""Training pairs and the collate function for dual-encoder training."""

from __future__ import annotations

import random

import torch

from models.dual_encoder import DualEncoder


class PairCollator:
    """Tokenises a batch of {"query", "document", "doc_id"} pairs for both towers."""

    def __init__(self, encoder: DualEncoder):
        self.encoder = encoder

    def __call__(self, batch: list[dict]) -> dict:
        return {
            "query": self.encoder.tokenize([b["query"] for b in batch], "query"),
            "document": self.encoder.tokenize([b["document"] for b in batch], "document"),
            "doc_id": torch.tensor([b["doc_id"] for b in batch], dtype=torch.long),
        }


def cap(examples: list[dict], limit: int | None, seed: int) -> list[dict]:
    """A deterministic random subset of at most ``limit`` examples."""
    if limit is None or len(examples) <= limit:
        return examples
    return random.Random(seed).sample(examples, limit)
