"""Whether the relevance model's probabilities mean what they say, on conversations it never saw: the reliability
of its row probabilities, and what the weak-evidence warning (:mod:`retrieval.memory.relevance.confidence`) says
of the rows a question gets back, both from leave-conversations-out folds over every open question.

    python -m eval.relevance_calibration --folds 5 --output runs/relevance/calibration.json   # + calibration.png

- **Reliability**: every candidate row of every question (LoCoMo categories 1-4 with their evidence turns, Zyphra's
  time+content questions with their rows), binned by the probability the fold model that never saw its
  conversation gives it: the bin's mean probability against the share of its rows that are evidence, and the
  expected calibration error (the bins' gaps weighted by their rows).
- **Warnings**: per source, the rows a question gets back (the model's cut when the plan cuts, else its best k),
  whether any of them is evidence, and whether the warning fires (the likeliest of them under
  :data:`~retrieval.memory.relevance.confidence.WEAK_EVIDENCE`): the misses it names and the hits it doubts.
- **Cutting the plans that do not cut** (the whole-log fallback keeps its best k): the questions whose plan asks for
  no cut, answered by their best k rows (today) or by a cut of the model's (:data:`UNCUT_RULES`: the expected-F2
  decision; the shortest run of best rows holding a share of the probability), each scored as the user trial scores
  a turns answer (:func:`eval.user_trial.turns_verdict`) and counted "wrong without saying so" when no evidence is
  kept and the warning does not fire.
"""

from __future__ import annotations

import logging
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from eval.plots import reliability_chart, write_chart
from eval.user_trial import turns_verdict
from models.dual_encoder import load_encoder
from retrieval.atomic import write_json
from retrieval.config import option, parse_config, write_config
from retrieval.data.jsonio import INPUT_ERRORS, DataError, run_cli
from retrieval.data.paths import LOCOMO_FILE, ZYPHRA_DIR, default_cache_dir
from retrieval.memory.relevance.confidence import WEAK_EVIDENCE
from retrieval.memory.relevance.example import Example
from retrieval.memory.relevance.folds import assign_folds, fold_models
from retrieval.memory.relevance.model import kept_positions
from retrieval.memory.relevance_examples import examples

EDGES = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0)
# the rows a plan that does not cut could get back: its best k (today), the expected-F2 cut, or the shortest run of
# best rows holding 70, 80 or 90 % of the probability
UNCUT_RULES = ("best_k", "expected_f2", "mass_0.7", "mass_0.8", "mass_0.9")


@dataclass
class CalibrationArguments:
    """The relevance model's calibration and its weak-evidence warning, by leave-conversations-out folds."""

    locomo: str = option(str(LOCOMO_FILE), "LoCoMo JSON ('' to leave it out)")
    zyphra_dir: str = option(str(ZYPHRA_DIR), "Zyphra's folder ('' to leave it out)")
    folds: int = option(5, "leave-conversations-out folds")
    encoder: str | None = option(None, "dual encoder checkpoint folder or backbone (default: packaged MiniLM)")
    cache_dir: str = option(help="embedding cache ('' for none)", default_factory=lambda: default_cache_dir("temporal"))
    output: str | None = option(None, "write the report as JSON here (and the reliability chart beside it)")


def reliability(p: np.ndarray, y: np.ndarray, edges: Sequence[float] = EDGES) -> dict:
    """Per bin of ``p`` (rows, mean probability, share that is evidence) and the expected calibration error."""
    bins, gap = [], 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        m = (p >= lo) & ((p < hi) if hi < edges[-1] else (p <= hi))
        if m.any():
            bins.append({"bin": [lo, hi], "rows": int(m.sum()), "mean_p": round(float(p[m].mean()), 4),
                         "evidence_share": round(float(y[m].mean()), 4)})
            gap += m.sum() * abs(float(p[m].mean()) - float(y[m].mean()))
    return {"bins": bins, "ece": round(gap / max(len(p), 1), 4)}


def warnings_by_source(questions: Sequence[Example], probabilities: Sequence[np.ndarray],
                       threshold: float = WEAK_EVIDENCE) -> dict:
    """Per source: questions, those whose shown rows hold evidence (hits) or not (misses), and how many of each
    the warning fires on."""
    out: dict[str, dict[str, int]] = defaultdict(lambda: {"questions": 0, "misses": 0, "misses_warned": 0,
                                                          "hits": 0, "hits_warned": 0})
    for e, p in zip(questions, probabilities):
        if not len(e.ids):
            continue
        shown = kept_positions(p, e.k, "expected_f2", threshold) if e.cut else np.argsort(-p, kind="stable")[:e.k]
        hit = any(e.ids[j] in e.relevant for j in shown)
        warned = float(p[shown].max()) < threshold
        s = out[e.source]
        s["questions"] += 1
        s["hits" if hit else "misses"] += 1
        s["hits_warned" if hit else "misses_warned"] += warned
    return dict(sorted(out.items()))


