"""Training losses for the dual encoders.

- In-batch contrastive loss (InfoNCE; Oord et al. 2018, as used by DPR, Karpukhin et al.
  2020, and cTBLS): every other document in the batch, across all processes when
  training distributed, is a negative.
- Triplet margin loss (Schroff et al. 2015; cTBLS's state tracker): anchor = dialogue
  history, positive = the answer cell, negatives = other cells, L2 distance, margin 1.0.
"""

from __future__ import annotations

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn


def gather_with_grad(t: torch.Tensor) -> tuple[torch.Tensor, int]:
    """Concatenate ``t`` (B, D) from every process, keeping the autograd graph.

    Returns the gathered (W*B, D) tensor and this process's offset into it. Unlike
    ``accelerator.gather``, gradients flow back to each process's own slice.
    """
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return t, 0
    import torch.distributed.nn  # noqa: F401  (registers the differentiable collectives)

    gathered = torch.distributed.nn.functional.all_gather(t)
    return torch.cat(gathered, dim=0), dist.get_rank() * t.shape[0]


def gather_plain(t: torch.Tensor) -> torch.Tensor:
    """Concatenate a tensor that needs no gradient (e.g. ids) from every process."""
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return t
    out = [torch.empty_like(t) for _ in range(dist.get_world_size())]
    dist.all_gather(out, t.contiguous())
    return torch.cat(out, dim=0)


def in_batch_contrastive_loss(queries: torch.Tensor, documents: torch.Tensor, temperature: float = 0.05,
                              symmetric: bool = False, offset: int = 0,
                              document_ids: torch.Tensor | None = None, all_queries: torch.Tensor | None = None,
                              query_offset: int = 0, all_query_ids: torch.Tensor | None = None) -> torch.Tensor:
    """InfoNCE over a batch: queries (B, D), documents (N, D) with N >= B.

    Query i's positive is document ``offset + i``; all other documents are negatives,
    except copies of the positive: with ``document_ids`` (N,), a document sharing the
    positive's id (another question about the same table) is masked out, not penalised.
    The one-directional form (query -> documents) is the paper's; the symmetric form
    also scores each positive document against the queries: ``queries`` themselves, or
    ``all_queries`` (M, D) when gathered from every process, in which this batch's queries
    start at ``query_offset`` and whose positives' ids are ``all_query_ids`` (M,).
    """
    scores = queries @ documents.T / temperature  # (B, N)
    labels = torch.arange(offset, offset + queries.shape[0], device=queries.device)
    if document_ids is not None:
        same = document_ids[labels].unsqueeze(1) == document_ids.unsqueeze(0)  # (B, N)
        same[torch.arange(len(labels)), labels] = False
        scores = scores.masked_fill(same, torch.finfo(scores.dtype).min)
    loss = F.cross_entropy(scores, labels)
    if symmetric:
        pool = queries if all_queries is None else all_queries  # (M, D)
        reverse = documents[labels] @ pool.T / temperature  # (B, M)
        reverse_labels = torch.arange(query_offset, query_offset + len(labels), device=queries.device)
        if document_ids is not None:
            pool_ids = document_ids[labels] if all_queries is None else all_query_ids
            if pool_ids is None:
                raise ValueError("gathered queries (all_queries) with document ids need their ids (all_query_ids)")
            same = document_ids[labels].unsqueeze(1) == pool_ids.unsqueeze(0)  # (B, M)
            same[torch.arange(len(labels)), reverse_labels] = False
            reverse = reverse.masked_fill(same, torch.finfo(reverse.dtype).min)
        loss = (loss + F.cross_entropy(reverse, reverse_labels)) / 2
    return loss


class InBatchContrastiveLoss(nn.Module):
    """In-batch contrastive loss on embeddings, optionally with negatives from all processes.

    Gradient scaling: each process averages over its own queries and DDP averages over
    processes, which equals the mean over the global batch because the gather's backward
    sums every process's gradient into the owner's slice.
    """

    def __init__(self, temperature: float = 0.05, symmetric: bool = False, gather_across_processes: bool = True):
        super().__init__()
        self.temperature = temperature
        self.symmetric = symmetric
        self.gather_across_processes = gather_across_processes

    def forward(self, queries: torch.Tensor, documents: torch.Tensor,
                document_ids: torch.Tensor | None = None) -> torch.Tensor:
        """queries (B, D), documents (B + E, D): positives first (document i for query i), then E
        extra negatives. Gathered, each process's block keeps that order, so the positives of
        this process start at rank * (B + E). The symmetric form gathers the queries too, so
        its reverse direction also sees every process's queries as negatives."""
        offset, query_offset, all_queries, all_query_ids = 0, 0, None, None
        if self.gather_across_processes:
            local = documents.shape[0]
            documents, offset = gather_with_grad(documents)
            if document_ids is not None:
                document_ids = gather_plain(document_ids)
            if self.symmetric and documents.shape[0] > local:
                all_queries, query_offset = gather_with_grad(queries)
                if document_ids is not None:  # each process's block of documents starts with its positives
                    all_query_ids = document_ids.view(-1, local)[:, :queries.shape[0]].flatten()
        return in_batch_contrastive_loss(queries, documents, self.temperature, self.symmetric, offset, document_ids,
                                         all_queries, query_offset, all_query_ids)


def triplet_margin_loss(anchors: torch.Tensor, positives: torch.Tensor, negatives: torch.Tensor,
                        margin: float = 1.0) -> torch.Tensor:
    """Mean of max(0, ||a - p|| - ||a - n|| + margin).

    anchors (B, D), positives (B, D), negatives (B, K, D): each anchor is compared with
    its K negatives, and the loss is averaged over all B*K triplets.
    """
    d_pos = (anchors - positives).norm(dim=-1, keepdim=True)  # (B, 1)
    d_neg = (anchors.unsqueeze(1) - negatives).norm(dim=-1)  # (B, K)
    return F.relu(d_pos - d_neg + margin).mean()
