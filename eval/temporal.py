"""Temporal memory on Zyphra's TemporalMemoryDataset: recall, precision and F2 of the retrieved responses.

    python -m eval.temporal --zyphra-dir ../shared/data/zyphra_temporal --output runs/temporal.json
    python -m eval.temporal --zyphra-dir DIR --logs 26 28 --llm smollm2 --llm-sample 20
    python -m eval.temporal --config configs/temporal.yaml --output runs/temporal.json   # or: ctbls eval temporal
    python -m eval.temporal --config configs/temporal.yaml --questions-dir eval/bank     # the phrasing bank

Methods, all in one run, on every version (paraphrase) of every question:
- ``rule``: the rule planner (time expressions -> table operations; content ranking when named, keeping at most
  ``content_k`` rows within ``content_margin`` of the fused scores' spread from the best);
  ``rule@c`` (time+content only): the same ranking cut to its top c rows (``content_cutoffs``), no margin;
- ``semantic@k`` (k = 10, 20, 30): dense search over the utterance text;
- ``semantic_meta@k``: dense search over the text with its metadata written in (session, date, time);
- ambiguous questions, three query handlings through the rule planner: ``rule/original`` (the last turn
  alone), ``rule/context`` (earlier turns + last turn), ``rule/rewrite`` (the time reference of an earlier
  turn carried into the last turn); the semantic baselines search with context + query;
- with ``--folds K`` (time+content only): ``relevance``, the rule planner's plan with its content ranking re-ranked
  and cut by the learned relevance model of the fold that never saw the log (:mod:`eval.relevance_folds`);
- with ``--llm``: ``llm_planner`` and ``rule/llm_rewrite`` on a seeded sample, beside ``rule`` on the same sample.
Scores use every question; repeated question texts reuse their query embedding (a per-table cache).
Latency: wall time of ``TemporalMemory.ask`` on a seeded sample of ``latency_sample`` questions per log,
each call with an empty query cache (query encoding included; warm process, dateparser loaded).
"""

from __future__ import annotations

import json
import logging
import random
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace

import numpy as np

from eval.plots import temporal_chart, write_chart
from eval.relevance_folds import fold_relevance, model_for, with_relevance
from eval.report import read_reports, require_disjoint
from eval.results import Headline, write_results
from models.dual_encoder import load_encoder
from retrieval.atomic import write_json
from retrieval.config import option, parse_config, write_config
from retrieval.data.conversation_log import read_zyphra_log
from retrieval.data.jsonio import INPUT_ERRORS, DataError, run_cli
from retrieval.data.paths import LOCOMO_FILE, ZYPHRA_DIR, default_cache_dir
from retrieval.data.zyphra_temporal import TemporalQuestion, log_paths, read_questions
from retrieval.memory.content_ranking import CUTS
from retrieval.memory.conversation_table import ConversationTable
from retrieval.memory.planner import LLMPlanner, PlannerConfig, RulePlanner, parse_margin
from retrieval.memory.query_rewrite import LLMRewriter, context_query
from retrieval.memory.table_ops import execute
from retrieval.memory.temporal_memory import RANKERS, TemporalMemory
from retrieval.search.fusion import FUSIONS
from retrieval.search.metrics import f_beta, precision, recall

logger = logging.getLogger("eval.temporal")
HANDLINGS = {"original": "none", "context": "context", "rewrite": "carry"}


