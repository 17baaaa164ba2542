"""LoCoMo's temporal questions (category 2): recall@k of the evidence turns, time-aware against semantic only.

    python -m eval.locomo_temporal --locomo ../shared/data/locomo/locomo_open.json --output runs/locomo_temporal.json
    python -m eval.locomo_temporal --folds 5 --output runs/locomo_temporal_folds.json     # the learned relevance too
    ctbls eval locomo-temporal --samples conv-26 conv-30 --output runs/locomo_temporal_a.json   # the same command

- ``semantic``: dense search over every turn of the conversation with the question;
- ``semantic_meta``: the same over turns with their session and date written into the text;
- ``time_aware``: the rule planner's time operations first (when the question has a time reference), then
  dense ranking of the surviving turns; questions without one are ranked like ``semantic``;
- ``time_aware_hybrid``: the same filter, then the temporal memory's content ranking (dense and BM25 over the
  utterance and over the turn it follows, fused, with the prior for a speaker the question names), hand-tuned;
- ``time_aware_relevance`` (with ``--folds K``): the same, its candidates re-ranked by the learned relevance model
  of the fold that never saw the conversation (:mod:`eval.relevance_folds`).
"Now" is the end of each conversation. LoCoMo has one timestamp per session (see conversation_log).
"""

from __future__ import annotations

import logging
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from eval.plots import locomo_chart, write_chart
from eval.relevance_folds import fold_relevance, model_for, with_relevance
from eval.report import read_reports, require_disjoint
from eval.results import Headline, write_results
from models.dual_encoder import load_encoder
from retrieval.atomic import write_json
from retrieval.config import option, parse_config, write_config
from retrieval.data.jsonio import INPUT_ERRORS, DataError, run_cli
from retrieval.data.locomo_qa import evidence_questions, read_samples, sample_id, sample_utterances
from retrieval.data.paths import LOCOMO_FILE, ZYPHRA_DIR, default_cache_dir
from retrieval.memory.conversation_table import ConversationTable
from retrieval.memory.table_ops import execute
from retrieval.memory.temporal_memory import TemporalMemory
from retrieval.search.metrics import recall

logger = logging.getLogger("eval.locomo_temporal")


def time_aware_ranking(memory: TemporalMemory, question: str, k: int, hybrid: bool) -> tuple[list, bool]:
    """(ranked turn ids, whether a time filter applied): the plan's table ops, then a ranking of the surviving
    turns by the whole question, dense only, or (``hybrid``) the memory's content ranking (dense and BM25 over
    both text views, with the plan's speaker prior)."""
    table = memory.table
    plan = memory.planner.plan(question, table.end.to_pydatetime(), memory.speakers)
    timed = any("unresolved" not in e for e in plan.expressions)  # the plan resolved a time reference
    rows = execute([op for op in plan.ops if op["op"] != "rank"], table.frame).rows if timed else table.frame
    if rows.empty:
        rows, timed = table.frame, False
    if not hybrid:
        return [i for i, _ in table.rank(question, k, subset=rows.index.tolist())], timed
    return memory.rank_rows(question, rows, k), timed


def evaluate(data: str | Path, encoder, ks: Sequence[int] = (1, 5, 10, 20), cache_dir: str | None = None,
             only: Sequence[str] | None = None, relevance: dict | None = None) -> dict:
    """Recall@k of every method on the category-2 questions of every sample (or of the ``only`` sample ids);
    ``relevance``: conversation key -> the relevance model that never saw it (``--folds``)."""
    samples = read_samples(data)
    known = [sample_id(sample, i) for i, sample in enumerate(samples)]
    unknown = sorted(set(only or ()) - set(known))
    if unknown:
        raise DataError(f"{data}: no samples {unknown} (it has {known})")
    hits: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    n_timed, n_questions = 0, 0
    for i, sample in enumerate(samples):
        sid = sample_id(sample, i)
        if only and sid not in only:
            continue
        utterances = sample_utterances(sample, str(data), i)
        tables = {"semantic": ConversationTable.from_utterances(utterances, encoder, cache_dir, turns=True),
                  "semantic_meta": ConversationTable.from_utterances(utterances, encoder, cache_dir,
                                                                     metadata_in_text=True)}
        memory = TemporalMemory(tables["semantic"])
        learned = with_relevance(memory, model_for(relevance, sid)) if relevance else None
        for qa in evidence_questions(sample, utterances, categories=(2,)):
            relevant = set(qa.evidence)
            n_questions += 1
            rankings = {name: [i for i, _ in t.rank(qa.question, max(ks))] for name, t in tables.items()}
            rankings["time_aware"], timed = time_aware_ranking(memory, qa.question, max(ks), hybrid=False)
            rankings["time_aware_hybrid"], _ = time_aware_ranking(memory, qa.question, max(ks), hybrid=True)
            if learned is not None:
                rankings["time_aware_relevance"], _ = time_aware_ranking(learned, qa.question, max(ks), hybrid=True)
            n_timed += timed
            for name, ranked in rankings.items():
                for k in ks:
                    hits[name][k].append(recall(ranked[:k], relevant))
        logger.info("%s: done", sid)
    results = {name: {f"recall@{k}": round(100 * float(np.mean(v)), 2) for k, v in by_k.items()}
               for name, by_k in hits.items()}
    return {"data": str(data), "samples": list(only) if only else None, "encoder": encoder.identity,
            "n_questions": n_questions, "folds": len({id(m) for m in relevance.values()}) if relevance else None,
            "n_with_time_filter": n_timed, "results": results}