def uncut_kept(p: np.ndarray, k: int, rule: str) -> np.ndarray:
    """The positions a question whose plan does not cut would get back under ``rule`` (:data:`UNCUT_RULES`)."""
    order = np.argsort(-p, kind="stable")[:k]
    if rule == "best_k":
        return order
    if rule == "expected_f2":
        return kept_positions(p, k, "expected_f2", WEAK_EVIDENCE)
    share = np.cumsum(p[order]) / max(float(p.sum()), 1e-9)
    return order[:int(np.searchsorted(share, float(rule.removeprefix("mass_")) - 1e-9)) + 1]  # at least the share


def uncut_alternatives(questions: Sequence[Example], probabilities: Sequence[np.ndarray]) -> dict:
    """Per rule of :data:`UNCUT_RULES`, over the questions whose plan does not cut: the mean rows kept and the
    shares (%) the user trial's verdicts would give, with the wrong ones the warning does not name."""
    uncut = [(e, p) for e, p in zip(questions, probabilities) if len(e.ids) and not e.cut]
    out = {}
    for rule in UNCUT_RULES:
        counts: dict[str, int] = defaultdict(int)
        rows = 0
        for e, p in uncut:
            kept = uncut_kept(p, e.k, rule)
            verdict = turns_verdict(set(e.relevant), [e.ids[j] for j in kept])
            counts[verdict] += 1
            counts["silent wrong"] += verdict == "wrong" and float(p[kept].max()) >= WEAK_EVIDENCE
            rows += len(kept)
        n = max(len(uncut), 1)
        out[rule] = {"questions": len(uncut), "mean_rows": round(rows / n, 1),
                     **{v: round(100 * counts[v] / n, 1) for v in ("right", "partly", "wrong", "silent wrong")}}
    return out


def evaluate(args: CalibrationArguments) -> dict:
    if args.folds < 2:  # said before the examples are made (minutes), not after
        raise DataError(f"--folds {args.folds}: need at least 2 folds")
    by_conversation = examples(load_encoder(args.encoder), args.locomo or None, args.zyphra_dir or None,
                               args.cache_dir or None)
    questions = [e for got in by_conversation.values() for e in got]
    folds = assign_folds(list(by_conversation), args.folds)
    models = fold_models(by_conversation, folds)  # each fold's model, its form and cut chosen by its inner folds
    probabilities = [models[e.conversation].probabilities(e.x) if len(e.ids) else np.zeros(0) for e in questions]
    p = np.concatenate([q for e, q in zip(questions, probabilities) if len(e.ids)])
    y = np.concatenate([e.y for e in questions if len(e.ids)])
    return {"folds": args.folds, "questions": len(questions), "rows": int(len(p)), "weak_evidence": WEAK_EVIDENCE,
            "reliability": reliability(p, y), "warnings": warnings_by_source(questions, probabilities),
            "uncut": uncut_alternatives(questions, probabilities)}


def print_report(report: dict) -> None:
    print(f"{report['questions']} questions, {report['rows']} candidate rows, {report['folds']} folds; "
          f"ECE {report['reliability']['ece']}")
    print(f"{'probability':<14}{'rows':>8}{'mean p':>9}{'evidence':>10}")
    for b in report["reliability"]["bins"]:
        print(f"{b['bin'][0]:.2f}-{b['bin'][1]:.2f}{'':<5}{b['rows']:>8}{b['mean_p']:>9.3f}{b['evidence_share']:>10.3f}")
    print(f"\nthe weak-evidence warning (best shown row under {report['weak_evidence']}), per source:")
    for source, s in report["warnings"].items():
        print(f"  {source:<22} misses it names {s['misses_warned']} of {s['misses']}; hits it doubts "
              f"{s['hits_warned']} of {s['hits']}")
    uncut = report["uncut"]
    print(f"\nthe {next(iter(uncut.values()))['questions']} questions whose plan does not cut, as the user trial "
          f"scores them (%):")
    print(f"{'rows kept':<14}{'mean rows':>10}{'right':>8}{'partly':>8}{'wrong':>8}{'wrong, no warning':>19}")
    for rule, s in uncut.items():
        print(f"{rule:<14}{s['mean_rows']:>10}{s['right']:>8}{s['partly']:>8}{s['wrong']:>8}{s['silent wrong']:>19}")


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_config(CalibrationArguments, argv, prog="python -m eval.relevance_calibration", description=__doc__)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        report = evaluate(args)
    except INPUT_ERRORS as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print_report(report)
    if args.output:
        write_json(args.output, report, indent=2)
        write_config(args)
        write_chart(reliability_chart, report, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
