"""What a trend analysis hands back: a volume plot (PNG), a markdown report and the numbers as JSON.

The report's narrative is written by an LLM backend that is shown the counts per period and the
closest samples with their ids, and asked to weigh the volumes and cite ids as ``[#id]``; citations of
ids it was not shown are flagged. Without a backend, or when the call fails, an extractive summary of
the counts and samples takes its place: the counts, samples and plot never depend on the LLM.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import numpy as np

from retrieval.atomic import replacing_folder, save_with, write_json, write_text
from retrieval.config import save_config
from retrieval.data.jsonio import DataError
from retrieval.llm.base import LLMBackend
from retrieval.trends.result import TrendResult

REPORT_SYSTEM_PROMPT = ("You write short, factual trend reports from counts of documents per period. "
                        "Only state what the numbers and the quoted documents show.")
REPORT_PROMPT = """Topic: {topic}
Question: {question}
Relevant documents per {period} (relevant / all documents):
{volumes}
Closest documents, with ids:
{samples}

Write a short markdown report (3 to 5 sentences) answering the question. Say whether talk about the topic \
grows, falls or stays flat, naming the periods and counts. Cite the documents you use as [#id]."""
CITATION = re.compile(r"#(\d+)")
DIRECTION_WORDS = {"rising": re.compile(r"\b(?:grow|grew|rising|rose|increas|more and more|surg|climb)", re.I),
                   "falling": re.compile(r"\b(?:fall|fell|declin|decreas|drop|less and less|shrink|wan(?:e|ing))",
                                         re.I)}


def plot_volume(result: TrendResult, path: str | Path) -> Path:
    """Bars of relevant documents per period, the share of all documents as a line; written as PNG."""
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    path = Path(path)
    labels = [str(p.period) for p in result.periods]
    counts = [p.n_relevant for p in result.periods]
    shares = [100 * p.share for p in result.periods]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.35 * len(labels) + 2), 3.8))
    x = np.arange(len(labels))
    ax.bar(x, counts, color="#4c72b0", label="relevant documents")
    ax.set_ylabel("relevant documents")
    ax.set_xticks(x, labels, rotation=60 if len(labels) > 8 else 0, ha="right" if len(labels) > 8 else "center",
                  fontsize=8)
    twin = ax.twinx()
    twin.plot(x, shares, color="#dd8452", marker="o", markersize=3, label="share of all documents (%)")
    twin.set_ylabel("share of all documents (%)")
    twin.set_ylim(bottom=0)
    ax.set_title(f"{result.topic!r} per {result.period} (threshold {result.threshold.value:.3f}, "
                 f"{result.threshold.method})", fontsize=10)
    handles = ax.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
    ax.legend(handles, [str(h.get_label()) for h in handles], loc="upper left", fontsize=8)
    fig.tight_layout()
    save_with(lambda partial: fig.savefig(partial, dpi=120), path)
    plt.close(fig)
    return path


def trend_direction(counts: list[float]) -> tuple[str, float | None]:
    """"rising", "falling" or "flat" from the Spearman correlation of counts with time (|rho| >= 0.5)."""
    if len(counts) < 3 or len(set(counts)) < 2:
        return "flat", None
    from scipy.stats import spearmanr

    rho = float(spearmanr(np.arange(len(counts)), counts).statistic)
    return ("rising" if rho >= 0.5 else "falling" if rho <= -0.5 else "flat"), rho