def merge_reports(reports: list[dict]) -> dict:
    """One report from runs over disjoint samples (each scored by its own encoder): recalls weighted by question
    counts."""
    if any(not r["samples"] for r in reports):
        raise DataError("--merge takes reports over disjoint --samples; one covers every sample")
    samples = require_disjoint([r["samples"] for r in reports], "--samples")
    n = sum(r["n_questions"] for r in reports)
    results = {name: {k: round(sum(r["results"][name][k] * r["n_questions"] for r in reports) / n, 2)
                      for k in row} for name, row in reports[0]["results"].items()}
    return {"data": reports[0]["data"], "samples": samples, "encoder": [r["encoder"] for r in reports],
            "n_questions": n, "n_with_time_filter": sum(r["n_with_time_filter"] for r in reports),
            "results": results}


@dataclass
class LocomoTemporalArguments:
    """LoCoMo's temporal questions: recall@k of the evidence turns."""

    locomo: str = option(str(LOCOMO_FILE), "LoCoMo JSON (locomo_open.json)", aliases=["--data"])
    encoder: str | None = option(None, "dual encoder checkpoint folder or backbone (default: packaged MiniLM)")
    cache_dir: str = option(help="embedding cache ('' for none)", default_factory=lambda: default_cache_dir("temporal"))
    samples: list[str] | None = option(None, "sample ids to evaluate (default: all)")
    ks: list[int] = option([1, 5, 10, 20], "k of recall@k")
    merge: list[str] | None = option(None, "print (and --output) one report merged from reports of runs over disjoint "
        "--samples", metavar="REPORT")
    output: str | None = option(None, "write the results as JSON here")
    results: str | None = option(None, "a results file for README's table (results/NAME.json: eval.results)")
    folds: int | None = option(None, "also rank with the learned relevance model, scored by this many "
        "leave-conversations-out folds over every open conversation (eval.relevance_folds)")
    zyphra_dir: str = option(str(ZYPHRA_DIR), "Zyphra's folder: its time+content questions are training data for "
        "--folds ('' for LoCoMo only)")


def headline(report: dict) -> list[Headline]:
    """README's row: recall@5 of the evidence turns by the memory's time-aware content ranking, beside semantic
    search over the text and over the text with its metadata written in."""
    res = report["results"]
    if "time_aware_hybrid" not in res or "recall@5" not in res["time_aware_hybrid"]:
        return []
    base = {name: res[m]["recall@5"] for m, name in (("semantic", "semantic"),
                                                            ("semantic_meta", "semantic + metadata in text"))}
    task = f"LoCoMo temporal questions: evidence turns ({report['n_questions']} questions)"
    rows = [Headline(task, "recall@5 (%)", res["time_aware_hybrid"]["recall@5"], base, "", 1, 1)]
    if "time_aware_relevance" in res:
        rows.append(Headline(task, f"recall@5, learned relevance, {report['folds']} folds (%)",
                             res["time_aware_relevance"]["recall@5"], {}, "", 1, 1))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_config(LocomoTemporalArguments, argv, prog="python -m eval.locomo_temporal", description=__doc__)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        if args.merge:
            report = merge_reports(read_reports(args.merge, ("samples", "results", "n_questions")))
            args.ks = [int(k.split("@")[1]) for k in next(iter(report["results"].values()))]
        else:
            encoder = load_encoder(args.encoder)
            relevance = fold_relevance(args.folds, encoder, args.locomo, args.zyphra_dir or None,
                                       args.cache_dir or None) if args.folds else None
            report = evaluate(args.locomo, encoder, args.ks, args.cache_dir or None, args.samples, relevance)
    except INPUT_ERRORS as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"LoCoMo category-2 questions: {report['n_questions']} "
          f"({report['n_with_time_filter']} with a time reference the planner resolved)")
    print(f"{'method':<18}" + "".join(f"{'recall@' + str(k):>12}" for k in args.ks))
    for name, row in report["results"].items():
        print(f"{name:<18}" + "".join(f"{row[f'recall@{k}']:>12.2f}" for k in args.ks))
    if args.output:
        write_json(args.output, report, indent=2)
        write_config(args)
        write_chart(locomo_chart, report, args.output)
    if not args.merge:
        write_results(args.results, "python -m eval.locomo_temporal", argv, args, lambda: headline(report),
                      [args.locomo])
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
