"""The content ranking's proxy task on LoCoMo: where to fuse and where to cut, chosen on questions that are not
Zyphra's.

    python -m experiments.content_proxy --output runs/content_proxy.json                  # packaged MiniLM
    python -m experiments.content_proxy --encoder runs/dialogue_retriever --dev-samples conv-26 conv-41 --output ...

A Zyphra time+content question names a day and a topic; its answer is (mostly) one utterance of that day. The
same task, built from LoCoMo's own annotations: every question of categories 1, 3 and 4 with evidence turns,
ranked by the temporal memory's content ranking (the planner's content query and speaker prior, dense and BM25
over both views) within the calendar days that hold its evidence. Category 5 is left out by default: its
questions are adversarial, each naming the participant who did *not* say the evidence, so they score a speaker
prior as harmful by construction. For each candidate (a fusion of ``--fusions`` with a speaker-prior weight of
``--prior-weights``) it reports top-1 / 3 / 10 and MRR@10 of the full ranking, and, for every margin of the grid,
recall, precision and F2 of the rows :func:`~retrieval.memory.content_ranking.cut_content` keeps of the top
``content_k``: by default within the margin times the spread from the best to the last candidate (``pool``); with
``--cuts spread`` to the ``content_k``-th (the cut before it), with ``--cuts top`` of one list's top score (the
earliest).
The margin chosen is the tightest whose recall on the *development* conversations' single-evidence questions
reaches ``target_recall`` (the rule README section 4 states); the *held-out* conversations (every other one)
report it. A candidate is judged by its development F2 at its chosen margin. Another encoder: ``--encoder``.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass

import numpy as np
from tqdm.auto import tqdm

from models.dual_encoder import load_encoder
from retrieval.atomic import write_json
from retrieval.config import option, parse_config, write_config
from retrieval.data.jsonio import INPUT_ERRORS, DataError
from retrieval.data.locomo_qa import evidence_days, evidence_questions, read_samples, sample_id, sample_utterances
from retrieval.data.paths import LOCOMO_FILE, default_cache_dir
from retrieval.memory.content_ranking import CUTS, FUSION_DEPTH, PRIOR_WEIGHTS, cut_content, fuse_content
from retrieval.memory.conversation_table import ConversationTable
from retrieval.memory.temporal_memory import TemporalMemory
from retrieval.search.fusion import FUSIONS
from retrieval.search.metrics import f_beta

logger = logging.getLogger("experiments.content_proxy")
DEV_SAMPLES = ("conv-26", "conv-30", "conv-41", "conv-42")  # where every setting is chosen; the rest report it
# the grids of margins: of the spread (1 keeps all rows), and of one list's top (4 lists: 4 keeps them all)
SPREAD_MARGINS = tuple(round(m, 2) for m in np.arange(0, 1.001, 0.01))
MARGINS = {"pool": SPREAD_MARGINS, "spread": SPREAD_MARGINS,
           "top": tuple(round(m, 2) for m in np.arange(0, 4.001, 0.01))}


@dataclass
class ProxyQuestion:
    """One LoCoMo question with what the content ranking fuses: the lists of every ranker over its evidence days."""

    sample: str
    category: int
    evidence: frozenset[int]
    rankings: list[list[tuple[int, float]]]
    prefer: list[int]


SCOPES = ("days", "log")  # ranked within the evidence days (a question naming its day), or the whole log (none)


def collect(memory: TemporalMemory, sample: str, questions, scope: str = SCOPES[0]) -> list[ProxyQuestion]:
    """Each question's ranker lists (its planner query, within its evidence days or, with ``scope`` "log", over
    the whole conversation as the planner's fallback ranks a question that names no time) and speaker-prior
    rows."""
    frame = memory.table.frame
    out = []
    for q in questions:
        op = memory.rank_op(q.question)
        pool = evidence_days(frame, q.evidence) if scope == "days" else frame.index.to_numpy()
        prefer = []
        if "prefer" in op:
            speakers = frame.loc[pool, op["prefer"]["column"]].to_numpy()
            prefer = [i for i, s in zip(pool, speakers) if s == op["prefer"]["value"]]
        rankings = memory.content_rankings(op["query"], FUSION_DEPTH, pool)
        out.append(ProxyQuestion(sample, q.category, frozenset(q.evidence), rankings, prefer))
    return out


def ranking_figures(questions: Sequence[ProxyQuestion], fused: Sequence[list]) -> dict[str, float]:
    """Top-1 / 3 / 10 (any evidence turn among the first c) and MRR@10, in percent and as a fraction."""
    first = [next((p for p, (i, _) in enumerate(f, 1) if i in q.evidence), None) for q, f in zip(questions, fused)]
    out = {f"top{c}": round(100 * float(np.mean([p is not None and p <= c for p in first])), 2) for c in (1, 3, 10)}
    out["mrr@10"] = round(float(np.mean([1 / p if p and p <= 10 else 0.0 for p in first])), 4)
    return out


# Another cut than cut_content's (experiments.content_variants): (question, its fused list, margin) -> the rows kept.
Keep = Callable[[ProxyQuestion, list, "float | None"], list]


def cut_figures(questions: Sequence[ProxyQuestion], fused: Sequence[list], margin: float | None,
                mode: str = CUTS[0], fusion: str = "scores", k: int | None = None,
                keep: Keep | None = None) -> dict[str, float]:
    """Mean recall, precision and F2 (percent) of the rows the margin keeps of the top ``k`` of each fused list
    (every candidate; ``cut_content``, or ``keep``), and the mean number of rows."""
    rows = []
    for q, f in zip(questions, fused):
        kept = {i for i, _ in (keep(q, f, margin) if keep else cut_content(f, margin, mode, fusion, k))}
        hit = len(kept & q.evidence)
        r, p = hit / len(q.evidence), hit / len(kept) if kept else 0.0
        rows.append((r, p, f_beta(p, r, 2.0), len(kept)))
    r, p, f2, n = (float(np.mean(c)) for c in zip(*rows))
    return {"recall": round(100 * r, 2), "precision": round(100 * p, 2), "f2": round(100 * f2, 2),
            "rows": round(n, 2)}


def tightest_margin(grid: dict[float, dict], target: float) -> float | None:
    """The smallest margin of the grid whose recall (percent) reaches ``target`` (a fraction); None when none."""
    return next((m for m in sorted(grid) if grid[m]["recall"] >= 100 * target), None)


def score_candidate(fusion: str, prior: float | None, mode: str, parts: dict[str, list[ProxyQuestion]], k: int,
                    target: float, keep: Keep | None = None) -> dict:
    """One fusion, speaker-prior weight (None: the fusion's default) and cut (``mode``, or ``keep`` named
    ``mode``, over the spread margins) on the development and held-out parts: ranking figures, the margin grid
    on the single-evidence questions, the margin chosen on development, and every part's figures at it."""
    prior = PRIOR_WEIGHTS[fusion] if prior is None else prior
    out: dict = {"fusion": fusion, "prior": prior, "cut": mode}

    def fuse(q: ProxyQuestion) -> list[tuple[int, float]]:
        return fuse_content(q.rankings, fusion, None, q.prefer, prior)  # every candidate: the pool cut needs them

    for name, questions in parts.items():
        single = [q for q in questions if len(q.evidence) == 1]
        fused_single = [fuse(q) for q in single]
        fused_all = [fuse(q) for q in questions]
        out[name] = {"n_single": len(single), "n_all": len(questions),
                     "ranking_single": ranking_figures(single, fused_single),
                     "grid_single": {m: cut_figures(single, fused_single, m, mode, fusion, k, keep)
                                     for m in MARGINS.get(mode, SPREAD_MARGINS)},
                     "_all": fused_all, "_questions": questions}
    margin = tightest_margin(out["development"]["grid_single"], target) if out["development"]["n_single"] else None
    out["margin"] = margin
    for name in parts:
        part = out[name]
        fused_all, questions = part.pop("_all"), part.pop("_questions")
        part["at_margin_single"] = part["grid_single"].get(margin) if margin is not None else None
        part["at_margin_all"] = (cut_figures(questions, fused_all, margin, mode, fusion, k, keep)
                                 if margin is not None and questions else None)
    return out


