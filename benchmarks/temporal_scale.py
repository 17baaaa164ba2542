"""Temporal queries at scale: plan + filter + rank latency (median, p95) and memory of large conversation tables.

    python -m benchmarks.temporal_scale --output runs/bench/temporal_scale.json            # 100k and 1M rows
    python -m benchmarks.temporal_scale --rows 1000000 --questions 100 --years 10

The table: the nine Zyphra logs' sessions (5,794 real utterances, their real embeddings) repeated
in turn until it has ``--rows`` rows, the sessions spread evenly (with jitter) over ``--years`` of
synthetic dates ending at the last real date, each keeping its real clock-time offsets. Questions:
a seeded sample of Zyphra's test questions (time, time+content and ambiguous, with their earlier
turns), asked at the end of the table. Each is timed in stages as ``TemporalMemory.ask`` runs them:
rewrite + plan, the table operations (filters), and the dense ranking of the surviving rows (query
encoding included). Beside it, measured in the same run: the same questions on one real log, and
semantic search alone (encode + flat search of the whole table, the paper's baseline).

Each size is measured twice: today's table (built in memory from the log, BM25 built by the first question that
ranks: ``first_ranked_ms``) and the living memory (``benchmarks.live_scale``: filled through ``add_many``,
closed, its folder's size taken, reopened, then the same questions, single-turn appends with the real encoder,
and questions right after an add). ``--live false`` leaves the living memory out, ``--today false`` today's table.
The sessions of the synthetic log do not overlap (a session is over before the next starts), so the log
arrives in time order as a memory requires.
"""

from __future__ import annotations

import gc
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import (
    DATA_DIR,
    RunArguments,
    command_line,
    limit_threads,
    load_average,
    machine,
    plot_path,
    pyplot,
    rss_mb,
    summary_ms,
    write_report,
)
from benchmarks.live_scale import (
    ask_after_add,
    fill_memory,
    folder_mb,
    measure_appends,
    reopen,
    store_mb,
    time_ordered,
)
from benchmarks.real_embeddings import load_corpus
from eval.report import print_table
from models.dual_encoder import load_encoder
from retrieval.atomic import save_with
from retrieval.config import option, parse_config, write_config
from retrieval.data.conversation_log import Utterance
from retrieval.data.zyphra_temporal import read_questions
from retrieval.memory.conversation_table import ConversationTable, utterance_frame
from retrieval.memory.planner import RulePlanner
from retrieval.memory.postgres.local import database_url, new_database
from retrieval.memory.table_ops import execute
from retrieval.memory.temporal_memory import TemporalMemory
from retrieval.search.dense_index import DenseIndex


def synthetic_log(logs: dict[str, list[Utterance]], embeddings: dict[str, np.ndarray], rows: int, years: float,
                  seed: int = 0) -> tuple[list[Utterance], np.ndarray]:
    """``rows`` utterances: the logs' sessions in turn, spread over ``years`` ending at the last real time."""
    rng = np.random.default_rng(seed)
    sessions = []  # (utterances, embedding rows) of every real session, in log order
    for log, us in logs.items():
        by_session: dict[int, list[int]] = {}
        for i, u in enumerate(us):
            by_session.setdefault(u.session, []).append(i)
        sessions += [([us[i] for i in idx], embeddings[log][idx]) for idx in by_session.values()]
    end = max(u.timestamp for us in logs.values() for u in us)
    start = end - timedelta(days=365.25 * years)
    chosen, total = [], 0
    while total < rows:
        s = sessions[len(chosen) % len(sessions)]
        chosen.append(s)
        total += len(s[0])
    span = (end - start).total_seconds()
    starts = np.sort(rng.uniform(0, span, len(chosen)))
    out, emb = [], []
    for n, ((us, e), offset) in enumerate(zip(chosen, starts)):
        first, base = us[0].timestamp, start + timedelta(seconds=float(offset))
        keep = min(len(us), rows - len(out))
        deltas = [min(u.timestamp - first, timedelta(hours=6)) for u in us[:keep]]  # real spacing, kept short
        room = timedelta(seconds=0.9 * float(starts[n + 1] - offset)) if n + 1 < len(starts) else deltas[-1]
        scale = min(1.0, room / deltas[-1]) if deltas[-1] else 1.0  # and over before the next one starts
        for u, delta in zip(us[:keep], deltas):
            out.append(Utterance(len(out), n + 1, u.speaker, base + delta * scale, u.text))
        emb.append(e[:keep])
    return out, np.concatenate(emb)


def build_table(utterances: list[Utterance], embeddings: np.ndarray, encoder) -> tuple[ConversationTable, dict]:
    gc.collect()
    before, t0 = rss_mb(), time.perf_counter()
    frame = utterance_frame(utterances)
    t1 = time.perf_counter()
    position = {u.response_idx: i for i, u in enumerate(utterances)}  # embeddings follow the utterance list
    index = DenseIndex.build(embeddings[[position[r] for r in frame.index]], frame.index.tolist(),
                             encoder_id=encoder.identity)
    t2 = time.perf_counter()
    table = ConversationTable(frame, index, encoder)
    return table, {"frame_build_s": round(t1 - t0, 2), "index_build_s": round(t2 - t1, 2),
                   "memory_mb": round(rss_mb() - before, 1)}


