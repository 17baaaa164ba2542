import numpy as np
import pytest

from retrieval.search.bm25 import BM25Retriever
from retrieval.search.dense_index import DenseIndex, EncoderMismatchError
from retrieval.search.fusion import absolute_cut, min_max_fusion, reciprocal_rank_fusion, spread_cut


def unit(rng, n, d=16):
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_search_matches_brute_force_and_subset():
    rng = np.random.default_rng(0)
    docs, queries = unit(rng, 200), unit(rng, 5)
    ids = [f"d{i}" for i in range(200)]
    index = DenseIndex.build(docs, ids)
    results = index.search(queries, 5)
    for q, res in zip(queries, results):
        expected = np.argsort(-(docs @ q))[:5]
        assert [i for i, _ in res] == [ids[j] for j in expected]
    subset = ids[50:60]
    for q, res in zip(queries, index.search(queries, 3, subset=subset)):
        sub = np.argsort(-(docs[50:60] @ q))[:3]
        assert [i for i, _ in res] == [ids[50 + j] for j in sub]
    assert index.search(queries, 3, subset=["nope"]) == [[]] * 5


@pytest.mark.parametrize("factory", ["Flat", "HNSW16", "IVF4,Flat"])
def test_factories_save_load_and_ids(tmp_path, factory):
    rng = np.random.default_rng(1)
    docs = unit(rng, 300)
    ids = [("table", i) for i in range(300)]
    index = DenseIndex.build(docs, ids, factory=factory, encoder_id="enc-a")
    index.save(tmp_path / "ix")
    back = DenseIndex.load(tmp_path / "ix", encoder_id="enc-a")
    assert len(back) == 300 and back.ids == ids
    assert back.search(docs[:3], 1) == index.search(docs[:3], 1)
    assert back.search(docs[7], 1)[0][0][0] == ("table", 7) or factory != "Flat"


def test_encoder_mismatch_and_duplicate_ids(tmp_path):
    rng = np.random.default_rng(2)
    index = DenseIndex.build(unit(rng, 4), [1, 2, 3, 4], encoder_id="enc-a")
    with pytest.raises(EncoderMismatchError, match="enc-a.*enc-b"):
        index.search(unit(rng, 1), 1, encoder_id="enc-b")
    with pytest.raises(ValueError, match="already"):
        index.add(unit(rng, 1), [3])
    index.save(tmp_path / "ix")
    (tmp_path / "ix" / "index.json").write_text(
        (tmp_path / "ix" / "index.json").read_text().replace("[1, 2, 3, 4]", "[1, 2, 3]"))
    with pytest.raises(ValueError, match="3 ids stored for 4 vectors"):
        DenseIndex.load(tmp_path / "ix")


def test_bm25_ranks_and_subsets():
    bm = BM25Retriever(["the cat sat on the mat", "dogs bark loudly", "a cat and a dog"], ["a", "b", "c"])
    assert bm.search(["cat mat"], 2)[0][0][0] == "a"
    assert [i for i, _ in bm.search(["cat"], 3, subset=["b", "c"])[0]][0] == "c"
    assert [s for _, s in bm.search(["the of ?"], 3)[0]] == [0.0, 0.0, 0.0]  # stop words only: no match, no crash


def test_rrf():
    fused = reciprocal_rank_fusion([[("a", 9), ("b", 8)], [("b", 1), ("c", 0)]], k=0)
    assert fused[0][0] == "b" and {i for i, _ in fused} == {"a", "b", "c"}
    # a boost moves a row past one a rank ahead of it, not past one that two rankers put 40 places ahead
    close = reciprocal_rank_fusion([[("a", 0), ("c", 0)], [("a", 0), ("c", 0)]], boost={"c"})
    assert [i for i, _ in close] == ["c", "a"]
    far = [("a", 0)] + [(f"x{j}", 0) for j in range(39)] + [("c", 0)]
    assert reciprocal_rank_fusion([far, far], boost={"c"})[0][0] == "a"


def test_min_max_fusion_weighs_how_clear_a_winner_is():
    # one ranker sure of "a" (a far ahead), another barely preferring "b": by rank a tie, by score "a"
    sure, unsure = [("a", 10.0), ("b", 1.0), ("c", 0.0)], [("b", 0.51), ("a", 0.50), ("c", 0.0)]
    fused = min_max_fusion([sure, unsure])
    assert [i for i, _ in fused] == ["a", "b", "c"]
    assert dict(fused) == pytest.approx({"a": 1.0 + 0.50 / 0.51, "b": 0.1 + 1.0, "c": 0.0})
    # a list whose scores are all equal adds nothing; an id missing from a list gets its 0; the prior is 0.3
    flat = [("c", 0.0), ("a", 0.0)]
    assert dict(min_max_fusion([sure, flat], boost={"c"})) == pytest.approx({"a": 1.0, "b": 0.1, "c": 0.3})
    assert min_max_fusion([sure, unsure], top=1) == fused[:1] and min_max_fusion([[], sure]) == min_max_fusion([sure])


def test_spread_cut_is_relative_to_the_lists_own_spread():
    fused = [("a", 3.0), ("b", 2.5), ("c", 2.0), ("d", 1.0)]  # spread 2
    assert spread_cut(fused, 0.0) == fused[:1] and spread_cut(fused, None) == fused == spread_cut(fused, 1.0)
    assert spread_cut(fused, 0.25) == fused[:2] and spread_cut(fused, 0.5) == fused[:3]
    scaled = [(i, 10 * s) for i, s in fused]  # the same ranking in other units: the same rows
    assert [i for i, _ in spread_cut(scaled, 0.5)] == ["a", "b", "c"]
    assert spread_cut([("a", 1.0), ("b", 1.0)], 0.0) == [("a", 1.0), ("b", 1.0)] and spread_cut([], 0.3) == []


def test_absolute_cut_is_in_units_of_one_rankers_top():
    fused = [("a", 3.0), ("b", 2.5), ("c", 2.0), ("d", 1.0)]
    assert absolute_cut(fused, 0.5) == fused[:2] and absolute_cut(fused, 1.0, unit=0.5) == fused[:2]
    assert absolute_cut(fused, None) == fused and absolute_cut(fused, 0.0) == fused[:1] and absolute_cut([], 1) == []