def evaluate(data: str, encoder, dev_samples: Sequence[str], fusions: Sequence[str], categories: Sequence[int],
             k: int, target: float, cache_dir: str | None, priors: Sequence[float] | None = None,
             cuts: Sequence[str] = CUTS[:1], scope: str = SCOPES[0]) -> dict:
    """Collect every question once (ranked within ``scope``), then score each fusion with each prior weight
    (None: the fusion's default) and each cut."""
    parts: dict[str, list[ProxyQuestion]] = {"development": [], "held_out": []}
    for sid, part, memory, questions in conversations(data, encoder, dev_samples, categories, cache_dir):
        parts[part] += collect(memory, sid, questions, scope)
    if not parts["development"]:
        raise DataError(f"{data}: no questions of categories {list(categories)} with evidence in {list(dev_samples)}")
    results = [score_candidate(fusion, prior, mode, parts, k, target)
               for fusion in fusions for prior in (priors or [None]) for mode in cuts]
    return report_head(data, encoder, dev_samples, categories, k, target) | {"scope": scope, "candidates": results}


def conversations(data: str, encoder, dev_samples: Sequence[str], categories: Sequence[int],
                  cache_dir: str | None) -> Iterator[tuple[str, str, TemporalMemory, list]]:
    """Each LoCoMo conversation of ``data`` as (its id, "development" or "held_out", a memory over it with both
    views, its evidence questions of ``categories``); a development sample the file lacks is a DataError."""
    samples = read_samples(data)
    known = [sample_id(s, i) for i, s in enumerate(samples)]
    unknown = sorted(set(dev_samples) - set(known))
    if unknown:
        raise DataError(f"{data}: no samples {unknown} (it has {known})")
    for i, sample in enumerate(tqdm(samples, desc="LoCoMo conversations")):
        sid = sample_id(sample, i)
        utterances = sample_utterances(sample, data, i)
        memory = TemporalMemory(ConversationTable.from_utterances(utterances, encoder, cache_dir, turns=True))
        yield (sid, "development" if sid in dev_samples else "held_out", memory,
               evidence_questions(sample, utterances, categories))


