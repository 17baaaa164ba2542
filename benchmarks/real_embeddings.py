"""Real encodings for the scale benchmarks: the data we have, embedded once with our encoder and cached.

Documents: every utterance of the Zyphra logs (5,794), optionally OTT-QA tables as "title. section.
header". Queries: OTT-QA's questions.
Larger benchmark sizes are filled with :func:`synthetic_like`, noisy copies of these vectors.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from benchmarks.common import DATA_DIR
from retrieval.data.paths import default_cache_dir


def utterance_texts(data_dir: Path = DATA_DIR) -> dict[str, list]:
    """log id -> its utterances (``retrieval.data.conversation_log.Utterance``), from ``zyphra_temporal/``."""
    from retrieval.data.conversation_log import read_zyphra_log
    from retrieval.data.zyphra_temporal import log_paths

    return {log: read_zyphra_log(path) for log, path in log_paths(data_dir / "zyphra_temporal").items()}


def table_texts(data_dir: Path = DATA_DIR) -> list[str]:
    from retrieval.data.ottqa import load_tables

    tables = load_tables(data_dir / "ottqa" / "tables.jsonl")
    return [f"{t.title}. {t.section_title}. {' | '.join(t.header)}" for _, t in sorted(tables.items())]


def bench_cache_dir() -> str:
    """The benchmarks' embedding cache: ``$CTBLS_CACHE_DIR/bench`` (``runs/cache/bench`` when unset)."""
    return default_cache_dir("bench")


def question_texts(data_dir: Path = DATA_DIR) -> list[str]:
    from retrieval.data.ottqa import load_questions

    return [q.question for q in load_questions(data_dir / "ottqa" / "questions_dev.json")]


def load_corpus(encoder=None, data_dir: Path = DATA_DIR, cache_dir: str | None = "default",
                max_tables: int = 0, max_queries: int = 500) -> dict:
    """{"documents": (N, D), "queries": (Q, D), "utterances": {log: (n, D)}, "logs", "encoder": identity}.

    Documents are the utterances, then the first ``max_tables`` OTT-QA tables (0 by default: on two
    busy cores the 8,891 tables take long to encode); queries the first ``max_queries`` questions.
    Embeddings are cached in ``cache_dir`` ("default": :func:`bench_cache_dir`; None: not cached).
    """
    cache_dir = bench_cache_dir() if cache_dir == "default" else cache_dir
    from retrieval.search.embedding_cache import cached_document_embeddings

    if encoder is None:
        from models.dual_encoder import load_encoder

        encoder = load_encoder()
    logs = utterance_texts(data_dir)
    utterances = {log: cached_document_embeddings(encoder, [u.text for u in us], cache_dir, show_progress_bar=False)
                  for log, us in logs.items()}
    parts = list(utterances.values())
    if max_tables:
        parts.append(cached_document_embeddings(encoder, table_texts(data_dir)[:max_tables], cache_dir,
                                                show_progress_bar=False))
    questions = question_texts(data_dir)[:max_queries]
    queries = cached_document_embeddings(encoder, questions, cache_dir, show_progress_bar=False)  # shared tower
    documents = np.concatenate(parts)
    return {"documents": documents, "queries": queries, "utterances": utterances, "logs": logs,
            "encoder": encoder.identity}


def synthetic_like(real: np.ndarray, n: int, noise: float = 0.5, seed: int = 0) -> np.ndarray:
    """``n`` unit vectors near the real ones: a random real vector plus Gaussian noise of norm ~``noise``.

    Keeps the real data's clusters (uniform random vectors would make every approximate index look
    worse, and every exact one the same), at any size, in the same dimension.
    """
    rng = np.random.default_rng(seed)
    out = np.empty((n, real.shape[1]), dtype=np.float32)
    step = 100_000
    for start in range(0, n, step):
        m = min(step, n - start)
        x = real[rng.integers(0, len(real), m)] + rng.standard_normal((m, real.shape[1]), dtype=np.float32) * (
            noise / np.sqrt(real.shape[1]))
        out[start:start + m] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out
