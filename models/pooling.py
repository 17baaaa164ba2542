"""Pooling of token embeddings into one vector per text."""

from __future__ import annotations

import torch

POOLING_MODES = ("mean", "cls", "max")


def pool(token_embeddings: torch.Tensor, attention_mask: torch.Tensor, mode: str = "mean") -> torch.Tensor:
    """Pool (B, T, D) token embeddings into (B, D), ignoring padded positions."""
    if mode == "cls":
        return token_embeddings[:, 0]
    mask = attention_mask.unsqueeze(-1).to(token_embeddings.dtype)  # (B, T, 1)
    if mode == "mean":
        summed = (token_embeddings * mask).sum(dim=1)  # (B, D)
        return summed / mask.sum(dim=1).clamp(min=1e-9)
    if mode == "max":
        return token_embeddings.masked_fill(mask == 0, torch.finfo(token_embeddings.dtype).min).max(dim=1).values
    raise ValueError(f"unknown pooling mode {mode!r}; choose from {POOLING_MODES}")