def sample_questions(n: int, seed: int) -> list:
    questions = read_questions(DATA_DIR / "zyphra_temporal")
    by_kind: dict[str, list] = {}
    for q in questions:
        by_kind.setdefault(q.kind, []).append(q)
    rng = random.Random(seed)
    per = max(1, n // len(by_kind))
    return [q for kind in sorted(by_kind) for q in rng.sample(by_kind[kind], min(per, len(by_kind[kind])))]


def ask_in_stages(memory: TemporalMemory, q) -> dict[str, float]:
    """``TemporalMemory.ask``'s steps, timed apart: rewrite + plan, filters, rank (query encoding included)."""
    rank_s = [0.0]

    def ranker(query, k, subset, **options):  # options: the plan's speaker prior and margin
        start = time.perf_counter()
        try:
            return memory._rank(query, k, subset, **options)
        finally:
            rank_s[0] += time.perf_counter() - start

    t0 = time.perf_counter()
    now = memory.resolve_now(None)
    rewritten = memory.rewrite_query(q.question, q.history, now, memory.rewrite)
    plan = memory.planner.plan(rewritten.text if rewritten else q.question, now, memory.speakers)
    t1 = time.perf_counter()
    execution = execute(plan.ops, memory.table.frame, ranker=ranker)
    t2 = time.perf_counter()
    ranked = next((op for op in plan.ops if op["op"] == "rank"), None)
    return {"plan": t1 - t0, "filter": t2 - t1 - rank_s[0], "rank": rank_s[0], "total": t2 - t0,
            "rows": len(execution.rows), "ranked": ranked is not None}


def semantic_only(table: ConversationTable, q, k: int = 10) -> float:
    start = time.perf_counter()
    table.index.search(table.encoder.encode_queries([q.question]), k, encoder_id=table.encoder.identity)
    return time.perf_counter() - start


def bench_table(name: str, table: ConversationTable, questions: list, build: dict) -> dict:
    memory = TemporalMemory(table, RulePlanner())
    memory.ask("What did we discuss on the first of May?")  # warm-up: dateparser loads its data on first use
    stages: dict[str, list[float]] = {"plan": [], "filter": [], "rank": [], "total": [], "semantic_only": []}
    ranked_totals, per_question = [], []
    for q in questions:  # the method and its baseline in turns, question by question
        r = ask_in_stages(memory, q)
        for key in ("plan", "filter", "rank", "total"):
            stages[key].append(r[key])
        if r["ranked"]:
            ranked_totals.append(r["total"])
        stages["semantic_only"].append(semantic_only(table, q))
        per_question.append({"kind": q.kind, **{k: round(v, 4) if isinstance(v, float) else v for k, v in r.items()},
                             "semantic_only": round(stages["semantic_only"][-1], 4)})
    first_ranked = next((r["total"] for r in per_question if r["ranked"]), None)
    row = {"table": name, "rows": len(table), "sessions": int(table.frame["session"].nunique()), **build,
           "questions": len(questions), "ranked": len(ranked_totals),
           "first_ranked_ms": None if first_ranked is None else round(1000 * first_ranked, 1)}
    for key, ts in stages.items():
        s = summary_ms(ts)
        row[f"{key}_median_ms"], row[f"{key}_p95_ms"] = s["median_ms"], s["p95_ms"]
    if ranked_totals:  # questions that name content: query encoding and a subset search included
        s = summary_ms(ranked_totals)
        row["ranked_total_median_ms"], row["ranked_total_p95_ms"] = s["median_ms"], s["p95_ms"]
    row["per_question"] = per_question
    row["rss_mb"], row["load"] = round(rss_mb(), 1), load_average()[0]
    print_table([{k: v for k, v in row.items() if k != "per_question"}])
    return row


def bench_live(utterances: list[Utterance], emb: np.ndarray, encoder, questions: list, folder: Path,
               args: TemporalScaleArguments, store: str | None = None) -> dict:
    """The living memory of these rows (in ``folder``, or with ``store`` in that PostgreSQL database): filled,
    closed, measured on disk, reopened, asked, appended to."""
    utterances, emb = time_ordered(utterances, emb)
    filled = fill_memory(folder, utterances, emb, encoder, store)
    memory, opened = reopen(folder, encoder, store)
    disk = store_mb(store) if store else folder_mb(folder)
    row = bench_table("postgresql memory" if store else "living memory", memory.table, questions,
                      {**filled, **opened, "disk_mb": disk["total"], "disk": disk})
    row.update(measure_appends(memory, [u.text for u in utterances[:500]], args.appends))
    row.update(ask_after_add(memory, questions, 20))
    memory.close()
    print_table([{k: v for k, v in row.items() if k not in ("per_question", "disk")}])
    return row


def plot(rows: list[dict], path) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    x = np.arange(len(rows))
    bottom = np.zeros(len(rows))
    ax.bar(x, [r["total_median_ms"] for r in rows], 0.4, color="lightgray", label="plan + filter + rank (median)")
    for key in ("plan", "filter"):
        vals = np.array([r[f"{key}_median_ms"] for r in rows])
        ax.bar(x, vals, 0.2, bottom=bottom, label=f"{key} (median)")
        bottom += vals
    ax.scatter(x, [r["total_p95_ms"] for r in rows], marker="_", s=400, color="k", label="plan + filter + rank p95")
    ax.scatter(x, [r.get("ranked_total_median_ms", np.nan) for r in rows], marker="^", color="tab:green",
               label="questions naming content (median)")
    ax.scatter(x + 0.3, [r["semantic_only_median_ms"] for r in rows], marker="o", color="gray",
               label="semantic only (median)")
    ax.set_xticks(x, [f"{r['table']}\n{r['rows']:,} rows" for r in rows])
    ax.set(ylabel="ms per question", title="Temporal question latency by table size")
    ax.legend(fontsize=8)
    fig.tight_layout()
    save_with(lambda partial: fig.savefig(partial, dpi=110), path)
    print(f"wrote {path}")


@dataclass
class TemporalScaleArguments(RunArguments):
    """Temporal questions on large synthetic conversation tables: plan, filter and rank latency, memory."""

    rows: list[int] = option([100_000, 1_000_000], "rows of the synthetic tables")
    years: float = option(10.0, "years the synthetic sessions span")
    n_questions: int = option(60, "questions, sampled evenly over the three kinds", aliases=["--questions"])
    real_log: str = option("26", "the one real log measured beside the large tables")
    today: bool = option(True, "measure today's table (built from the log, BM25 on first use)")
    live: bool = option(True, "measure the living memory (filled, closed, reopened, appended to)")
    appends: int = option(200, "single-turn appends timed on each living memory")
    work_dir: str = option("runs/bench/temporal_scale_memories", "where the living memories are written")
    store: str | None = option(None, "also measure the living memory on PostgreSQL: a server URL (a database per "
                               "size is made on it), or 'pgserver' (a local one in --work-dir)")
    plot: str | None = option(None, "PNG path (default: next to --output)")


def main(argv: Sequence[str] | None = None) -> dict:
    args = parse_config(TemporalScaleArguments, argv, prog="python -m benchmarks.temporal_scale", description=__doc__)

    limit_threads(args.threads)
    encoder = load_encoder()
    corpus = load_corpus(encoder)
    questions = sample_questions(args.n_questions, args.seed)
    report = {"command": command_line("benchmarks.temporal_scale", argv), "machine": machine(), "threads": args.threads,
              "encoder": encoder.identity, "questions": len(questions),
              "kinds": pd.Series([q.kind for q in questions]).value_counts().to_dict()}
    with database_url(args.store, Path(args.work_dir) / "pgdata") as (server_url, _):
        rows = measure(args, encoder, corpus, questions, server_url)
    report["tables"] = rows
    report["load_average_end"] = load_average()
    print_table(rows, ["table", "rows", "sessions", "frame_build_s", "index_build_s", "import_s", "reopen_s",
                       "disk_mb", "memory_mb", "plan_median_ms", "filter_median_ms", "total_median_ms", "total_p95_ms",
                       "first_ranked_ms", "ranked_total_median_ms", "ranked_total_p95_ms", "semantic_only_median_ms",
                       "load"], title="== temporal questions by table size ==")
    print_table([r for r in rows if "append_median_ms" in r],
                ["table", "rows", "append_median_ms", "append_p95_ms", "append_encode_median_ms",
                 "append_without_encoding_median_ms", "append_event_time_median_ms",
                 "append_fsync_median_ms", "ask_after_add_median_ms",
                 "ask_after_add_p95_ms"],
                title="== appending to a living memory ==")
    write_report(report, args.output)
    write_config(args)
    path = plot_path(args.output, args.plot)
    if path:
        plot(rows, path)
    return report


def measure(args: TemporalScaleArguments, encoder, corpus: dict, questions: list, server_url: str | None) -> list:
    """The rows of the report: the real log, then each size's tables and memories."""
    Path(args.work_dir).mkdir(parents=True, exist_ok=True)
    rows = []
    log = args.real_log
    table, build = build_table(corpus["logs"][log], corpus["utterances"][log], encoder)
    rows.append(bench_table(f"real log {log}", table, questions, build))
    del table
    for n in args.rows:
        utterances, emb = synthetic_log(corpus["logs"], corpus["utterances"], n, args.years, args.seed)
        if args.today:
            table, build = build_table(utterances, emb, encoder)
            rows.append(bench_table(f"synthetic {args.years:g}y", table, questions, build))
            del table
            gc.collect()
        if args.live:
            rows.append(bench_live(utterances, emb, encoder, questions, Path(args.work_dir) / f"memory-{n}", args))
        if server_url:
            url = new_database(server_url, f"scale_{n}")
            rows.append(bench_live(utterances, emb, encoder, questions, Path(f"memory-{n}"), args, url))
        del utterances, emb
        gc.collect()
    return rows


if __name__ == "__main__":
    main()
