"""DenseIndex at scale: exact scoring of small subsets, and the GPU option (skipped path on CPU)."""

from __future__ import annotations

import logging

import faiss
import numpy as np
import pytest

from retrieval.search.dense_index import DenseIndex


def unit(rng, n, d=16):
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.mark.parametrize("metric", ["ip", "l2"])
def test_exact_subset_path_equals_the_id_selector_on_flat(metric):
    rng = np.random.default_rng(0)
    docs, queries = unit(rng, 500), unit(rng, 4)
    ids = [f"r{i}" for i in range(500)]
    subset = ids[100:160] + ["missing"]
    exact = DenseIndex.build(docs, ids, metric=metric)
    selector = DenseIndex.build(docs, ids, metric=metric)
    selector.exact_subset_max = 0  # forces FAISS's IDSelectorBatch
    a, b = exact.search(queries, 7, subset=subset), selector.search(queries, 7, subset=subset)
    for ra, rb in zip(a, b):
        assert [i for i, _ in ra] == [i for i, _ in rb]
        np.testing.assert_allclose([s for _, s in ra], [s for _, s in rb], atol=1e-5)
    # k larger than the subset: every member, best first
    whole = exact.search(queries[:1], 100, subset=ids[:3])[0]
    assert sorted(i for i, _ in whole) == ids[:3] and [s for _, s in whole] == sorted((s for _, s in whole),
                                                                                       reverse=True)


@pytest.mark.parametrize("factory", ["HNSW16", "IVF8,Flat", "IVF8,PQ4"])
def test_exact_subset_path_finds_members_approximate_search_would_miss(factory):
    rng = np.random.default_rng(1)
    docs = unit(rng, 2000)
    ids = list(range(2000))
    index = DenseIndex.build(docs, ids, factory=factory)
    subset = ids[::97]  # 21 rows spread over all IVF lists
    got = index.search(docs[subset[:5]], 3, subset=subset)
    assert all(len(r) == 3 and {i for i, _ in r} <= set(subset) for r in got)
    if "PQ" not in factory:  # PQ reconstructs approximately; exact vectors rank themselves first
        assert [r[0][0] for r in got] == subset[:5]


def test_gpu_option_falls_back_to_cpu_without_a_gpu(tmp_path, caplog):
    if faiss.get_num_gpus() > 0:
        pytest.skip("a GPU is visible: test_gpu_index_matches_cpu covers it")
    rng = np.random.default_rng(2)
    docs = unit(rng, 50)
    with caplog.at_level(logging.WARNING, logger="retrieval.search.dense_index"):
        index = DenseIndex.build(docs, list(range(50)), gpu=True)
    assert not index.on_gpu and "no GPU" in caplog.text
    assert index.search(docs[3], 1)[0][0][0] == 3
    index.save(tmp_path / "ix")
    assert DenseIndex.load(tmp_path / "ix", gpu=True).search(docs[3], 1)[0][0][0] == 3


@pytest.mark.skipif(faiss.get_num_gpus() == 0, reason="no GPU visible to FAISS")
def test_gpu_index_matches_cpu(tmp_path):
    rng = np.random.default_rng(3)
    docs, queries = unit(rng, 1000, 64), unit(rng, 8, 64)
    cpu, gpu = DenseIndex.build(docs, list(range(1000))), DenseIndex.build(docs, list(range(1000)), gpu=True)
    assert gpu.on_gpu
    assert [[i for i, _ in r] for r in gpu.search(queries, 5)] == [[i for i, _ in r] for r in cpu.search(queries, 5)]
    gpu.save(tmp_path / "ix")
    assert len(DenseIndex.load(tmp_path / "ix")) == 1000


@pytest.mark.parametrize("factory", ["HNSW16", "IVF8,Flat"])
def test_large_subsets_go_through_the_selector_with_the_index_settings(factory):
    rng = np.random.default_rng(4)
    docs = unit(rng, 1000)
    index = DenseIndex.build(docs, list(range(1000)), factory=factory)
    index.exact_subset_max = 0  # every subset through FAISS's IDSelectorBatch
    if factory.startswith("IVF"):
        index.index.nprobe = 8  # all lists: the selector search is then exact
    subset = list(range(0, 1000, 3))
    got = index.search(docs[:6:3], 2, subset=subset)
    assert all({i for i, _ in r} <= set(subset) and len(r) == 2 for r in got)
    assert [r[0][0] for r in got] == [0, 3]