@dataclass
class TemporalEvalConfig:
    """Temporal memory on Zyphra's TemporalMemoryDataset (``configs/temporal.yaml``; flags override)."""

    zyphra_dir: str = option(str(ZYPHRA_DIR), "a folder in Zyphra's layout (ConversationData/, TestData/); --data-dir "
        "is its old name here (everywhere else it is the data root)", aliases=["--data-dir"])
    questions_dir: str | None = option(None, "read TestData/ from this folder instead of --zyphra-dir's (e.g. the "
        "question bank eval/bank; the logs still come from --zyphra-dir)")
    logs: list[str] | None = option(None, "log ids to evaluate (default: all in the folder)")
    encoder: str | None = option(None, "dual encoder checkpoint folder or backbone (default: packaged MiniLM)")
    cache_dir: str | None = option(help="document embeddings, keyed by encoder identity and texts ('' for none)",
        default_factory=lambda: default_cache_dir("temporal"))
    content_k: int = option(PlannerConfig.content_k, "at most this many rows when a question names content "
        "(time+content)")
    content_margin: float | None = option(PlannerConfig.content_margin, "time+content: keep rows within this share "
        "of the fused scores' spread (best to the last candidate) of the best ('none': all k)", parse=parse_margin)
    fallback_k: int = option(PlannerConfig.fallback_k, "rows kept by the semantic fallback (no time reference)")
    fallback_margin: float | None = option(PlannerConfig.fallback_margin, "the semantic fallback: keep rows within "
        "this share of the fused scores' spread of the best ('none': all fallback_k)", parse=parse_margin)
    fusion: str = option("scores", "content fusion: scores (each ranker's scores min-max rescaled, summed) or rrf "
        "(reciprocal rank)", choices=FUSIONS)
    content_cut: str = option(CUTS[0], "time+content: the margin is of the fused scores' spread to the last "
        "candidate (pool), to the k-th (spread: with --content-margin 0.6 --speaker-prior 1, the ranking before it) "
        "or of one list's top score (top: with --fusion rrf --content-margin 0.3, the earliest)", choices=CUTS)
    speaker_prior: float | None = option(None, "time+content: the named speaker's prior, in shares of one list's "
        "top (default: the fusion's, retrieval.memory.content_ranking.PRIOR_WEIGHTS)")
    ranker: str = option("hybrid", "content ranking: hybrid (dense + BM25, fused), dense or bm25",
        choices=RANKERS)
    turns: bool = option(True, "also rank each utterance with the turn it follows (a second index)")
    content_cutoffs: list[int] = option([1, 3, 5, 10], "time+content: also score the top c ranked rows (no margin)")
    semantic_ks: list[int] = option([10, 20, 30], "k of the paper's semantic-only baselines")
    llm: str | dict | None = option(None, "LLM spec (e.g. smollm2): also run the LLM planner and rewrite on a sample")
    llm_sample: int = option(20, "questions in the LLM sample")
    latency_sample: int = option(100, "questions per log timed with a cold query cache")
    seed: int = option(0, "seed of the samples")
    output: str | None = option(None, "write the results as JSON here")
    results: str | None = option(None, "a results file for README's table (results/NAME.json: eval.results)")
    merge: list[str] | None = option(None, "print (and --output) one report merged from reports of runs over disjoint "
        "logs", metavar="REPORT")
    kinds: list[str] | None = option(None, "question kinds to evaluate (default: all; time, time+content, ambiguous)")
    folds: int | None = option(None, "time+content: also rank with the learned relevance model, scored by this many "
        "leave-conversations-out folds over every open conversation (the relevance row; eval.relevance_folds)")
    locomo: str = option(str(LOCOMO_FILE), "LoCoMo JSON: its QA are training data for --folds ('' for Zyphra only)")


def question_scores(retrieved: Sequence[int], relevant: frozenset[int]) -> dict[str, float]:
    p, r = precision(retrieved, relevant), recall(retrieved, relevant)
    return {"recall": r, "precision": p, "f2": f_beta(p, r, 2.0)}


class Scoreboard:
    """Per (method, kind, subtype) lists of per-question scores; summaries are means in percent."""

    def __init__(self):
        self.scores: dict[tuple[str, str, str], list[dict]] = defaultdict(list)

    def add(self, method: str, q: TemporalQuestion, retrieved: Sequence[int]) -> None:
        self.scores[(method, q.kind, q.subtype)].append(question_scores(retrieved, q.relevant))

    def summary(self) -> dict:
        out: dict = defaultdict(lambda: defaultdict(dict))
        pooled: dict = defaultdict(list)
        for (method, kind, subtype), rows in sorted(self.scores.items()):
            out[method][kind][subtype] = _mean(rows)
            pooled[(method, kind)].extend(rows)
        for (method, kind), rows in pooled.items():
            out[method][kind]["all"] = _mean(rows)
        return json.loads(json.dumps(out))


def _mean(rows: list[dict]) -> dict:
    return {**{k: round(100 * float(np.mean([r[k] for r in rows])), 2) for k in rows[0]}, "n": len(rows)}


def semantic_baselines(board: Scoreboard, questions: list[TemporalQuestion], tables: dict[str, ConversationTable],
                       ks: Sequence[int]) -> None:
    """semantic@k and semantic_meta@k for every question; ambiguous ones search with context + query."""
    texts = [context_query(q.history, q.question) if q.kind == "ambiguous" else q.question for q in questions]
    unique = sorted(set(texts))
    encoder = next(iter(tables.values())).encoder
    emb = dict(zip(unique, encoder.encode_queries(unique, batch_size=128)))
    for name, table in tables.items():
        hits = table.index.search(np.stack([emb[t] for t in texts]), max(ks), encoder_id=table.encoder_id)
        for q, ranked in zip(questions, hits):
            for k in ks:
                board.add(f"{name}@{k}", q, [i for i, _ in ranked[:k]])


