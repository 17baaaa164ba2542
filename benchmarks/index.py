"""Large indices: build time, memory, queries/s and recall@10 against exact search; subset search.

    python -m benchmarks.index --output runs/bench/index.json                 # 10k, 100k, 1M
    python -m benchmarks.index --sizes 10000 100000 --factories Flat HNSW32 "IVF{nlist},PQ48"

Vectors: our encoder's real encodings (Zyphra utterances and OTT-QA tables, see
:mod:`benchmarks.real_embeddings`) up to the size we have, then synthetic vectors of the same dimension
near them. Queries: OTT-QA questions. Recall@10 is against a flat (exact) index at the same size.
``{nlist}`` in a factory string becomes a power of two near sqrt(N); IVF indices are trained on a
sample of 40 * nlist vectors (FAISS asks for 39 a centroid). HNSW and IVF-PQ are built only up to
``--hnsw-max`` / ``--pq-max`` vectors (by default 100k: at 1M, flat and IVF-flat only, since builds
take long on two shared cores).

Subset search (one table's cells, a conversation's filtered rows) is timed at every size, one
query per call as the pipelines ask: ``DenseIndex.search(subset=...)`` by its default path (exact
scoring of a small subset's vectors), by FAISS's ``IDSelectorBatch`` alone, and numpy scoring of
the subset's rows (the baseline).
"""

from __future__ import annotations

import gc
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import faiss
import numpy as np

from benchmarks.common import (
    RunArguments,
    command_line,
    interleaved,
    limit_threads,
    load_average,
    machine,
    plot_path,
    pyplot,
    rss_mb,
    summary_ms,
    write_report,
)
from benchmarks.real_embeddings import load_corpus, synthetic_like
from eval.report import print_table
from retrieval.atomic import save_with
from retrieval.config import option, parse_config, write_config
from retrieval.search.dense_index import DenseIndex

DEFAULT_FACTORIES = ["Flat", "HNSW32", "IVF{nlist},Flat", "IVF{nlist},PQ48"]


def nlist_for(n: int) -> int:
    return max(16, 2 ** round(math.log2(math.sqrt(n))))


def vectors_of_size(real: np.ndarray, n: int, seed: int = 0) -> tuple[np.ndarray, str]:
    if n <= len(real):
        return real[np.random.default_rng(seed).permutation(len(real))[:n]], "real"
    return np.concatenate([real, synthetic_like(real, n - len(real), seed=seed)]), f"{len(real)} real + synthetic"


def set_search_params(index: faiss.Index, nprobe: int, ef_search: int) -> None:
    ivf = faiss.try_extract_index_ivf(index)
    if ivf is not None:
        ivf.nprobe = nprobe
    if hasattr(index, "hnsw"):
        index.hnsw.efSearch = ef_search


def build(vectors: np.ndarray, factory: str, seed: int = 0) -> tuple[DenseIndex, float, float]:
    """(index, build seconds, RSS growth in MB); IVF trained on a sample of 40 * nlist vectors."""
    gc.collect()
    before, start = rss_mb(), time.perf_counter()
    index = DenseIndex(vectors.shape[1], factory)
    if not index.index.is_trained:
        ivf = faiss.try_extract_index_ivf(index.index)
        size = min(len(vectors), 40 * ivf.nlist) if ivf is not None else len(vectors)
        index.index.train(vectors[np.random.default_rng(seed).permutation(len(vectors))[:size]])
    index.add(vectors, range(len(vectors)))
    return index, time.perf_counter() - start, rss_mb() - before


def recall_at_k(found: np.ndarray, exact: np.ndarray, k: int) -> float:
    return float(np.mean([len(set(f[:k]) & set(e[:k])) / k for f, e in zip(found, exact)]))


def bench_size(n: int, real: np.ndarray, queries: np.ndarray, factories: Sequence[str], args) -> tuple[list, list]:
    vectors, source = vectors_of_size(real, n, args.seed)
    rows, subset_rows = [], []
    exact_ids = None
    for template in factories:
        factory = template.format(nlist=nlist_for(n))
        if factory.startswith("HNSW") and n > args.hnsw_max or "PQ" in factory and n > args.pq_max:
            print(f"skip {factory} at {n}: above --hnsw-max / --pq-max", flush=True)
            continue
        index, build_s, mem_mb = build(vectors, factory, args.seed)
        set_search_params(index.index, args.nprobe, args.ef_search)
        start = time.perf_counter()
        _, found = index.index.search(queries, args.k)
        qps = len(queries) / (time.perf_counter() - start)
        if factory == "Flat":
            exact_ids = found
        row = {"n": n, "factory": factory, "vectors": source, "build_s": round(build_s, 2),
               "memory_mb": round(mem_mb, 1), "qps": round(qps, 1),
               f"recall@{args.k}": round(recall_at_k(found, exact_ids, args.k), 4) if exact_ids is not None else None,
               "load": load_average()[0]}
        rows.append(row)
        print_table([row])
        if factory == "Flat" or factory.startswith("IVF"):
            subset_rows += bench_subsets(index, vectors, queries, n, factory, args)
        del index
        gc.collect()
    return rows, subset_rows


