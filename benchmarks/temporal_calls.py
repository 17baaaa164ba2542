"""Temporal question answering: our pipeline (no LLM call before the answer) against the paper's several calls.

    python -m benchmarks.temporal_calls --output runs/bench/temporal_calls.json
    python -m benchmarks.temporal_calls --questions 9 --llm smollm2 --log 26

The paper's design (Alonso et al. 2024) asks an LLM to rewrite an ambiguous question with its context,
an LLM to write the chain of table operations, and an LLM to answer from the retrieved rows. Ours
rewrites and plans with rules (``RulePlanner``, the ``carry`` rewrite) and calls the LLM once, to
answer. Both run here question by question, in turns, on a seeded sample of Zyphra's test questions
(time, time+content, ambiguous) over one real log, with the same offline LLM (SmolLM2-135M on
transformers by default) and the same answer prompt. Every LLM call is counted and timed; the
speed-up is stated end to end (answer included) and for retrieval alone, with the recall and F2 of
the rows each design retrieved on the same sample, so speed is not bought with accuracy unseen.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from benchmarks.common import (
    DATA_DIR,
    RunArguments,
    command_line,
    limit_threads,
    load_average,
    machine,
    summary_ms,
    write_report,
)
from benchmarks.real_embeddings import bench_cache_dir
from eval.report import print_table
from eval.temporal import question_scores
from models.dual_encoder import load_encoder
from retrieval.config import option, parse_config, write_config
from retrieval.data.zyphra_temporal import log_paths, read_questions
from retrieval.memory.conversation_table import ConversationTable
from retrieval.memory.memory_answer import answer_messages
from retrieval.memory.planner import LLMPlanner, RulePlanner
from retrieval.memory.query_rewrite import LLMRewriter
from retrieval.memory.table_ops import execute
from retrieval.memory.temporal_memory import TemporalMemory


class CountingBackend:
    """Wraps an LLM backend: every ``generate`` call is counted and timed, per stage."""

    def __init__(self, backend):
        self.backend, self.stage = backend, "?"
        self.calls: list[dict] = []

    def generate(self, conversations, **kwargs):
        start = time.perf_counter()
        results = self.backend.generate(conversations, **kwargs)
        self.calls.append({"stage": self.stage, "conversations": len(conversations),
                           "seconds": time.perf_counter() - start,
                           "tokens": sum(r.completion_tokens or 0 for r in results)})
        return results


def answer(llm: CountingBackend, question: str, rows, max_rows: int, max_new_tokens: int) -> str:
    llm.stage = "answer"
    return llm.generate([answer_messages(question, rows, max_rows)], max_new_tokens=max_new_tokens,
                        temperature=0.0)[0].text


def sample(log: str, n: int, seed: int) -> list:
    questions = [q for q in read_questions(DATA_DIR / "zyphra_temporal", {log})]
    kinds = sorted({q.kind for q in questions})
    rng = random.Random(seed)
    per = max(1, n // len(kinds))
    return [q for k in kinds for q in rng.sample([x for x in questions if x.kind == k], per)]


@dataclass
class TemporalCallsArguments(RunArguments):
    """Our temporal question answering (rules + one LLM answer) against the paper's (LLM rewrite, plan, answer)."""

    log: str = option("26", "the Zyphra log (id) the questions come from")
    n_questions: int = option(6, "questions, sampled evenly over the three kinds", aliases=["--questions"])
    llm: str | dict = option("smollm2", "LLM spec (retrieval.llm.load_backend)")
    answer_rows: int = option(10, "retrieved rows in the answer prompt")
    answer_tokens: int = option(64, "answer length limit, tokens")


def prepare(args: TemporalCallsArguments) -> tuple[TemporalMemory, CountingBackend, float]:
    """The memory over the log and the counted LLM (with its load time in seconds), both warmed up."""
    from retrieval.data.conversation_log import read_zyphra_log
    from retrieval.llm import load_backend

    limit_threads(args.threads)
    encoder = load_encoder()
    table = ConversationTable.from_utterances(read_zyphra_log(log_paths(DATA_DIR / "zyphra_temporal")[args.log]),
                                              encoder, bench_cache_dir())
    memory = TemporalMemory(table, RulePlanner(), rewrite="carry")
    start = time.perf_counter()
    llm = CountingBackend(load_backend(args.llm))
    load_s = time.perf_counter() - start
    memory.ask("What did we discuss on the first of May?")  # warm-ups: dateparser's data, the LLM's first call
    answer(llm, "warm-up", table.frame.head(1), 1, 4)
    llm.calls.clear()
    return memory, llm, load_s