def run_rule(board: Scoreboard, memory: TemporalMemory, questions: list[TemporalQuestion],
             cutoffs: Sequence[int] = ()) -> None:
    """The rule planner on every question; time+content questions also scored on the top c rows of the same
    ranking (asked again with the planner keeping max(cutoffs) rows)."""
    wide = None
    if cutoffs:
        config = replace(memory.planner.config, content_k=max(cutoffs), content_margin=None)
        wide = TemporalMemory(memory.table, RulePlanner(config), ranker=memory.ranker, fusion=memory.fusion,
                              cut=memory.cut, prior=memory.prior)
    for q in questions:
        handlings = HANDLINGS.items() if q.kind == "ambiguous" else [(None, "none")]
        for label, mode in handlings:
            result = memory.ask(q.question, history=q.history, rewrite=mode)
            board.add("rule" if label is None else f"rule/{label}", q, result.ids)
        if q.kind == "time+content" and wide is not None:
            result = wide.ask(q.question)
            for c in cutoffs:  # rows are best first when the plan ranked them; time order (all kept) if not
                board.add(f"rule@{c}", q, result.ids[:c] if result.execution.scores else result.ids)


def measure_latency(memory: TemporalMemory, questions: list[TemporalQuestion], n: int, seed: int,
                    latencies: dict[str, list[float]]) -> None:
    """Wall time of ask() on a seeded sample, each call with an empty query-embedding cache (a cold query)."""
    for q in random.Random(seed).sample(questions, min(n, len(questions))):
        handlings = HANDLINGS.items() if q.kind == "ambiguous" else [(None, "none")]
        for label, mode in handlings:
            memory.table.clear_query_cache()
            start = time.perf_counter()
            memory.ask(q.question, history=q.history, rewrite=mode)
            latencies[q.kind if label is None else f"ambiguous/{label}"].append(time.perf_counter() - start)


def run_llm(board: Scoreboard, memories: dict[str, TemporalMemory], questions: list[TemporalQuestion],
            config: TemporalEvalConfig) -> dict:
    """The LLM planner and LLM rewrite on a seeded sample, with the rule path on the same sample."""
    from retrieval.llm import load_backend

    backend = load_backend(config.llm)
    rng = random.Random(config.seed)
    timed = [q for q in questions if q.kind != "ambiguous"]
    ambiguous = [q for q in questions if q.kind == "ambiguous"]
    plan_sample = rng.sample(timed, min(config.llm_sample, len(timed)))
    rewrite_sample = rng.sample(ambiguous, min(config.llm_sample, len(ambiguous)))
    info = {"backend": config.llm, "plan_sample": len(plan_sample), "rewrite_sample": len(rewrite_sample),
            "plan_fallbacks": 0, "rewrite_fallbacks": 0}
    start = time.perf_counter()
    for q in plan_sample:
        memory = memories[q.log]
        now = memory.resolve_now(None)
        planner = LLMPlanner(backend, memory.table.frame.columns, fallback=memory.planner)
        plan = planner.plan(q.question, now, memory.speakers)
        info["plan_fallbacks"] += plan.planner != "llm"
        ids = execute(plan.ops, memory.table.frame, ranker=memory._rank).ids
        board.add("llm_planner [sample]", q, ids)
        board.add("rule [sample]", q, memory.ask(q.question).ids)
    info["plan_seconds"] = round(time.perf_counter() - start, 1)
    start = time.perf_counter()
    by_log: dict[str, list[TemporalQuestion]] = defaultdict(list)
    for q in rewrite_sample:
        by_log[q.log].append(q)
    for log, qs in by_log.items():
        memory = memories[log]
        now = memory.resolve_now(None)
        rewrites = LLMRewriter(backend).rewrite_many([(q.history, q.question) for q in qs], now)
        for q, rw in zip(qs, rewrites):
            info["rewrite_fallbacks"] += rw.method != "llm"
            board.add("rule/llm_rewrite [sample]", q, memory.ask(rw.text).ids)
            board.add("rule/rewrite [sample]", q, memory.ask(q.question, history=q.history, rewrite="carry").ids)
    info["rewrite_seconds"] = round(time.perf_counter() - start, 1)
    return info


