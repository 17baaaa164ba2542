import math

import torch
import torch.nn.functional as F

from models.losses import InBatchContrastiveLoss, in_batch_contrastive_loss, triplet_margin_loss


def test_in_batch_loss_matches_hand_computation():
    q = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    d = torch.tensor([[1.0, 0.0], [0.6, 0.8]])
    t = 0.5
    loss = in_batch_contrastive_loss(q, d, temperature=t)
    # query 0: scores [1, 0.6]/t, label 0; query 1: scores [0, 0.8]/t, label 1
    l0 = -math.log(math.exp(2.0) / (math.exp(2.0) + math.exp(1.2)))
    l1 = -math.log(math.exp(1.6) / (math.exp(0.0) + math.exp(1.6)))
    assert abs(loss.item() - (l0 + l1) / 2) < 1e-6


def test_perfect_separation_gives_near_zero_loss_and_extra_negatives_count():
    q = torch.eye(3)
    assert in_batch_contrastive_loss(q, q.clone(), temperature=0.01).item() < 1e-6
    hard = torch.tensor([[1.0, 0.0, 0.0]])  # an extra negative identical to query 0's positive
    loss = in_batch_contrastive_loss(q, torch.cat([q, hard]), temperature=0.01)
    assert abs(loss.item() - math.log(2) / 3) < 1e-4


def test_symmetric_form_averages_both_directions():
    torch.manual_seed(0)
    q, d = F.normalize(torch.randn(4, 8), dim=-1), F.normalize(torch.randn(4, 8), dim=-1)
    one = in_batch_contrastive_loss(q, d, 0.1)
    other = in_batch_contrastive_loss(d, q, 0.1)
    assert torch.allclose(in_batch_contrastive_loss(q, d, 0.1, symmetric=True), (one + other) / 2)


def test_same_table_documents_are_masked_not_penalised():
    q = torch.tensor([[1.0, 0.0], [1.0, 0.0]])
    d = torch.tensor([[1.0, 0.0], [1.0, 0.0]])  # two questions about the same table
    unmasked = in_batch_contrastive_loss(q, d, 0.1)
    masked = in_batch_contrastive_loss(q, d, 0.1, document_ids=torch.tensor([7, 7]))
    assert abs(unmasked.item() - math.log(2)) < 1e-6 and masked.item() < 1e-6


def test_module_without_distributed_equals_function():
    torch.manual_seed(1)
    q, d = torch.randn(3, 4), torch.randn(5, 4)
    assert torch.allclose(InBatchContrastiveLoss(0.2)(q, d), in_batch_contrastive_loss(q, d, 0.2))


def test_triplet_margin_loss_hand_values():
    a = torch.zeros(1, 2)
    p = torch.tensor([[1.0, 0.0]])  # distance 1
    n = torch.tensor([[[3.0, 0.0], [0.0, 1.5]]])  # distances 3 and 1.5
    # max(0, 1 - 3 + 1) = 0, max(0, 1 - 1.5 + 1) = 0.5
    assert abs(triplet_margin_loss(a, p, n, margin=1.0).item() - 0.25) < 1e-6
    assert torch.allclose(triplet_margin_loss(a, p, n[:, :1]),
                          F.triplet_margin_loss(a, p, n[:, 0], margin=1.0))