def compare_designs(memory: TemporalMemory, llm: CountingBackend, q, now, args: TemporalCallsArguments,
                    per_design: dict[str, dict[str, list]]) -> None:
    """Answer ``q`` by our design, then by the paper's, adding each one's seconds, LLM calls and scores."""
    table = memory.table
    # ours: rule rewrite + rule plan + dense rank, then one LLM call to answer
    before, t0 = len(llm.calls), time.perf_counter()
    result = memory.ask(q.question, history=q.history)
    t1 = time.perf_counter()
    answer(llm, result.question, result.rows, args.answer_rows, args.answer_tokens)
    ours_ids, t2 = result.ids, time.perf_counter()
    per_design["ours"]["retrieval"].append(t1 - t0)
    per_design["ours"]["total"].append(t2 - t0)
    per_design["ours"]["calls"].append(len(llm.calls) - before)
    # the paper's design: LLM rewrite (when there is context) + LLM plan + dense rank, then the answer
    before, t0 = len(llm.calls), time.perf_counter()
    text = q.question
    if q.history:
        llm.stage = "rewrite"
        text = LLMRewriter(llm).rewrite(q.history, q.question, now).text
    llm.stage = "plan"
    plan = LLMPlanner(llm, table.frame.columns, fallback=memory.planner).plan(text, now, memory.speakers)
    rows = execute(plan.ops, table.frame, ranker=memory._rank).rows
    t1 = time.perf_counter()
    answer(llm, text, rows, args.answer_rows, args.answer_tokens)
    t2 = time.perf_counter()
    per_design["paper"]["retrieval"].append(t1 - t0)
    per_design["paper"]["total"].append(t2 - t0)
    per_design["paper"]["calls"].append(len(llm.calls) - before)
    for design, ids in (("ours", ours_ids), ("paper", rows.index.tolist())):
        scores = question_scores(ids, q.relevant)
        per_design[design]["recall"].append(scores["recall"])
        per_design[design]["f2"].append(scores["f2"])


def summarise(per_design: dict[str, dict[str, list]], llm: CountingBackend) -> tuple[list[dict], dict, dict]:
    """One row per design, the LLM calls by stage, and the median speed-ups."""
    rows_out = []
    for design, d in per_design.items():
        rows_out.append({"design": design, "llm_calls_per_q": round(float(np.mean(d["calls"])), 2),
                         "retrieval_median_ms": summary_ms(d["retrieval"])["median_ms"],
                         "total_median_s": round(float(np.median(d["total"])), 2),
                         "total_p95_s": round(float(np.percentile(d["total"], 95)), 2),
                         "recall_%": round(100 * float(np.mean(d["recall"])), 1),
                         "f2_%": round(100 * float(np.mean(d["f2"])), 1)})
    by_stage = {}
    for stage in sorted({c["stage"] for c in llm.calls}):
        calls = [c for c in llm.calls if c["stage"] == stage]
        by_stage[stage] = {"calls": len(calls), "median_s": round(float(np.median([c["seconds"] for c in calls])), 2),
                           "mean_tokens": round(float(np.mean([c["tokens"] for c in calls])), 1)}
    speedup_total = [p / o for p, o in zip(per_design["paper"]["total"], per_design["ours"]["total"])]
    speedup_retrieval = [p / o for p, o in zip(per_design["paper"]["retrieval"], per_design["ours"]["retrieval"])]
    summary = {"speedup_end_to_end_median": round(float(np.median(speedup_total)), 2),
               "speedup_retrieval_median": round(float(np.median(speedup_retrieval)), 1)}
    return rows_out, by_stage, summary


def main(argv: Sequence[str] | None = None) -> dict:
    args = parse_config(TemporalCallsArguments, argv, prog="python -m benchmarks.temporal_calls", description=__doc__)
    memory, llm, load_s = prepare(args)
    questions = sample(args.log, args.n_questions, args.seed)
    now = memory.resolve_now(None)
    per_design: dict[str, dict[str, list]] = {d: {"retrieval": [], "total": [], "calls": [], "recall": [], "f2": []}
                                              for d in ("ours", "paper")}
    for q in questions:  # the two designs in turns, question by question
        compare_designs(memory, llm, q, now, args, per_design)
        print(f"[{q.kind}] {q.question[:60]!r}: ours {per_design['ours']['total'][-1]:.1f}s "
              f"({per_design['ours']['calls'][-1]} call), paper {per_design['paper']['total'][-1]:.1f}s "
              f"({per_design['paper']['calls'][-1]} calls), load {load_average()[0]}", flush=True)

    rows_out, by_stage, summary = summarise(per_design, llm)
    table_text = print_table(rows_out, title=f"== {len(questions)} temporal questions, log {args.log}, "
                                             f"LLM {args.llm} ==")
    print_table([{"stage": s, **v} for s, v in by_stage.items()], title="== LLM calls by stage ==")
    print(summary)
    report = {"command": command_line("benchmarks.temporal_calls", argv), "machine": machine(), "threads": args.threads,
              "llm": args.llm, "llm_load_s": round(load_s, 1), "questions": [q.question for q in questions],
              "kinds": [q.kind for q in questions], "results": rows_out, "llm_calls_by_stage": by_stage,
              **summary, "seconds": per_design, "table": table_text, "load_average_end": load_average()}
    write_report(report, args.output)
    write_config(args)
    return report


if __name__ == "__main__":
    main()
