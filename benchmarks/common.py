"""What every speed benchmark shares: the machine it ran on, memory, timing, JSON and plots (tables: eval.report).

Benchmarks on a shared machine are noisy, so each one measures its method and its baseline in
the same run, interleaved, and reports the load average (``uptime``) next to its figures.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from retrieval.atomic import write_json
from retrieval.config import option
from retrieval.data.paths import DATA_DIR  # noqa: F401  (the benchmarks read their data from here)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _cpu_flags() -> set[str]:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def cpu_has_bf16() -> bool:
    """True when the CPU runs bf16 matrix products natively (AVX512-BF16 or AMX)."""
    return bool(_cpu_flags() & {"avx512_bf16", "amx_bf16"})


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def machine() -> dict:
    """The machine a figure was measured on, with the load at the time."""
    import torch

    info = {"cpu": _cpu_model(), "cores": os.cpu_count(), "torch_threads": torch.get_num_threads(),
            "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
            "cpu_bf16": cpu_has_bf16(), "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
            "python": platform.python_version(), "torch": torch.__version__, "load_average": load_average()}
    try:
        import faiss

        info["faiss"], info["faiss_gpus"] = faiss.__version__, faiss.get_num_gpus()
    except ImportError:
        pass
    return info


@dataclass
class RunArguments:
    """The settings every benchmark takes: ``--threads``, ``--seed`` and ``--output``."""

    threads: int | None = option(None, "cap BLAS/OpenMP/torch threads (1 on a crowded machine)")
    seed: int = option(0, "seed of the sampled data")
    output: str | None = option(None, "JSON report (a plot, when the benchmark draws one, goes beside it; the "
        "settings as NAME.config.yaml)")


def limit_threads(n: int | None) -> int | None:
    """Cap BLAS, OpenMP (FAISS) and torch at ``n`` threads for this process; None leaves the defaults.

    On an oversubscribed machine a multi-threaded kernel waits at its barrier for a sibling thread that
    is not scheduled (tens of ms a call); one thread per process measures the work, not the queue.
    """
    if n is None:
        return None
    import faiss
    import torch

    try:  # numpy's BLAS; threadpoolctl comes with scikit-learn (a sentence-transformers dependency)
        from threadpoolctl import threadpool_limits

        threadpool_limits(n)
    except ImportError:  # numpy's BLAS keeps its own thread count
        pass
    faiss.omp_set_num_threads(n)
    torch.set_num_threads(n)
    return n


def rss_mb() -> float:
    """Resident memory of this process now, in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def timed(fn: Callable, *args, **kwargs) -> tuple[object, float]:
    """(result, seconds) of one call."""
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def interleaved(methods: dict[str, Callable[[], object]], repeats: int) -> dict[str, list[float]]:
    """Seconds per call of each method, run in turns (A B A B ...) so load changes hit both alike."""
    times: dict[str, list[float]] = {name: [] for name in methods}
    for _ in range(repeats):
        for name, fn in methods.items():
            times[name].append(timed(fn)[1])
    return times


def summary_ms(seconds: Sequence[float]) -> dict:
    ms = 1000 * np.asarray(seconds, dtype=float)
    return {"median_ms": round(float(np.median(ms)), 3), "p95_ms": round(float(np.percentile(ms, 95)), 3),
            "n": len(ms)}


def median(xs: Sequence[float]) -> float:
    return float(statistics.median(xs))


def command_line(prog: str, argv: Sequence[str] | None) -> str:
    return f"python -m {prog} " + " ".join(sys.argv[1:] if argv is None else argv)


def write_report(report: dict, output: str | None) -> None:
    if output:
        write_json(output, report, indent=2, default=str)
        print(f"wrote {output}")


def plot_path(output: str | None, plot: str | None, suffix: str = ".png") -> Path | None:
    """Where the plot goes: ``--plot`` if given, else next to ``--output``."""
    if plot:
        return Path(plot)
    return Path(output).with_suffix(suffix) if output else None


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