def _latency(seconds: list[float]) -> dict:
    ms = 1000 * np.asarray(seconds)
    return {"median_ms": round(float(np.median(ms)), 2), "p95_ms": round(float(np.percentile(ms, 95)), 2),
            "n": len(ms)}


def latency_summary(latencies: dict[str, list[float]]) -> dict:
    """Median and p95 per log and over all; empty with ``--latency-sample 0``."""
    out = {name: _latency(ts) for name, ts in sorted(latencies.items()) if ts}
    every = [t for ts in latencies.values() for t in ts]
    return {**out, "all": _latency(every)} if every else out


def merge_reports(reports: list[dict]) -> dict:
    """One report from runs over disjoint logs: means weighted by question counts, latencies re-pooled."""
    logs = require_disjoint([r["logs"] for r in reports], "logs")
    results: dict = defaultdict(lambda: defaultdict(dict))
    cells = defaultdict(list)
    for report in reports:
        for method, kinds in report["results"].items():
            for kind, subtypes in kinds.items():
                for subtype, row in subtypes.items():
                    cells[(method, kind, subtype)].append(row)
    for (method, kind, subtype), rows in cells.items():
        n = sum(r["n"] for r in rows)
        results[method][kind][subtype] = {**{k: round(sum(r[k] * r["n"] for r in rows) / n, 2)
                                             for k in rows[0] if k != "n"}, "n": n}
    samples = defaultdict(list)
    for report in reports:
        for name, seconds in report["latency_seconds"].items():
            samples[name].extend(seconds)
    return {"merged_from": [r.get("command") for r in reports], "logs": logs,
            "n_questions": sum(r["n_questions"] for r in reports), "encoder": reports[0]["encoder"],
            "results": json.loads(json.dumps(results)), "latency": latency_summary(samples),
            "latency_seconds": samples, "llm": [r["llm"] for r in reports if r.get("llm")] or None}


KINDS = ("time", "time+content", "ambiguous")


def print_report(summary: dict, latency: dict) -> None:
    """A table per kind of question the run scored, then the latencies; the kinds it had none of are named
    (a user's own question files may hold only some kinds)."""
    absent = [kind for kind in KINDS if not any(kind in summary[m] for m in summary)]
    if absent:
        sections = "that section is" if len(absent) == 1 else "those sections are"
        print(f"\n(no {', no '.join(absent)} questions in this run: {sections} left out)")
    for kind in (k for k in KINDS if k not in absent):
        methods = [m for m in summary if kind in summary[m]]
        main = [m for m in methods if m.startswith("rule") and "[sample]" not in m]
        others = [m for m in methods if m not in main]
        subtypes = sorted({s for m in methods for s in summary[m][kind]} - {"all"}) + ["all"]
        print(f"\n== {kind} questions: recall / precision / F2 (%) ==")
        header = f"{'subtype':<16}{'n':>6}" + "".join(f"{m:>24}" for m in main + others)
        print(header)
        for s in subtypes:
            cells = []
            for m in main + others:
                r = summary[m][kind].get(s)
                cells.append(f"{r['recall']:6.1f}/{r['precision']:5.1f}/{r['f2']:5.1f}".rjust(24) if r else " " * 24)
            n = next(summary[m][kind][s]["n"] for m in main + others if s in summary[m][kind])
            print(f"{s:<16}{n:>6}" + "".join(cells))
    print("\n== latency of TemporalMemory.ask (ms) ==")
    for name, row in latency.items():
        print(f"{name:<24} median {row['median_ms']:7.2f}   p95 {row['p95_ms']:7.2f}   n {row['n']}")


