"""Bar charts of the evaluations' results, written as ``NAME.png`` beside ``--output NAME.json``.

One drawing function, :func:`grouped_bars` (panels of groups of bars, one bar per method or setting, colours kept
per series across panels, the legend outside the bars), and one function per command that picks what its report
shows by group: table retrieval by candidate pool, state tracking by turn position, temporal memory by subtype,
LoCoMo's temporal questions by k, responses by setting. Every file goes through :func:`retrieval.atomic.save_with`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from retrieval.atomic import save_with

Groups = Mapping[str, Mapping[str, float]]  # group (x tick) -> series (legend) -> value


@dataclass
class Panel:
    title: str
    groups: Groups
    ylabel: str = ""
    ymax: float | None = None  # 1.0 for shares, 100 for percentages; None: from the data


def chart_path(output: str | Path) -> Path:
    """The chart beside a JSON report: ``NAME.json`` -> ``NAME.png``."""
    return Path(output).with_suffix(".png")


def write_chart(draw, results: Mapping, output: str | Path | None) -> Path | None:
    """``draw(results, NAME.png)`` beside ``--output NAME.json`` (nothing without one); prints where it went."""
    if not output:
        return None
    path = draw(results, chart_path(output))
    print(f"chart: {path}", flush=True)
    return path


def _series(panel: Panel) -> list[str]:
    return list(dict.fromkeys(s for values in panel.groups.values() for s in values))


def _colours(panels: Sequence[Panel], given: Mapping[str, str] | None) -> dict[str, str]:
    import matplotlib

    palette = matplotlib.colormaps["tab10"].colors + matplotlib.colormaps["Dark2"].colors
    names = list(dict.fromkeys(s for p in panels for s in _series(p)))
    return {**{name: palette[i % len(palette)] for i, name in enumerate(names)}, **(given or {})}


def _value_format(panel: Panel, bar_inches: float) -> str | None:
    """How the bars' values are written above them, given a bar's width; None when they would run together."""
    small = (panel.ymax or max((v for vals in panel.groups.values() for v in vals.values()), default=1.0)) <= 1
    for decimals, needs in ((3, 0.34), (2, 0.27)) if small else ((1, 0.27),):
        if bar_inches >= needs:
            return f"%.{decimals}f"
    return None


def _draw_panel(ax, panel: Panel, colours: Mapping[str, str]) -> None:
    series, groups = _series(panel), list(panel.groups)
    width = 0.8 / max(len(series), 1)
    inches = ax.get_window_extent().width / ax.figure.dpi
    fmt = _value_format(panel, inches * 0.8 / max(len(groups) * len(series), 1))
    for i, name in enumerate(series):
        xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
        values = [panel.groups[group].get(name) for group in groups]
        kept = [(x, v) for x, v in zip(xs, values) if v is not None]
        bars = ax.bar([x for x, _ in kept], [v for _, v in kept], width * 0.92, label=name, color=colours[name])
        if fmt:
            ax.bar_label(bars, fmt=fmt, fontsize=7, padding=1)
    ax.set_xticks(range(len(groups)))
    room = ax.get_window_extent().width / ax.figure.dpi / max(len(groups), 1)  # inches per group
    labels = [g.replace(" (", "\n(") for g in groups]
    rotate = max((len(line) for g in labels for line in g.split("\n")), default=0) * 0.085 > room
    ax.set_xticklabels(groups if rotate else labels, rotation=30 if rotate else 0, ha="right" if rotate else "center",
                       fontsize=9)
    top = panel.ymax or max((v for vals in panel.groups.values() for v in vals.values()), default=1.0) or 1.0
    ax.set_ylim(0, top * (1.12 if fmt else 1.04))
    ax.set_ylabel(panel.ylabel)
    ax.set_title(panel.title, fontsize=11)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)


def grouped_bars(path: str | Path, panels: Sequence[Panel], title: str,
                 colours: Mapping[str, str] | None = None) -> Path:
    """Draw ``panels`` (side by side when they are small, else one above the other), each a group of bars per
    x tick; one legend right of the panels when they share their series, else one beside each panel."""
    plt = pyplot()
    panels = [p for p in panels if p.groups]
    bars = max(len(p.groups) * len(_series(p)) for p in panels)
    shared = len({tuple(_series(p)) for p in panels}) == 1
    across = len(panels) > 1 and bars * len(panels) <= 30 and shared  # a row of small panels; else a column
    rows, cols = (1, len(panels)) if across else (len(panels), 1)
    width = min(18.0, max(7.0, 2.5 + (0.45 if bars <= 24 else 0.2) * bars * cols))
    fig, axes = plt.subplots(rows, cols, figsize=(width, 4.2 * rows + 0.6), squeeze=False)
    colour = _colours(panels, colours)
    for ax, panel in zip(axes.flat, panels):
        _draw_panel(ax, panel, colour)
        if not shared:
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    fig.suptitle(title, fontsize=12)
    fig.tight_layout()
    if shared:
        handles, labels = axes.flat[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.0, 0.93), fontsize=9, frameon=False)
    return save_figure(fig, path)


def pyplot():
    """matplotlib's pyplot, drawing to files only (no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path: str | Path) -> Path:
    """Write ``fig`` to ``path`` atomically, then close it."""
    try:
        return save_with(lambda partial: fig.savefig(partial, dpi=110, bbox_inches="tight"), path)
    finally:
        pyplot().close(fig)