def report_head(data: str, encoder, dev_samples: Sequence[str], categories: Sequence[int], k: int,
                target: float) -> dict:
    """What a proxy report says of its data and settings, before its candidates."""
    known = [sample_id(s, i) for i, s in enumerate(read_samples(data))]
    return {"data": data, "encoder": encoder.identity, "development_samples": list(dev_samples),
            "held_out_samples": [s for s in known if s not in dev_samples], "categories": list(categories),
            "content_k": k, "target_recall": target}


@dataclass
class ProxyArguments:
    """The proxy's data and its rule (what every proxy command shares)."""

    locomo: str = option(str(LOCOMO_FILE), "LoCoMo JSON (locomo_open.json)", aliases=["--data"])
    encoder: str | None = option(None, "dual encoder checkpoint folder or backbone (default: packaged MiniLM)")
    cache_dir: str = option(help="embedding cache ('' for none)", default_factory=lambda: default_cache_dir("temporal"))
    dev_samples: list[str] = option(list(DEV_SAMPLES), "the conversations the margin is chosen on; every other one "
        "reports it")
    cuts: list[str] = option([CUTS[0]], "cuts to compare: pool (of the fused scores' spread to the last candidate), "
        "spread (to the content_k-th) or top (of one list's top score; rrf's earlier 0.3-vote cut)", choices=CUTS)
    categories: list[int] = option([1, 3, 4], "LoCoMo QA categories (2, temporal, has its own command; 5 is "
        "adversarial: it names the wrong participant)")
    content_k: int = option(10, "rows ranked before the cut (the planner's content_k)")
    target_recall: float = option(0.9, "the margin chosen: the tightest whose development recall reaches this")
    output: str | None = option(None, "write the results as JSON here")

    def __post_init__(self):
        if not 0 < self.target_recall <= 1:
            raise ValueError(f"--target-recall must be in (0, 1], got {self.target_recall}")
        if self.content_k < 1:
            raise ValueError(f"--content-k must be >= 1, got {self.content_k}")


@dataclass
class ContentProxyArguments(ProxyArguments):
    """The content ranking on LoCoMo's evidence questions within their evidence days: fusion and margin."""

    fusions: list[str] = option(list(FUSIONS), "fusions to compare", choices=FUSIONS)
    prior_weights: list[float] | None = option(None, "speaker-prior weights to compare, in shares of one list's top "
        "(default: each fusion's own, retrieval.memory.content_ranking.PRIOR_WEIGHTS)")
    scope: str = option(SCOPES[0], "rank within the evidence days (a question that names its day) or the whole "
        "log (the planner's fallback for a question that names no time)", choices=SCOPES)


def print_report(report: dict) -> None:
    within = "the whole log" if report.get("scope") == "log" else "their evidence days"
    print(f"LoCoMo categories {report['categories']}, ranked within {within}; margin: the tightest whose "
          f"development recall (single evidence) reaches {100 * report['target_recall']:.0f}%")
    print(f"{'fusion':<8}{'prior':>6}{'cut':>7} {'part':<13}{'n':>5}{'top1/3/10':>18}{'margin':>8}"
          f"{'R / P / F2 at it':>22}{'rows':>6}{'all evidence R / P / F2':>26}")
    for res in report["candidates"]:
        for part in ("development", "held_out"):
            fig = res[part]
            if not fig["n_single"]:
                continue
            rk, at, al = fig["ranking_single"], fig["at_margin_single"], fig["at_margin_all"]
            top = f"{rk['top1']:.1f}/{rk['top3']:.1f}/{rk['top10']:.1f}"
            kept = f"{at['recall']:.1f} / {at['precision']:.1f} / {at['f2']:.1f}" if at else "never reached"
            whole = f"{al['recall']:.1f} / {al['precision']:.1f} / {al['f2']:.1f}" if al else ""
            print(f"{res['fusion']:<8}{res['prior']:>6}{res['cut']:>7} {part:<13}{fig['n_single']:>5}{top:>18}"
                  f"{res['margin']!s:>8}{kept:>22}{at['rows'] if at else '':>6}{whole:>26}")


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_config(ContentProxyArguments, argv, prog="python -m experiments.content_proxy", description=__doc__)
    return run_report(args, lambda: evaluate(
        args.locomo, load_encoder(args.encoder), args.dev_samples, args.fusions, args.categories, args.content_k,
        args.target_recall, args.cache_dir or None, args.prior_weights, args.cuts, args.scope), print_report)


def run_report(args: ProxyArguments, make: Callable[[], dict], show: Callable[[dict], None]) -> int:
    """A proxy command's end: make the report (an input error is its one line on stderr, exit code 2), print it,
    and write it with its settings to ``args.output``."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        report = make()
    except INPUT_ERRORS as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    report["settings"] = asdict(args)
    show(report)
    if args.output:
        write_json(args.output, report, indent=2)
        write_config(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
