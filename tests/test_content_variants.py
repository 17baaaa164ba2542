"""experiments.content_variants: MaxP on a hand-made sentence table, and the command on tiny data."""

from __future__ import annotations

import json

import numpy as np

from experiments import content_variants
from experiments.content_variants import CUT_VARIANTS, VARIANTS
from tests.test_content_proxy import locomo_file


def test_maxp_scores_a_row_by_its_best_sentence():
    lists = content_variants.VariantLists.__new__(content_variants.VariantLists)
    lists.ids = [10, 11, 12]
    lists.owner = np.array([0, 0, 1, 2, 2])  # row 10 has two sentences, 11 one, 12 two
    lists.sentence_emb = np.array([[1, 0], [0, 1], [0.6, 0.8], [0.8, 0.6], [-1, 0]], dtype=float)
    assert lists.maxp(np.array([0.0, 1.0]), np.array([0, 1, 2])).tolist() == [1.0, 0.8, 0.6]
    assert lists.maxp(np.array([1.0, 0.0]), np.array([2, 0])).tolist() == [0.8, 1.0]


def test_other_cuts_keep_the_top_n_or_what_the_dense_lists_say():
    dense_text, dense_turn = [(1, 0.9), (2, 0.8), (3, 0.1)], [(2, 0.7), (1, 0.6), (3, 0.2)]
    q = content_variants.ProxyQuestion("conv-x", 4, frozenset({2}), [dense_text, dense_turn, [], []], [])
    fused = [(1, 3.0), (2, 2.9), (3, 0.0)]
    assert content_variants.other_cut("pool-or-top-2", 10, 1.5)(q, fused, 0.0) == fused[:2]  # the best, and the 2nd
    assert content_variants.other_cut("pool-or-top-2", 10, 1.5)(q, fused, 1.0) == fused
    dense_cut = content_variants.other_cut("dense-pool", 10, 1.5)  # dense fusion: 1 -> 1.8, 2 -> 1.875, 3 -> 0
    assert dense_cut(q, fused, 0.0) == [(2, 2.9)]  # the dense lists' best, whatever the fused order
    assert dense_cut(q, fused, 0.1) == fused[:2] and dense_cut(q, fused, None) == fused


def test_command_scores_every_variant_as_the_proxy_does(tmp_path, tiny_backbone, capsys):
    out = tmp_path / "variants.json"
    code = content_variants.main(["--locomo", str(locomo_file(tmp_path)), "--encoder", tiny_backbone,
                                  "--cache-dir", str(tmp_path / "cache"), "--dev-samples", "conv-a",
                                  "--cuts", "pool", "spread", "--output", str(out)])
    assert code == 0 and "maxp" in capsys.readouterr().out
    report = json.loads(out.read_text())
    assert [(c["variant"], c["cut"]) for c in report["candidates"]] == [
        *((v, c) for v in VARIANTS for c in ("pool", "spread")), *(("ranking", c) for c in CUT_VARIANTS)]
    for cand in report["candidates"]:
        dev = cand["development"]
        assert dev["n_all"] == 3 and dev["n_single"] == 2 and cand["held_out"]["n_all"] == 3
        assert cand["margin"] == min(float(m) for m, g in dev["grid_single"].items() if g["recall"] >= 90)
    assert list(tmp_path.joinpath("cache").glob("docs-*.npy"))  # sentences cached beside the utterances


def test_command_errors_name_the_input(tmp_path, tiny_backbone, capsys):
    tiny = ["--encoder", tiny_backbone, "--cache-dir", ""]
    assert content_variants.main(["--locomo", str(locomo_file(tmp_path)), "--dev-samples", "conv-z", *tiny]) == 2
    assert "conv-z" in capsys.readouterr().err