# ---- the evaluations' charts --------------------------------------------------------------------------------
def _methods(rows: Mapping) -> dict:
    return {m: v for m, v in rows.items() if not m.startswith("_")}


def retrieval_chart(results: Mapping, path: str | Path) -> Path:
    """eval.retrieval: MRR@10, top-1 and top-10 of each method, in each candidate pool."""
    d = results["_data"]
    pools = {f"{pool.replace('_', ' ')} ({results[pool]['_pool_size']:,})": _methods(results[pool])
             for pool in ("all_tables", "split_tables") if pool in results}
    panels = [Panel(label, {pool: {m: r[metric] for m, r in rows.items()} for pool, rows in pools.items()},
                    ymax=1.0) for metric, label in (("mrr@10", "MRR@10"), ("top1", "top-1"), ("top10", "top-10"))]
    return grouped_bars(path, panels, f"Table retrieval on OTT-QA {d.get('split') or 'all'} questions "
                        f"({d['questions']:,}), by candidate pool (tables)")


def state_tracking_chart(results: Mapping, path: str | Path) -> Path:
    """eval.state_tracking: MRR@10 by turn position (and over all turns) of each method, per table setting."""
    panels = []
    for setting, rows in results.items():
        if setting.startswith("_"):
            continue
        methods = _methods(rows)
        positions = list(dict.fromkeys(t for r in methods.values() for t in r["by_turn"]))
        groups = {p: {m: r["by_turn"][p]["mrr@10"] for m, r in methods.items() if p in r["by_turn"]}
                  for p in positions}
        groups["all turns"] = {m: r["mrr@10"] for m, r in methods.items()}
        found = rows.get("_table_found")
        title = setting.replace("_", " ") + (f" (the DTR found the table of {found['conversations_with_table_found']}"
                                             f" of {found['conversations']} conversations)" if found else "")
        panels.append(Panel(title, groups, "MRR@10", 1.0))
    d = results["_data"]
    return grouped_bars(path, panels, f"Cell state tracking: MRR@10 of the answer cell by turn position "
                        f"({d['turns_scored']:,} turns{', split ' + d['split'] if d.get('split') else ''})")


def _rule_order(method: str) -> tuple:
    """The rule planner's methods: the default first, the ambiguous handlings in README order, then the cut-offs."""
    handling = ["rule", "rule/rewrite", "rule/context", "rule/original"]
    if method in handling:
        return (0, handling.index(method), 0)
    return (1, 0, int(method.split("@")[1])) if "@" in method else (2, 0, 0)


def temporal_series(kind: str, methods: Sequence[str]) -> list[str]:
    """The methods a temporal chart shows for one kind of question: the rule planner's (no samples), then the
    semantic baselines by k."""
    rules = [m for m in methods if m.startswith("rule") and "[sample]" not in m]
    return sorted(rules, key=_rule_order) + sorted(
        (m for m in methods if m.startswith("semantic")), key=lambda m: (m.split("@")[0], int(m.split("@")[1])))


