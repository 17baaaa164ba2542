"""The scale benchmarks' pieces, and bench_index end to end on tiny random vectors (no encoder)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import numpy as np

from benchmarks import index as bench_index
from benchmarks.common import interleaved, summary_ms
from benchmarks.real_embeddings import synthetic_like
from benchmarks.temporal_scale import synthetic_log
from eval.report import print_table
from retrieval.data.conversation_log import Utterance
from retrieval.memory.conversation_table import utterance_frame


def unit(rng, n, d=16):
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_synthetic_vectors_are_unit_and_near_the_real_ones():
    rng = np.random.default_rng(0)
    real = unit(rng, 50, 64)
    fake = synthetic_like(real, 300, noise=0.3)
    assert fake.shape == (300, 64) and fake.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(fake, axis=1), 1, atol=1e-5)
    assert (fake @ real.T).max(axis=1).min() > 0.8  # each is a noisy copy of some real vector


def test_helpers():
    assert bench_index.nlist_for(10_000) == 128 and bench_index.nlist_for(1_000_000) == 1024
    assert bench_index.recall_at_k(np.array([[1, 2, 3]]), np.array([[3, 2, 9]]), 3) == 2 / 3
    times = interleaved({"a": lambda: None, "b": lambda: None}, 3)
    assert [len(t) for t in times.values()] == [3, 3] and summary_ms(times["a"])["n"] == 3
    assert "x" in print_table([{"x": 1.5, "y": "z"}])


def test_synthetic_log_repeats_sessions_over_years():
    t0 = datetime(2023, 5, 1, 10, tzinfo=UTC)
    logs = {"a": [Utterance(i, 1 + i // 3, "Ann" if i % 2 else "Bob", t0 + timedelta(days=i // 3, minutes=i), f"u{i}")
                  for i in range(9)]}
    emb = {"a": np.arange(9, dtype=np.float32)[:, None].repeat(4, 1)}
    utterances, vectors = synthetic_log(logs, emb, 40, years=2)
    assert len(utterances) == len(vectors) == 40
    assert [u.text for u in utterances[:4]] == ["u0", "u1", "u2", "u3"] and vectors[3, 0] == 3
    assert utterances[-1].timestamp <= t0 + timedelta(days=3) and utterances[0].timestamp < t0 - timedelta(days=300)
    frame = utterance_frame(utterances)
    assert frame["session"].nunique() == 14 and len(frame) == 40


def test_bench_index_runs_on_tiny_sizes(tmp_path, monkeypatch):
    rng = np.random.default_rng(1)
    corpus = {"documents": unit(rng, 300, 32), "queries": unit(rng, 20, 32), "encoder": "random"}
    monkeypatch.setattr(bench_index, "load_corpus", lambda: corpus)
    out = tmp_path / "index.json"
    report = bench_index.main(["--sizes", "200", "1000", "--factories", "Flat", "HNSW16", "IVF{nlist},Flat",
                               "--hnsw-max", "500", "--subset-sizes", "10", "100", "--subset-repeats", "3",
                               "--queries", "20", "--output", str(out)])
    written = json.loads(out.read_text())
    assert [(r["n"], r["factory"]) for r in written["indices"]] == [
        (200, "Flat"), (200, "HNSW16"), (200, "IVF16,Flat"), (1000, "Flat"), (1000, "IVF32,Flat")]
    assert all(r["recall@10"] is not None and 0 <= r["recall@10"] <= 1 for r in report["indices"])
    assert written["indices"][0]["recall@10"] == 1.0
    flat_subsets = [r for r in written["subsets"] if r["factory"] == "Flat"]
    assert len(flat_subsets) == 4 and all(r["default_recall@10"] == 1.0 for r in flat_subsets)
    assert out.with_suffix(".png").is_file()


def test_synthetic_log_arrives_in_time_order_and_fills_a_living_memory(tmp_path, tiny_backbone):
    from benchmarks.live_scale import fill_memory, folder_mb, measure_appends, reopen, time_ordered
    from models.dual_encoder import DualEncoder

    t0 = datetime(2023, 5, 1, 10, tzinfo=UTC)
    logs = {"a": [Utterance(i, 1 + i // 3, "Ann" if i % 2 else "Bob", t0 + timedelta(days=i // 3, hours=5 * (i % 3)),
                            f"u{i}") for i in range(9)]}
    utterances, _ = synthetic_log(logs, {"a": np.zeros((9, 4), dtype=np.float32)}, 60, years=0.02)
    stamps, sessions = [u.timestamp for u in utterances], [u.session for u in utterances]
    assert stamps == sorted(stamps) and sessions == sorted(sessions)  # sessions never overlap
    encoder = DualEncoder.from_backbone(tiny_backbone)
    emb = unit(np.random.default_rng(0), 60, encoder.dim)
    utterances, emb = time_ordered(utterances, emb)
    assert fill_memory(tmp_path / "m", utterances, emb, encoder)["import_s"] >= 0
    memory, opened = reopen(tmp_path / "m", encoder)
    assert len(memory.table) == 60 and opened["reopen_s"] > 0 and folder_mb(tmp_path / "m")["total"] > 0
    np.testing.assert_allclose(memory.table.index.index.reconstruct(7), emb[7], rtol=1e-6)
    appended = measure_appends(memory, ["hello there"], 4)
    assert len(memory.table) == 64 and appended["append_median_ms"] > 0 and appended["append_fsync_median_ms"] > 0


def test_a_missing_optional_piece_is_a_skipped_row_with_its_reason(monkeypatch):
    import importlib.util

    from benchmarks import encode

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "onnx" else real(name, *a))
    why = encode.onnx_encoder(32, 1)
    assert isinstance(why, str) and "needs onnx" in why and ".[onnx]" in why