def extractive_summary(result: TrendResult) -> str:
    """A narrative built from the numbers alone: total, peak, first vs last period, direction, cited samples."""
    periods = result.periods
    if not periods:
        return f"No documents fall in the window, so nothing can be said about {result.topic!r}."
    counts = [p.n_relevant for p in periods]
    direction, rho = trend_direction(counts)
    peak = max(periods, key=lambda p: p.n_relevant)
    empty = sum(p.n_docs == 0 for p in periods)
    lines = [f"{_n(result.n_relevant)} of {result.n_window} documents in the window are about {result.topic!r} "
             f"(cosine >= {result.threshold.value:.3f}, {result.threshold.method} threshold)."]
    if result.n_relevant == 0:
        return lines[0]
    lines.append(f"Talk about it is **{direction}** over {len(periods)} {result.period}s"
                 + (f" (Spearman rho {rho:+.2f} of counts against time)" if rho is not None else "")
                 + f": {_n(periods[0].n_relevant)} in {_label(result, periods[0])}, {_n(periods[-1].n_relevant)} in "
                 f"{_label(result, periods[-1])}, peaking at {_n(peak.n_relevant)} in {_label(result, peak)} "
                 f"({100 * peak.share:.1f}% of that {result.period}'s documents).")
    if empty:
        lines.append(f"{empty} {result.period}(s) have no documents at all and count zero.")
    cited = {s["id"]: s for p in (peak, periods[-1]) for s in p.samples[:2]}
    if cited:
        quotes = "; ".join(f"\"{_short(s['text'], 90)}\" [#{i}]" for i, s in cited.items())
        lines.append(f"Closest examples: {quotes}.")
    return " ".join(lines)


def report_messages(result: TrendResult, max_chars: int = 160) -> list[dict[str, str]]:
    """The chat messages asking an LLM for the narrative (counts and samples with their ids)."""
    volumes = "\n".join(f"- {p.period}: {_n(p.n_relevant)} / {p.n_docs}" for p in result.periods)
    samples = "\n".join(f"[#{s['id']}] ({s['timestamp'][:10]}) {_short(s['text'], max_chars)}"
                        for p in result.periods for s in p.samples) or "(none)"
    prompt = REPORT_PROMPT.format(topic=result.topic, question=result.question, period=result.period,
                                  volumes=volumes, samples=samples)
    return [{"role": "system", "content": REPORT_SYSTEM_PROMPT}, {"role": "user", "content": prompt}]


def llm_narrative(result: TrendResult, backend: LLMBackend, max_new_tokens: int = 160) -> tuple[str | None, dict]:
    """(narrative or None, info): the backend's report, with its citations checked against the samples shown."""
    info: dict = {"backend": backend.identity}
    try:
        answer = backend.generate([report_messages(result)], max_new_tokens=max_new_tokens, temperature=0.0)[0]
    except Exception as e:  # a backend that raises: the report still comes out, extractively
        info.update(ok=False, error=f"{type(e).__name__}: {e}")
        return None, info
    if not answer.ok or not answer.text.strip():
        info.update(ok=False, error=answer.error or "empty answer")
        return None, info
    cited = [int(c) for c in CITATION.findall(answer.text)]
    shown = result.sample_ids()
    measured = trend_direction([p.n_relevant for p in result.periods])[0]
    info.update(ok=True, latency_s=answer.latency_s, cited=sorted(set(cited)),
                unknown_citations=sorted(set(cited) - shown),
                direction_conflict=direction_conflict(answer.text, measured))
    return answer.text.strip(), info


def direction_conflict(text: str, measured: str) -> str | None:
    """A warning when a narrative only claims the opposite (or any) change of what the counts show."""
    said = {name for name, pattern in DIRECTION_WORDS.items() if pattern.search(text)}
    if not said or measured in said:
        return None
    return f"The narrative says the topic is {' and '.join(sorted(said))}, but the counts are {measured}."


