from retrieval.search.metrics import f_beta, hit_at_k, precision, ranking_metrics, recall, reciprocal_rank


def test_reciprocal_rank_and_hits():
    assert reciprocal_rank(["a", "b", "c"], {"b"}) == 0.5
    assert reciprocal_rank(["a", "b", "c"], {"z"}) == 0.0
    assert reciprocal_rank(["a", "b", "c"], {"c"}, k=2) == 0.0
    assert hit_at_k(["a", "b", "c"], {"c"}, 3) == 1.0 and hit_at_k(["a", "b", "c"], {"c"}, 2) == 0.0


def test_ranking_metrics_averages():
    m = ranking_metrics([(["a", "b"], {"a"}), (["a", "b"], {"b"}), (["a", "b"], {"x"})], ks=(1, 3))
    assert m == {"mrr@10": (1 + 0.5 + 0) / 3, "top1": 1 / 3, "top3": 2 / 3, "n": 3}


def test_recall_precision_f2():
    assert recall([1, 2, 3], [2, 3, 4, 5]) == 0.5
    assert precision([1, 2, 3, 4], [2]) == 0.25
    assert precision([], [1]) == 0.0
    p, r = 0.5, 1.0
    assert abs(f_beta(p, r, 2) - 5 * p * r / (4 * p + r)) < 1e-12
    assert f_beta(0, 0) == 0.0
