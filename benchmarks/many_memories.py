"""Many small memories in one place: 1,000 memories of 1,000 rows, on the embedded engine (a folder each) and on
PostgreSQL (one database, every row carrying its memory id), from the same run.

    python -m benchmarks.many_memories --output runs/bench/many_memories.json          # a local pgserver
    python -m benchmarks.many_memories --memories 1000 --rows 1000 --store postgresql://me@dbhost/scratch

Each memory holds a synthetic log of ``--rows`` real Zyphra utterances with their real MiniLM vectors (the
sessions of ``benchmarks.temporal_scale.synthetic_log`` over one year, a different seed per memory). Filling uses
those vectors (``add_many(embeddings=...)``); on PostgreSQL the HNSW indexes are built after the load. Then, on a
seeded sample of ``--sample`` memories, as a service serves a request for a memory it does not hold open: open it
(``open_ms``), ask it ``--questions`` of Zyphra's test questions (``question_ms``: time-filtered and ranked ones
apart), append one turn with the real encoder (``append_ms``), close it.
"""

from __future__ import annotations

import random
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from benchmarks.common import RunArguments, command_line, limit_threads, load_average, machine, summary_ms, write_report
from benchmarks.live_scale import build_hnsw, fill_memory, folder_mb, store_mb
from benchmarks.real_embeddings import load_corpus
from benchmarks.temporal_scale import sample_questions, synthetic_log
from eval.report import print_table
from models.dual_encoder import load_encoder
from retrieval.config import option, parse_config, write_config
from retrieval.memory.postgres.local import database_url, new_database
from retrieval.memory.postgres.store import connect
from retrieval.memory.temporal_memory import TemporalMemory

ENGINES = ("embedded", "postgresql")


@dataclass
class ManyMemoriesArguments(RunArguments):
    """Many small memories on each engine: fill, then open, ask and append on a sample."""

    memories: int = option(1000, "memories")
    rows: int = option(1000, "rows per memory")
    sample: int = option(50, "memories opened, asked and appended to")
    n_questions: int = option(6, "questions per sampled memory", aliases=["--questions"])
    engines: list[str] = option(list(ENGINES), "engines to measure", choices=ENGINES)
    store: str = option("pgserver", "the PostgreSQL: a server URL (a database is made on it) or 'pgserver' (a local "
                        "one in --work-dir)")
    work_dir: str = option("runs/bench/many_memories", "where the folders (and a local server's data) go")


def fill(engine: str, args: ManyMemoriesArguments, corpus: dict, encoder, url: str | None) -> dict:
    """Every memory made and filled; seconds taken (and, on PostgreSQL, the HNSW build after the load)."""
    root, store = Path(args.work_dir) / "folders", url if engine == "postgresql" else None
    if store is None and root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    for m in tqdm(range(args.memories), desc=f"fill {args.memories} memories ({engine})"):
        utterances, emb = synthetic_log(corpus["logs"], corpus["utterances"], args.rows, 1.0, seed=m)
        fill_memory(root / f"m{m:05d}", utterances, emb, encoder, store, progress=False, build_index=False)
    out = {"fill_s": round(time.perf_counter() - start, 1)}
    if store:
        conn = connect(store)
        out["index_build_s"] = build_hnsw(conn, encoder.dim)
        conn.close()
        out["disk_mb"] = store_mb(store)["total"]
    else:
        out["disk_mb"] = round(sum(folder_mb(p)["total"] for p in root.iterdir()), 1)
    return out


def serve_sample(engine: str, args: ManyMemoriesArguments, questions: list, encoder, url: str | None) -> dict:
    """Open, ask and append to a seeded sample of memories, as requests for memories not held open."""
    rng = random.Random(args.seed)
    chosen = rng.sample(range(args.memories), min(args.sample, args.memories))
    root, store = Path(args.work_dir) / "folders", url if engine == "postgresql" else None
    opened, filtered, ranked, appended = [], [], [], []
    for m in tqdm(chosen, desc=f"open, ask, append ({engine})"):
        t0 = time.perf_counter()
        memory = TemporalMemory.open(f"m{m:05d}" if store else root / f"m{m:05d}", encoder=encoder, store=store)
        opened.append(time.perf_counter() - t0)
        for q in rng.sample(questions, min(args.n_questions, len(questions))):
            t0 = time.perf_counter()
            result = memory.ask(q.question, history=q.history)
            took = time.perf_counter() - t0
            (ranked if result.execution.scores else filtered).append(took)
        t0 = time.perf_counter()
        memory.add("Bench", f"a new turn for memory {m}", memory.table.end.to_pydatetime())
        appended.append(time.perf_counter() - t0)
        memory.close()
    row = {"engine": engine}
    for name, xs in (("open", opened), ("filtered_question", filtered), ("ranked_question", ranked),
                     ("question", filtered + ranked), ("append", appended)):
        if xs:
            s = summary_ms(xs)
            row[f"{name}_median_ms"], row[f"{name}_p95_ms"], row[f"{name}_n"] = s["median_ms"], s["p95_ms"], s["n"]
    return row


def main(argv: Sequence[str] | None = None) -> dict:
    args = parse_config(ManyMemoriesArguments, argv, prog="python -m benchmarks.many_memories", description=__doc__)
    limit_threads(args.threads)
    encoder = load_encoder()
    corpus = load_corpus(encoder)
    questions = sample_questions(60, args.seed)
    Path(args.work_dir).mkdir(parents=True, exist_ok=True)
    rows = []
    with database_url(args.store if "postgresql" in args.engines else None,
                      Path(args.work_dir) / "pgdata") as (server, _):
        url = new_database(server, "many_memories") if server else None
        for engine in args.engines:
            built = fill(engine, args, corpus, encoder, url)
            rows.append({**serve_sample(engine, args, questions, encoder, url), **built, "load": load_average()[0]})
    report = {"command": command_line("benchmarks.many_memories", argv), "machine": machine(),
              "encoder": encoder.identity, "memories": args.memories, "rows_per_memory": args.rows,
              "sample": args.sample, "engines": rows}
    print_table(rows, title=f"== {args.memories:,} memories of {args.rows:,} rows ==")
    write_report(report, args.output)
    write_config(args)
    return report


if __name__ == "__main__":
    main()
