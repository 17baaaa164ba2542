"""The living memory at scale, for ``benchmarks.temporal_scale``: import, disk, reopen, append, ask after an add.

The memory is filled through ``TemporalMemory.add_many`` with the rows' cached real MiniLM encodings of the
repeated Zyphra utterances (``embeddings=``): encoding a million texts with the real encoder takes hours on this
CPU, and the repeated texts would give the same vectors anyway. Everything else is the real path: rows
committed to SQLite, vectors appended, BM25 segments sealed and merged. Then the folder is closed, measured on
disk and reopened (what a restart costs), and single turns are appended with the real encoder (each new text
encoded: the cost of every add), interleaved with encoding the same text alone so the add's own share shows.
"""

from __future__ import annotations

import gc
import os
import shutil
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

from benchmarks.common import rss_mb, summary_ms
from retrieval.data.conversation_log import Utterance
from retrieval.memory.event_time import _TIMELESS, event_columns
from retrieval.memory.temporal_memory import TemporalMemory

IMPORT_BATCH = 50_000


def folder_mb(path: Path) -> dict[str, float]:
    """Disk use of a memory folder, in MB: the database, the vectors, the BM25 segments, all."""
    sizes = {"database": 0.0, "vectors": 0.0, "bm25": 0.0}
    for f in path.rglob("*"):
        if f.is_file():
            kind = "vectors" if f.suffix == ".f32" else "bm25" if f.suffix == ".npz" else "database"
            sizes[kind] += f.stat().st_size / 2**20
    return {**{k: round(v, 1) for k, v in sizes.items()}, "total": round(sum(sizes.values()), 1)}


def fill_memory(folder: Path, utterances: list[Utterance], embeddings: np.ndarray, encoder,
                store: str | None = None, progress: bool = True, build_index: bool = True) -> dict:
    """A new memory in ``folder`` (or, with ``store``, named ``folder.name`` in that PostgreSQL database, loaded
    without the HNSW indexes and, with ``build_index``, indexed after the load as pgvector advises for a bulk load:
    ``index_build_s``) holding ``utterances`` (in time order) with their ``embeddings``."""
    if store is None and folder.exists():
        shutil.rmtree(folder)
    start = time.perf_counter()
    memory = TemporalMemory.open(folder.name if store else folder, encoder=encoder, create=True, turns=False,
                                 store=store)
    if store:
        drop_hnsw(memory.folder.store.db, encoder.dim)
    for a in tqdm(range(0, len(utterances), IMPORT_BATCH), desc=f"fill a memory of {len(utterances):,} rows",
                  disable=not progress):
        batch = utterances[a:a + IMPORT_BATCH]
        memory.add_many([{"speaker": u.speaker, "text": u.text, "timestamp": u.timestamp, "session": u.session}
                         for u in batch], embeddings={"text": embeddings[a:a + len(batch)]})
    out = {"import_s": round(time.perf_counter() - start, 1)}
    if store and build_index:
        out["index_build_s"] = build_hnsw(memory.folder.store.db, encoder.dim)
        out["import_s"] = round(time.perf_counter() - start, 1)
    memory.close()
    return out


def drop_hnsw(conn, dim: int) -> None:
    """Drop the HNSW indexes of the turns table of size ``dim`` (before a bulk load)."""
    from retrieval.memory.postgres.schema import VIEWS, turns_table

    for view in VIEWS:
        conn.execute(f"DROP INDEX IF EXISTS {turns_table(dim)}_hnsw_{view}")


def build_hnsw(conn, dim: int, memory_mb: int = 4096) -> float:
    """Build the HNSW indexes again after a bulk load (``maintenance_work_mem`` large enough for the graph to be
    built in memory, as pgvector advises; parallel workers as the machine has cores), then ``VACUUM ANALYZE``;
    seconds taken."""
    from retrieval.memory.postgres.schema import hnsw_ddl, turns_table

    start = time.perf_counter()
    conn.execute(f"SET maintenance_work_mem = '{int(memory_mb)}MB'")
    conn.execute(f"SET max_parallel_maintenance_workers = {max(0, (os.cpu_count() or 1) - 1)}")
    for statement in hnsw_ddl(dim):
        conn.execute(statement)
    for table in ("ctbls_postings", "ctbls_df", turns_table(dim)):  # statistics, and the visibility map that
        conn.execute(f"VACUUM ANALYZE {table}")  # index-only scans need (autovacuum does it in time)
    return round(time.perf_counter() - start, 1)