def markdown_report(result: TrendResult, narrative: str | None = None, llm_info: dict | None = None,
                    plot_name: str | None = "volume.png") -> str:
    """The full report: narrative (LLM or extractive), plot, volumes table, samples, skipped rows, notes."""
    out = [f"# Trend: {result.topic}", "", f"**Question:** {result.question}", "",
           f"Window {result.start} .. {result.end} (now = {result.now}), per {result.period}; "
           f"{result.n_window} documents in the window, {len(result.skipped)} of {result.n_read} read skipped "
           f"for a missing or unreadable timestamp. Relevant = cosine >= {result.threshold.value:.3f} "
           f"({result.threshold.method} threshold)"
           + (f", LLM-confirmed ({result.confirmation['method']})." if result.confirmation else "."), ""]
    llm_info = llm_info or {}
    if narrative is not None:
        out += [f"## Report (LLM: {llm_info.get('backend')})", "", narrative, ""]
        if llm_info.get("unknown_citations"):
            out += [f"> Cited ids not among the samples shown to the LLM: {llm_info['unknown_citations']}", ""]
        if not llm_info.get("cited"):
            out += ["> The LLM cited no document ids.", ""]
        if llm_info.get("direction_conflict"):
            out += [f"> {llm_info['direction_conflict']}", ""]
        out += ["## Summary from the counts (extractive)", "", extractive_summary(result), ""]
    else:
        why = f" (the LLM failed: {llm_info['error']})" if llm_info.get("error") else ""
        out += [f"## Summary (extractive{why})", "", extractive_summary(result), ""]
    if plot_name:
        out += [f"![volume per {result.period}]({plot_name})", ""]
    out += [f"## Volumes per {result.period}", "", "| period | relevant | documents | share | closest ids |",
            "|---|---:|---:|---:|---|"]
    for p in result.periods:
        ids = " ".join(f"#{s['id']}" for s in p.samples)
        out.append(f"| {p.period} | {_n(p.n_relevant)} | {p.n_docs} | {100 * p.share:.1f}% | {ids} |")
    out += ["", "## Samples", ""]
    for p in result.periods:
        for s in p.samples:
            src = f" (source id {s['source_id']})" if "source_id" in s else ""
            out.append(f"- **[#{s['id']}]**{src} {s['timestamp'][:19]} {s['speaker']} (cosine {s['score']:.3f}): "
                       f"{_short(s['text'], 300)}")
    if result.skipped:
        reasons = Counter(s["reason"] for s in result.skipped)
        out += ["", "## Skipped documents", "", ", ".join(f"{n} {r}" for r, n in reasons.items()) + ":"]
        out += [f"- {s['where']}: {s['reason']} ({s['timestamp']!r})" for s in result.skipped[:20]]
        if len(result.skipped) > 20:
            out.append(f"- ... and {len(result.skipped) - 20} more (see trend.json)")
    if result.notes:
        out += ["", "## Notes", ""] + [f"- {n}" for n in result.notes]
    return "\n".join(out) + "\n"


OUTPUT_FILES = {"plot": "volume.png", "report": "report.md", "json": "trend.json", "config": "config.yaml"}


def check_output_dir(out_dir: str | Path) -> Path:
    """``out_dir``, when it is new or holds only a trend report's files; else a DataError naming what else is
    there, since :func:`write_trend_outputs` replaces the folder whole."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise DataError(f"{out_dir}: not a folder; --output-dir names the folder the report is written as")
    other = sorted(p.name for p in out_dir.iterdir() if p.name not in OUTPUT_FILES.values()) if out_dir.is_dir() else []
    if other:
        raise DataError(f"{out_dir}: holds {other[:5]}{' ...' if len(other) > 5 else ''} besides a trend report; "
                        "the report replaces its folder whole, so give a new folder or one holding only a report")
    return out_dir


def write_trend_outputs(result: TrendResult, out_dir: str | Path, backend: LLMBackend | None = None, config=None,
                        settings=None) -> dict[str, Path]:
    """Write ``trend.json``, ``volume.png`` and ``report.md`` (and ``config.yaml``, the command's ``settings``,
    when given) as the folder ``out_dir``; an LLM failure (or none) gives the extractive report, never a
    missing one.

    The files are written into a staging folder beside ``out_dir`` that then replaces it whole, so a run
    stopped midway leaves the previous report as it was, never a new plot beside an old report. A folder
    holding anything else is refused (:func:`check_output_dir`).
    """
    out_dir = check_output_dir(out_dir)
    names = {key: name for key, name in OUTPUT_FILES.items() if key != "config" or settings is not None}
    narrative, info = (None, {}) if backend is None else llm_narrative(result, backend)
    data = {**result.to_dict(), "report": {"llm": info or None, "extractive": narrative is None}}
    if config is not None:
        from dataclasses import asdict

        data["config"] = asdict(config)
    with replacing_folder(out_dir) as staging:
        plot_volume(result, staging / names["plot"])
        write_text(staging / names["report"], markdown_report(result, narrative, info))
        write_json(staging / names["json"], data, indent=2, default=str)
        if settings is not None:
            save_config(settings, staging / names["config"])
    return {key: out_dir / name for key, name in names.items()}


def _label(result: TrendResult, p) -> str:
    return f"session {p.period}" if result.period == "session" else str(p.period)


def _n(x: float) -> str:
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.1f}"


def _short(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"
