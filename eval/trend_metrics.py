"""The measures of the planted-topic trend evaluation (:mod:`eval.trends`): per-period count error and correlation,
document-level decisions, and their means over (log, topic) pairs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def count_metrics(estimated: Sequence[float], true: Sequence[float]) -> dict[str, float | None]:
    """MAE and bias of per-period counts, and Pearson / Spearman of the two series (None when either is constant)."""
    from scipy.stats import pearsonr, spearmanr

    est, tru = np.asarray(estimated, dtype=float), np.asarray(true, dtype=float)
    out: dict[str, float | None] = {"mae": float(np.abs(est - tru).mean()), "bias": float((est - tru).mean())}
    # The share of the periods that hold the topic whose count, stated as a whole number (an expected count, a sum of
    # probabilities, is said rounded, as the user trial scores it), is within 15 % of the truth (what a person would
    # call right), and the whole window's count error as a share of its true total.
    held = tru > 0
    stated = np.round(est)
    out["within_15"] = float((np.abs(stated - tru)[held] <= 0.15 * tru[held]).mean()) if held.any() else None
    out["total_error"] = float(abs(est.sum() - tru.sum()) / tru.sum()) if tru.sum() > 0 else None
    varied = len(est) > 2 and np.ptp(est) > 0 and np.ptp(tru) > 0
    out["pearson"] = float(pearsonr(est, tru).statistic) if varied else None
    out["spearman"] = float(spearmanr(est, tru).statistic) if varied else None
    return out


def decision_metrics(selected: set, relevant: set, near_misses: set, n_real: int) -> dict[str, float | int]:
    """Document-level precision / recall of a relevance decision, where its false positives come from, and the
    share of the ``n_real`` unplanted utterances that pass (what the null threshold's alpha promises to bound)."""
    tp = len(selected & relevant)
    fp = selected - relevant
    fp_other = len(fp - near_misses)
    return {"precision": tp / len(selected) if selected else 0.0, "recall": tp / len(relevant) if relevant else 1.0,
            "fp_near_miss": len(fp & near_misses), "fp_other": fp_other, "fn": len(relevant - selected),
            "real_pass_rate": fp_other / n_real if n_real else 0.0}


def summarise(rows: list[dict]) -> dict:
    """Mean metrics per period granularity and method over (log, topic) rows."""
    summary: dict = {}
    for period in sorted({r["period"] for r in rows}):
        summary[period] = {}
        for method in dict.fromkeys(r["method"] for r in rows if r["period"] == period):
            sel = [r for r in rows if r["period"] == period and r["method"] == method]
            pear = [r["pearson"] for r in sel if r["pearson"] is not None]
            spear = [r["spearman"] for r in sel if r["spearman"] is not None]
            summary[period][method] = {
                "mae": float(np.mean([r["mae"] for r in sel])), "bias": float(np.mean([r["bias"] for r in sel])),
                **{k: _mean_defined(sel, k) for k in ("within_15", "total_error")},
                "pearson": float(np.mean(pear)) if pear else None, "spearman": float(np.mean(spear)) if spear else None,
                "n": len(sel), "n_correlation_defined": len(pear)}
    return summary


def _mean_defined(rows: list[dict], key: str) -> float | None:
    values = [r[key] for r in rows if r.get(key) is not None]
    return float(np.mean(values)) if values else None