def store_mb(store: str) -> dict[str, float]:
    """Disk use of a PostgreSQL memory's database, in MB (all its memories: one here): the turns, the BM25
    postings and document frequencies, each with their indexes."""
    from retrieval.memory.postgres.store import connect

    conn = connect(store)
    try:
        sizes = dict(conn.execute("SELECT c.relname, pg_total_relation_size(c.oid) / 1048576.0 FROM pg_class c "
                                  "WHERE c.relname LIKE 'ctbls%' AND c.relkind = 'r'").fetchall())
    finally:
        conn.close()
    out = {"database": round(sum(float(v) for k, v in sizes.items() if k.startswith("ctbls_turns")), 1),
           "bm25": round(sum(float(v) for k, v in sizes.items() if k in ("ctbls_postings", "ctbls_df")), 1)}
    return {**out, "total": round(sum(float(v) for v in sizes.values()), 1)}


def reopen(folder: Path, encoder, store: str | None = None) -> tuple[TemporalMemory, dict]:
    gc.collect()
    before, start = rss_mb(), time.perf_counter()
    memory = TemporalMemory.open(folder.name if store else folder, encoder=encoder, store=store)
    return memory, {"reopen_s": round(time.perf_counter() - start, 3), "memory_mb": round(rss_mb() - before, 1)}


def measure_appends(memory: TemporalMemory, texts: list[str], n: int) -> dict:
    """``n`` single-turn adds with the real encoder, each after encoding the same text alone and resolving its
    event time alone (timed apart); every other one with ``fsync`` (a commit that survives a power cut, not only a
    killed process). The memory was filled with these texts, so the event-time reader's cache of texts that name
    no time already holds them: each is dropped from it before it is timed, and again before the add, so that
    both pay what a new text pays."""
    add_s, encode_s, fsync_s, event_s = [], [], [], []
    end = memory.table.end
    for i in range(n):
        text = texts[i % len(texts)]
        t0 = time.perf_counter()
        memory.table.encoder.encode_documents([text])
        encoded = time.perf_counter() - t0
        memory.folder.store.set_fsync(i % 2 == 1)  # PostgreSQL: every commit is flushed (a no-op)
        when = (end + np.timedelta64(i + 1, "m")).to_pydatetime()
        _TIMELESS.pop(text, None)
        e0 = time.perf_counter()
        event_columns([text], [when])
        event_s.append(time.perf_counter() - e0)
        _TIMELESS.pop(text, None)
        t1 = time.perf_counter()
        memory.add("Bench", text, when)
        (fsync_s if i % 2 else add_s).append(time.perf_counter() - t1)
        if i % 2 == 0:
            encode_s.append(encoded)
    memory.folder.store.set_fsync(False)
    add, enc, synced = summary_ms(add_s), summary_ms(encode_s), summary_ms(fsync_s)
    return {"appends": n, "append_median_ms": add["median_ms"], "append_p95_ms": add["p95_ms"],
            "append_encode_median_ms": enc["median_ms"],
            "append_without_encoding_median_ms": round(float(np.median(np.subtract(add_s, encode_s))) * 1000, 3),
            "append_fsync_median_ms": synced["median_ms"],
            "append_event_time_median_ms": summary_ms(event_s)["median_ms"]}


def ask_after_add(memory: TemporalMemory, questions: list, n: int) -> dict:
    """Alternate one add and one question ``n`` times: the question pays for joining the new row to the frame."""
    times = []
    ranked = [q for q in questions if q.kind == "time+content"] or questions
    for i in range(n):
        memory.add("Bench", f"an appended turn about question {i}", memory.table.end.to_pydatetime())
        q = ranked[i % len(ranked)]
        start = time.perf_counter()
        memory.ask(q.question, history=q.history)
        times.append(time.perf_counter() - start)
    s = summary_ms(times)
    return {"ask_after_add_median_ms": s["median_ms"], "ask_after_add_p95_ms": s["p95_ms"]}


def time_ordered(utterances: list[Utterance], embeddings: np.ndarray) -> tuple[list[Utterance], np.ndarray]:
    """The synthetic log in the order a memory receives it (time, then position), embeddings alongside."""
    order = sorted(range(len(utterances)), key=lambda i: (utterances[i].timestamp, i))
    if order == list(range(len(utterances))):
        return utterances, embeddings
    return [utterances[i] for i in order], embeddings[order]