def evaluate(config: TemporalEvalConfig, encoder=None, wrap=None) -> dict:
    """The report of ``config``; ``wrap`` (memory, log id) -> memory: the memory each log's questions are asked of
    (``eval.memory_engines``: the same rows in a living memory on another engine), default the log's table."""
    paths = log_paths(config.zyphra_dir)
    logs = [str(x) for x in config.logs] if config.logs else list(paths)
    missing = [log for log in logs if log not in paths]
    if missing:
        raise DataError(f"{config.zyphra_dir}/ConversationData: no logs {missing}")
    questions = [q for q in read_questions(config.questions_dir or config.zyphra_dir, set(logs))
                 if not config.kinds or q.kind in config.kinds]
    encoder = encoder or load_encoder(config.encoder)
    planner = RulePlanner(PlannerConfig(content_k=config.content_k, content_margin=config.content_margin,
                                        fallback_k=config.fallback_k, fallback_margin=config.fallback_margin))
    board, latencies, memories = Scoreboard(), defaultdict(list), {}
    relevance = fold_relevance(config.folds, encoder, config.locomo or None, config.zyphra_dir,
                               config.cache_dir or None) if config.folds else None
    for log in logs:
        utterances = read_zyphra_log(paths[log])
        tables = {"semantic": ConversationTable.from_utterances(utterances, encoder, config.cache_dir,
                                                                turns=config.turns),
                  "semantic_meta": ConversationTable.from_utterances(utterances, encoder, config.cache_dir,
                                                                     metadata_in_text=True)}
        memory = memories[log] = TemporalMemory(tables["semantic"], planner, ranker=config.ranker,
                                                fusion=config.fusion, cut=config.content_cut,
                                                prior=config.speaker_prior)
        if wrap is not None:
            memory = memories[log] = wrap(memory, log)
        memory.ask("What did we discuss on the first of May?")  # warm-up: dateparser's first call loads its data
        qs = [q for q in questions if q.log == log]
        run_rule(board, memory, qs, config.content_cutoffs)
        if relevance:
            learned = with_relevance(memory, model_for(relevance, log))
            for q in qs:
                if q.kind == "time+content":
                    board.add("relevance", q, learned.ask(q.question).ids)
        measure_latency(memory, qs, config.latency_sample, config.seed, latencies)
        semantic_baselines(board, qs, tables, config.semantic_ks)
        logger.info("log %s: %d question versions", log, len(qs))
    llm_info = run_llm(board, memories, questions, config) if config.llm else None
    return {"config": asdict(config), "encoder": encoder.identity, "logs": logs, "n_questions": len(questions),
            "folds": config.folds,
            "results": board.summary(), "latency": latency_summary(latencies), "latency_seconds": latencies,
            "llm": llm_info}


# Zyphra's paper (Alonso et al. 2024), best recall / F2 per kind of question, for README's table
PUBLISHED = {"time": "93.95 / 87.67", "time+content": "90.17 / 32.19", "ambiguous": "89.43 / 81.05"}


def headline(report: dict) -> list[Headline]:
    """README's rows: F2 of the rule planner per kind of question (time+content: recall too), beside semantic
    search with k = 10, and the paper's best."""
    out, results = [], report["results"]
    k = report["config"]["semantic_ks"][0]
    for kind, method in (("time", "rule"), ("time+content", "rule"), ("ambiguous", "rule/rewrite")):
        ours = results.get(method, {}).get(kind, {}).get("all")
        if ours is None:
            continue
        semantic = results.get(f"semantic@{k}", {}).get(kind, {}).get("all")
        task = f"Zyphra temporal memory: {kind} questions ({ours['n']:,}, {len(report['logs'])} logs)"
        anchor = f"Zyphra's best recall / F2 {PUBLISHED[kind]}"
        for metric in (["recall", "f2"] if kind == "time+content" else ["f2"]):
            base = {f"semantic k = {k}": semantic[metric]} if semantic else {}
            out.append(Headline(task, f"{'F2' if metric == 'f2' else metric} (%)", ours[metric], base, anchor,
                                1, 1))
            learned = results.get("relevance", {}).get(kind, {}).get("all")
            if learned is not None:
                out.append(Headline(task, f"{'F2' if metric == 'f2' else metric}, learned relevance, "
                                    f"{report['folds']} folds (%)", learned[metric], base, anchor, 1, 1))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    config = parse_config(TemporalEvalConfig, argv, prog="python -m eval.temporal", description=__doc__)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        report = (merge_reports(read_reports(config.merge, ("logs", "results", "n_questions", "latency_seconds")))
                  if config.merge else evaluate(config))
    except (*INPUT_ERRORS, KeyError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    report["command"] = "python -m eval.temporal " + " ".join(sys.argv[1:] if argv is None else argv)
    print_report(report["results"], report["latency"])
    if report["llm"]:
        print(f"\nLLM sample: {report['llm']}")
    if config.output:
        write_json(config.output, report, indent=2)
        print(f"\nwrote {config.output} and {write_config(config)}")
        write_chart(temporal_chart, report, config.output)
    if not config.merge:
        write_results(config.results, "python -m eval.temporal", argv, config, lambda: headline(report),
                      [config.zyphra_dir] + ([config.questions_dir] if config.questions_dir else []))
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