def bench_subsets(index: DenseIndex, vectors: np.ndarray, queries: np.ndarray, n: int, factory: str,
                  args) -> list[dict]:
    """Latency of one-query subset searches: default path, FAISS selector, numpy over the subset's rows."""
    rng = np.random.default_rng(args.seed)
    out = []
    for size in [s for s in args.subset_sizes if s < n]:
        subsets = [rng.choice(n, size, replace=False) for _ in range(args.subset_repeats)]
        qs = queries[rng.integers(0, len(queries), args.subset_repeats)]
        state = {}

        def default():
            i = state["i"]
            return index.search(qs[i], args.k, subset=subsets[i].tolist())

        def selector():
            i = state["i"]
            saved, index.exact_subset_max = index.exact_subset_max, 0
            try:
                return index.search(qs[i], args.k, subset=subsets[i].tolist())
            finally:
                index.exact_subset_max = saved

        def numpy_rows():
            i = state["i"]
            rows = subsets[i]
            scores = vectors[rows] @ qs[i]
            top = np.argpartition(-scores, min(args.k, len(rows) - 1))[:args.k]
            return rows[top[np.argsort(-scores[top])]]

        methods = {"default": default, "faiss_selector": selector, "numpy_subset": numpy_rows}
        times: dict[str, list[float]] = {m: [] for m in methods}
        agree, selector_agree = [], []
        for i in range(args.subset_repeats):
            state["i"] = i
            for name, seconds in interleaved(methods, 1).items():
                times[name] += seconds
            want = set(numpy_rows().tolist())
            agree.append(len({r for r, _ in default()[0]} & want) / max(1, len(want)))
            selector_agree.append(len({r for r, _ in selector()[0]} & want) / max(1, len(want)))
        # min: the work itself; median: what a call costs on this machine now (sub-millisecond calls on
        # an oversubscribed machine are often preempted mid-call, which adds tens of ms at random)
        row = {"n": n, "factory": factory, "subset": size,
               **{f"{m}_min_ms": round(1000 * min(t), 3) for m, t in times.items()},
               **{f"{m}_median_ms": summary_ms(t)["median_ms"] for m, t in times.items()},
               f"default_recall@{args.k}": round(float(np.mean(agree)), 4),
               f"selector_recall@{args.k}": round(float(np.mean(selector_agree)), 4), "load": load_average()[0]}
        out.append(row)
        print_table([row])
    return out


def plot(rows: list[dict], subset_rows: list[dict], path) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.5))
    for factory in sorted({r["factory"].replace(str(nlist_for(r["n"])), "{nlist}") for r in rows}):
        mine = [r for r in rows if r["factory"].replace(str(nlist_for(r["n"])), "{nlist}") == factory]
        ns = [r["n"] for r in mine]
        axes[0].plot(ns, [r["qps"] for r in mine], marker="o", label=factory)
        axes[1].plot(ns, [r["build_s"] for r in mine], marker="o", label=factory)
    for ax, title in zip(axes[:2], ("queries / s (batch)", "build time (s)")):
        ax.set(xscale="log", yscale="log", xlabel="vectors", title=title)
        ax.legend(fontsize=7)
    flat = [r for r in subset_rows if r["factory"] == "Flat" and r["n"] == max(x["n"] for x in subset_rows)]
    for method in ("default", "faiss_selector", "numpy_subset"):
        axes[2].plot([r["subset"] for r in flat], [r[f"{method}_min_ms"] for r in flat], marker="o", label=method)
    axes[2].set(xscale="log", yscale="log", xlabel="subset size", ylabel="ms / query (min of repeats)",
                title=f"subset search, Flat, {flat[0]['n'] if flat else ''} vectors")
    axes[2].legend(fontsize=7)
    fig.tight_layout()
    save_with(lambda partial: fig.savefig(partial, dpi=110), path)
    print(f"wrote {path}")


@dataclass
class IndexArguments(RunArguments):
    """FAISS index types by size: build time, memory, queries/s, recall@k; subset search."""

    sizes: list[int] = option([10_000, 100_000, 1_000_000], "vectors per index")
    factories: list[str] = option(list(DEFAULT_FACTORIES), "faiss.index_factory strings ({nlist} is filled in by "
        "size; Flat is always built)")
    hnsw_max: int = option(100_000, "largest size to build HNSW at")
    pq_max: int = option(100_000, "largest size to build IVF-PQ at")
    queries: int = option(200, "OTT-QA questions searched")
    k: int = option(10, "k of recall@k")
    nprobe: int = option(16, "IVF lists probed")
    ef_search: int = option(64, "HNSW efSearch")
    subset_sizes: list[int] = option([100, 1_000, 10_000, 100_000], "ids in the subset searches")
    subset_repeats: int = option(20, "calls timed per subset search")
    plot: str | None = option(None, "PNG path (default: next to --output)")


def main(argv: Sequence[str] | None = None) -> dict:
    args = parse_config(IndexArguments, argv, prog="python -m benchmarks.index", description=__doc__)
    if "Flat" not in args.factories:
        args.factories = ["Flat", *args.factories]  # the exact reference for recall
    args.factories = ["Flat"] + [f for f in args.factories if f != "Flat"]

    limit_threads(args.threads)
    corpus = load_corpus()
    real, queries = corpus["documents"], corpus["queries"][:args.queries]
    report = {"command": command_line("benchmarks.index", argv), "machine": machine(), "encoder": corpus["encoder"],
              "real_vectors": len(real), "dim": real.shape[1], "queries": len(queries),
              "search_params": {"nprobe": args.nprobe, "efSearch": args.ef_search, "k": args.k},
              "threads": args.threads}
    rows, subset_rows = [], []
    for n in args.sizes:
        r, s = bench_size(n, real, queries, args.factories, args)
        rows += r
        subset_rows += s
    report.update(indices=rows, subsets=subset_rows, load_average_end=load_average())
    print_table(rows, title="== indices ==")
    print_table(subset_rows, title="== subset search, one query per call (ms: min and median of repeats) ==")
    write_report(report, args.output)
    write_config(args)
    path = plot_path(args.output, args.plot)
    if path and rows and subset_rows:
        plot(rows, subset_rows, path)
    return report


if __name__ == "__main__":
    main()
