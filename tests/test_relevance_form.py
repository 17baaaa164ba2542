"""The relevance model's form: its inputs at degree 2 (every product of two features), and the choice of degree and
L2 strength by the inner folds' log loss."""

from __future__ import annotations

import numpy as np
import pytest

from retrieval.data.jsonio import DataError
from retrieval.memory.relevance.example import Example
from retrieval.memory.relevance.features import FEATURES
from retrieval.memory.relevance.folds import fit_with_cut, log_loss
from retrieval.memory.relevance.model import RelevanceModel, expanded, input_names


def test_degree_two_adds_every_product_of_two_features_once():
    x = np.array([[1.0, 2.0, 3.0]])
    assert expanded(x, 1) is x
    assert expanded(x, 2).tolist() == [[1, 2, 3, 1, 2, 3, 4, 6, 9]]
    assert input_names(("a", "b", "c"), 2)[3:] == ["a*a", "a*b", "a*c", "b*b", "b*c", "c*c"]
    assert len(input_names(FEATURES, 2)) == len(FEATURES) * (len(FEATURES) + 3) // 2


def crossed(conversation: str, n: int = 40, seed: int = 0) -> list[Example]:
    """Questions whose relevant candidate is the one where the first two features agree in sign: a pattern no
    weighting of the features alone separates (an XOR), one product does."""
    rng = np.random.default_rng(seed)
    out = []
    for q in range(n):
        x = rng.normal(size=(6, len(FEATURES)))
        x[:, 0], x[:, 1] = np.abs(x[:, 0]) + 0.5, np.abs(x[:, 1]) + 0.5
        x[1:, 1] *= -1  # the others disagree in sign ...
        flip = rng.random(6) < 0.5
        x[flip, 0] *= -1  # ... whichever sign the first feature has
        x[flip, 1] *= -1
        out.append(Example(conversation, "test", f"q{q}", list(range(10 * q, 10 * q + 6)), x, frozenset({10 * q}),
                           3, cut=True, asks_when=False))
    return out


def test_a_product_of_features_is_learned_where_the_features_alone_cannot_rank():
    train = [e for c in "abcd" for e in crossed(c, seed=ord(c))]
    test = crossed("e", seed=99)
    x, y = np.concatenate([e.x for e in train]), np.concatenate([e.y for e in train])
    hit = {}
    for degree in (1, 2):
        model = RelevanceModel.fit(x, y, c=1.0, degree=degree)
        hit[degree] = np.mean([int(np.argmax(model.probabilities(e.x))) == 0 for e in test])
    assert hit[2] > 0.9 and hit[1] < 0.5


def test_the_inner_folds_choose_the_form_with_the_lower_log_loss(tmp_path):
    examples = [e for c in "abcd" for e in crossed(c, n=15, seed=ord(c))]
    model = fit_with_cut(examples, inner_folds=2, cs=(1.0,), degrees=(1, 2))
    losses = model.training["inner_log_loss_by_form"]
    assert set(losses) == {"degree 1, C 1.0", "degree 2, C 1.0"}
    assert model.degree == 2 and losses["degree 2, C 1.0"] < losses["degree 1, C 1.0"]
    again = RelevanceModel.load(model.save(tmp_path / "m"))
    assert again.degree == 2 and np.allclose(again.probabilities(examples[0].x), model.probabilities(examples[0].x))
    sure = [np.where(e.y > 0, 0.99, 0.01) for e in examples]
    assert log_loss(examples, sure) == pytest.approx(-np.log(0.99))
    with pytest.raises(DataError, match="at least one"):
        fit_with_cut(examples, inner_folds=2, cs=())
    with pytest.raises(DataError, match=r"above 0 .* got cs \[0\.0\], degrees \[3\]"):
        fit_with_cut(examples, inner_folds=2, cs=(0.0,), degrees=(3,))


def test_a_model_of_another_degree_or_width_is_refused():
    n = len(FEATURES)
    with pytest.raises(DataError, match="degree 3"):
        RelevanceModel([0.0] * n, [1.0] * n, [0.0] * n, 0.0, 0.5, degree=3)
    with pytest.raises(DataError, match=r"must each have \d+ values \(degree 2\)"):
        RelevanceModel([0.0] * n, [1.0] * n, [0.0] * n, 0.0, 0.5, degree=2)


def test_forms_within_a_tie_go_to_the_simpler():
    examples = [e for c in "abcd" for e in crossed(c, n=15, seed=ord(c))]
    model = fit_with_cut(examples, inner_folds=2, cs=(1.0 + 1e-9, 1.0), degrees=(2,))
    assert model.training["c"] == 1.0  # the same loss to float noise: the stronger L2 wins
