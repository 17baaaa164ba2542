"""``training_curves.png``: a run's training loss by step and its validation metrics by epoch, beside
``all_results.json`` (written at every epoch, so an interrupted run has one too)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from retrieval.atomic import save_with

CURVES_NAME = "training_curves.png"
LABEL_BOX = {"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8}
METRIC_LABELS = {"mrr@10": "MRR@10", "top1": "top-1", "top3": "top-3", "top10": "top-10"}


def smoothed(values: Sequence[float], window: int | None = None) -> np.ndarray:
    """A trailing mean over ``window`` steps (about a twentieth of the run), as long as ``values``."""
    x = np.asarray(values, dtype=float)
    if len(x) == 0:
        return x
    window = window or max(1, len(x) // 20)
    sums = np.cumsum(np.insert(x, 0, 0.0))
    starts = np.maximum(np.arange(1, len(x) + 1) - window, 0)
    return (sums[1:] - sums[starts]) / (np.arange(1, len(x) + 1) - starts)


def _loss_panel(ax, train_loss: Sequence[Sequence[float]], history: Sequence[dict]) -> None:
    steps = [s for s, _ in train_loss]
    losses = [v for _, v in train_loss]
    ax.plot(steps, losses, ".", color="tab:blue", alpha=0.3, markersize=4, label="loss at each step")
    window = max(1, len(losses) // 20)
    ax.plot(steps, smoothed(losses, window), "-", color="tab:blue", linewidth=2,
            label=f"mean of the last {window} steps" if window > 1 else "loss")
    marked = len(history) <= 12  # where each epoch ended, while the lines stay apart
    for r in history if marked else ():
        ax.axvline(r["step"], color="grey", linestyle=":", linewidth=1)
    ax.set_xlabel("optimizer step" + (" (dotted: end of an epoch)" if marked and history else ""))
    ax.set_ylabel("training loss")
    ax.set_title("Training loss")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right", fontsize=9)


def _validation_panel(ax, history: Sequence[dict], metric: str, keys: Sequence[str]) -> None:
    from matplotlib.ticker import MaxNLocator

    scored = [r for r in history if metric in r]
    epochs = [r["epoch"] + 1 for r in scored]
    for key in keys:
        main = key == metric
        ax.plot(epochs, [r.get(key, np.nan) for r in scored], "o-" if main else ".--", linewidth=2.5 if main else 1,
                markersize=8 if main else 6, zorder=3 if main else 2,
                label=METRIC_LABELS.get(key, key) + (" (keeps the best)" if main else ""))
    best = max(scored, key=lambda r: r[metric])  # the first best epoch: the model at the run's root
    ax.plot([best["epoch"] + 1], [best[metric]], "*", color="gold", markeredgecolor="black", markersize=16,
            zorder=4, label=f"kept model: epoch {best['epoch'] + 1}")
    labelled = scored if len(scored) <= 6 else [best, scored[-1]] if best is not scored[-1] else [best]
    for r in labelled:  # each epoch's score while they fit; else the kept one's and the last one's
        ax.annotate(f"{r[metric]:.3f}", (r["epoch"] + 1, r[metric]), textcoords="offset points", xytext=(0, -16),
                    ha="center", fontsize=9, bbox=LABEL_BOX)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=12))
    ax.set_xlim(min(epochs) - 0.5, max(epochs) + 0.5)
    ax.set_ylim(-0.04, 1.08)
    ax.set_xlabel("epoch")
    ax.set_ylabel("validation score")
    ax.set_title("Validation, after each epoch")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=9, frameon=False)


def plot_training(path: str | Path, train_loss: Sequence[Sequence[float]], history: Sequence[dict],
                  metric: str = "mrr@10", title: str = "") -> Path | None:
    """Draw the loss by step (raw points and a trailing mean) and, when the run validates, the validation
    metrics by epoch in a second panel; written whole at ``path``. Nothing to draw (no step yet): None."""
    if not train_loss:
        return None
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    keys = [k for k in METRIC_LABELS if any(k in r for r in history)]
    validated = any(metric in r for r in history)
    fig, axes = plt.subplots(1, 2 if validated else 1, figsize=(13.5 if validated else 7, 4.5), squeeze=False,
                             gridspec_kw={"width_ratios": [1.15, 1]} if validated else None)
    _loss_panel(axes[0][0], train_loss, history)
    if validated:
        _validation_panel(axes[0][1], history, metric, [metric] + [k for k in keys if k != metric])
    fig.suptitle(f"{title}: training loss by step" + (f", validation {METRIC_LABELS.get(metric, metric)} and "
                 "top-k by epoch" if validated else ""))
    fig.tight_layout()
    try:
        return save_with(lambda partial: fig.savefig(partial, dpi=110), path)
    finally:
        plt.close(fig)
