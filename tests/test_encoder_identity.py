"""The encoder identity is cached between searches and follows every change of the weights."""

from __future__ import annotations

import torch

from models.dual_encoder import DualEncoder


def test_identity_is_cached_and_changes_with_the_weights(tiny_backbone):
    encoder = DualEncoder.from_backbone(tiny_backbone)
    first = encoder.identity
    assert encoder.identity == first and encoder._identity[1] == first
    embeddings = encoder.query_model.get_input_embeddings().weight
    with torch.no_grad():
        embeddings[0, 0] += 1.0  # an in-place step, as an optimizer makes
    changed = encoder.identity
    assert changed != first
    with torch.no_grad():
        embeddings[0, 0] -= 1.0
    assert encoder.identity == first  # same weights, same identity
    encoder.query_model.get_input_embeddings().weight.data[1, 1] += 2.0  # bypasses the version counter
    assert encoder.identity not in (first, changed)
    other = DualEncoder.from_backbone(tiny_backbone)
    other.query_model.load_state_dict({k: v + 0.5 for k, v in other.query_model.state_dict().items()})
    assert other.identity != first