def temporal_chart(report: Mapping, path: str | Path, metric: str = "f2") -> Path:
    """eval.temporal: F2 (%) by subtype (and over all) for each kind of question, rule planner against the
    semantic baselines."""
    summary = report["results"]
    panels = []
    for kind in ("time", "time+content", "ambiguous"):
        methods = temporal_series(kind, [m for m in summary if kind in summary[m]])
        if not methods:
            continue
        subtypes = sorted({s for m in methods for s in summary[m][kind]} - {"all"}) + ["all"]
        n = {s: next(summary[m][kind][s]["n"] for m in methods if s in summary[m][kind]) for s in subtypes}
        groups = {f"{s} ({n[s]:,})": {m: summary[m][kind][s][metric] for m in methods if s in summary[m][kind]}
                  for s in subtypes}
        panels.append(Panel(f"{kind} questions, by subtype (question versions)", groups, f"{metric.upper()} (%)",
                            100.0))
    return grouped_bars(path, panels, f"Temporal memory: {metric.upper()} of the retrieved turns (%), "
                        f"{report['n_questions']:,} question versions, logs {', '.join(map(str, report['logs']))}",
                        temporal_colours([m for p in panels for m in _series(p)]))


RULE_COLOURS = {"rule": "#08519c", "rule/rewrite": "#2ca02c", "rule/context": "#17becf", "rule/original": "#7f7f7f"}


def temporal_colours(methods: Sequence[str]) -> dict[str, str]:
    """Dark blue for the rule planner, lighter blues for its top-c cut-offs, green / teal / grey for the ambiguous
    handlings (rewrite, context, original), oranges for semantic@k, purples for semantic_meta@k (darker for
    smaller k)."""
    import matplotlib

    out = {m: c for m, c in RULE_COLOURS.items() if m in methods}
    for family, cmap in (("rule", "Blues"), ("semantic", "Oranges"), ("semantic_meta", "Purples")):
        members = sorted({m for m in methods if m.split("@")[0] == family and "@" in m},
                         key=lambda m: int(m.split("@")[1]))
        top, span = (0.7, 0.4) if family == "rule" else (0.85, 0.4)
        for i, m in enumerate(members):
            out[m] = matplotlib.colors.to_hex(matplotlib.colormaps[cmap](top - span * i / max(len(members) - 1, 1)))
    return out


def locomo_chart(report: Mapping, path: str | Path) -> Path:
    """eval.locomo_temporal: recall@k (%) of the evidence turns, methods side by side at each k."""
    rows = report["results"]
    ks = list(dict.fromkeys(k for r in rows.values() for k in r))
    groups = {k: {m: r[k] for m, r in rows.items() if k in r} for k in ks}
    return grouped_bars(path, [Panel("", groups, "recall of the evidence turns (%)", 100.0)],
                        f"LoCoMo temporal questions (category 2, {report['n_questions']} questions"
                        + (f"; {', '.join(report['samples'])}" if report.get("samples") else "") + "): recall@k")


def response_chart(results: Mapping, path: str | Path) -> Path:
    """eval.response: ROUGE-1/2/L precision (the paper's metric) and F1 of each setting."""
    settings = [s for s in results if not s.startswith("_") and s != "failures"]
    names = {"rouge1": "ROUGE-1", "rouge2": "ROUGE-2", "rougeL": "ROUGE-L"}
    panels = [Panel(f"ROUGE {label}", {s: {names[r]: results[s][f"{r}_{m}"] for r in names} for s in settings},
                    f"ROUGE {label.split(' ')[0]}", None)
              for m, label in (("p", "precision (the paper's metric)"), ("f", "F1"))]
    d = results["_data"]
    return grouped_bars(path, panels, f"Responses against the reference answers: ROUGE by knowledge and table "
                        f"setting ({d['turns']} turns of {d['conversations']} conversations; LLM {d['llm']})")


def reliability_chart(report: Mapping, path: str | Path) -> Path:
    """eval.relevance_calibration: each probability bin's share of evidence against its mean probability, beside
    the diagonal of perfect calibration and the weak-evidence line."""
    bins = report["reliability"]["bins"]
    fig, ax = pyplot().subplots(figsize=(5, 5))
    ax.plot([0, 1], [0, 1], color="grey", linestyle="--", label="perfectly calibrated")
    ax.plot([b["mean_p"] for b in bins], [b["evidence_share"] for b in bins], marker="o", label="relevance model")
    ax.axvline(report["weak_evidence"], color="tab:red", linewidth=0.8, label="weak-evidence line")
    ax.set(xlabel="mean probability of the bin", ylabel="share of its rows that are evidence", xlim=(0, 1),
           ylim=(0, 1), title=f"Out of fold ({report['folds']} folds), ECE {report['reliability']['ece']:.3f}")
    ax.legend(loc="upper left", fontsize=8, frameon=False)
    return save_figure(fig, path)
