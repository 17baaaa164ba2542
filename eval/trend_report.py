"""What the planted-topic evaluation (:mod:`eval.trends`) prints: count errors per period and method, the
document-level decisions, how monotone true relevance is in the score, and the LLM confirmation runs."""

from __future__ import annotations

import numpy as np


def fmt(x) -> str:
    return "   -  " if x is None else f"{x:6.3f}"


def print_summary(summary: dict, logs: dict, llm_runs: list[dict]) -> None:
    for period, methods in summary.items():
        print(f"\nper {period}: mean over (log, topic) of count MAE, bias, Pearson, Spearman (n defined / n)")
        for method, m in methods.items():
            print(f"  {method:22s} MAE {m['mae']:7.2f}  bias {m['bias']:+7.2f}  pearson {fmt(m['pearson'])}  "
                  f"spearman {fmt(m['spearman'])}  ({m['n_correlation_defined']}/{m['n']})  within 15% "
                  f"{fmt(m.get('within_15'))}  total error {fmt(m.get('total_error'))}")
    dec: dict[str, list] = {}
    for log in logs.values():
        for spec in log["topics"].values():
            for name, d in spec["decisions"].items():
                dec.setdefault(name, []).append(d)
    print("\ndocument-level decisions, mean over (log, topic); false positives summed")
    for name, ds in dec.items():
        mean = {k: np.mean([d[k] for d in ds]) for k in ("precision", "recall", "real_pass_rate")}
        total = {k: sum(d[k] for d in ds) for k in ("fp_near_miss", "fp_other", "fn")}
        print(f"  {name:22s} precision {mean['precision']:.3f}  recall {mean['recall']:.3f}  "
              f"FP near-miss {total['fp_near_miss']}  FP real text {total['fp_other']} "
              f"(pass rate {mean['real_pass_rate']:.3f})  FN {total['fn']}")
    inv = [s["truth_inversion_rate"] for log in logs.values() for s in log["topics"].values()
           if s["truth_inversion_rate"] is not None]
    if inv:
        print(f"\ntrue relevance vs score among candidates: inversion rate mean {np.mean(inv):.3f}, max {max(inv):.3f}"
              " (0 = monotone, as the binary search assumes)")
    for run in llm_runs:
        print(f"\nLLM confirmation, {run['topic']}: {run['stratified']['calls']} stratified calls "
              f"({run['stratified_s']} s), judge accuracy {fmt(run['judge_accuracy'])} on {run['judged']} judged, "
              f"LLM inversion rate {fmt(run['stratified']['inversion_rate'])}; binary search {run['binary_count']} "
              f"relevant in {run['binary_calls']} calls vs {run['true_relevant']} true")
        for period, methods in run["counts"].items():
            for method, m in methods.items():
                print(f"  per {period:7s} {method:15s} MAE {m['mae']:6.2f}  pearson {fmt(m['pearson'])}")
