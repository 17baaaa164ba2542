"""Temporal trends: how much is said about a topic, period by period, with the closest examples.

After "Temporal Augmented Retrieval" (adrida), with relevance decided rather than assumed: each
document's cosine to the topic is compared with a threshold read off the scores themselves (the mixture of an
off-topic bulk and a topic tail, never below the null; :mod:`retrieval.trends.relevance`),
optionally confirmed by an LLM judge on a stratified sample. Documents live in the conversation table
of the temporal memory (one row per utterance or document, metadata columns, a dense index).

    corpus = load_corpus("notes.csv", encoder=load_encoder())             # or a Zyphra / LoCoMo log
    result = analyse_trend(corpus, "How are people feeling about the metaverse, and is it growing?")
    [(p.period, p.n_docs, p.n_relevant) for p in result.periods]
    write_trend_outputs(result, "runs/trends/metaverse", backend=load_backend("smollm2"))  # report.md, volume.png

Command line:
    python -m retrieval.trends.analysis ask --docs FILE "Is the talk about electric cars growing?" \\
        [--period auto|day|week|month|session] [--start 2023-05-01 --end 2023-09-01] [--topic "electric cars"] \\
        [--threshold null|labelled|fixed|relevance --relevance runs/memory_relevance] \\
        [--confirm none|stratified|binary] [--llm smollm2|none] \\
        --output-dir runs/trends/cars [--config configs/trends.yaml]
    ctbls trends ask --docs FILE "..." --output-dir DIR       # the same, as a command

``FILE``: a CSV or JSONL of ``{text, timestamp, source?, id?, session?}`` rows, or a Zyphra / LoCoMo
conversation log (.json). Rows with a missing or unreadable timestamp are skipped, counted and listed.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path

import numpy as np
import pandas as pd

from retrieval.config import option, parse_command
from retrieval.data.jsonio import DataError, iter_jsonl
from retrieval.data.paths import default_cache_dir
from retrieval.llm.base import LLMBackend
from retrieval.memory.language_check import language_note
from retrieval.memory.relevance.choices import PACKAGED
from retrieval.memory.relevance.rerank import Reranker, relevance_model
from retrieval.memory.table_ops import execute
from retrieval.trends.anchor import event_window
from retrieval.trends.corpus import Corpus, load_corpus
from retrieval.trends.model_relevance import COUNT_RULES, count_weights, model_probabilities
from retrieval.trends.periods import PERIOD_COLUMN, PERIODS, auto_period, check_span, enumerate_periods
from retrieval.trends.question import as_time, parse_trend_question
from retrieval.trends.relevance import (
    THRESHOLD_METHODS,
    Threshold,
    binary_search_boundary,
    confirm_stratified,
    labelled_threshold,
    llm_judge,
    mixture_threshold,
    null_threshold,
    reference_threshold,
)
from retrieval.trends.result import SKIPPED_NOTE, PeriodCount, TrendResult
from retrieval.trends.scores import FEEDBACK, check_feedback, topic_scores, topic_vector
from retrieval.trends.topic_turns import load_topic_model, topic_probabilities

CONFIRM_METHODS = ("none", "stratified", "binary")
# ---- the analysis ----------------------------------------------------------------------------------------------
@dataclass
class TrendConfig:
    """Settings of one trend analysis (``configs/trends.yaml``; command-line options override)."""

    period: str = option("auto", "auto (from the question, else from the window's length)", choices=("auto", *PERIODS))
    topic: str | None = option(None, "what to count (default: read from the question)")
    start: str | None = option(None, "window start, ISO 8601 (default: from the question, else the first document)")
    end: str | None = option(None, "window end (exclusive), ISO 8601")
    now: str | None = option(None, "reference time for relative phrases (default: the last document)")
    threshold: str = option("auto", "how relevance is decided (auto: turns over a conversation whose encoder the "
        "topic model was trained with, else mixture; mixture: where the scores' topic tail begins, never below the "
        "null; relevance: the memory's learned relevance model, with --relevance; turns: the sum of the per-turn "
        "topic model's probabilities, with --topic-model)",
        choices=THRESHOLD_METHODS)
    relevance: str = option(PACKAGED, "for --threshold relevance: the relevance model, packaged (the memory's "
        "default) or a folder (python -m train.memory_relevance)")
    topic_model: str = option(PACKAGED, "for --threshold turns / auto: the per-turn topic model, packaged (trained on "
        "the user trial's development chats and a planted Zyphra log) or a folder (python -m train.topic_turns)")
    count_rule: str = option("count", "for --threshold relevance: count the documents at p >= 0.5 (count) or sum "
        "the probabilities (expected)", choices=COUNT_RULES)
    feedback: int = option(0, f"pseudo-relevance feedback: score with the topic's query moved toward its N closest "
        f"documents (Rocchio; a reference corpus gets the same procedure; {FEEDBACK} with --threshold reference); 0: "
        "the query alone")
    alpha: float = option(0.01, "null / reference threshold: share of off-topic documents let through")
    threshold_value: float | None = option(None, "for --threshold fixed; for relevance, the probability a document "
        "must reach (default 0.5)")
    labelled: str | None = option(None, "for --threshold labelled: JSONL of {text or id, relevant: true|false}")
    reference: str | None = option(None, "for --threshold reference: documents (CSV / JSONL / log) known not to be "
        "about the topic")
    n_samples: int = option(3, "closest relevant documents shown per period", aliases=["--samples"])
    confirm: str = option("none", "LLM confirmation: stratified (a sample per score stratum) or binary (the "
        "original's search)", choices=CONFIRM_METHODS)
    confirm_floor_alpha: float = option(0.1, "LLM candidates: above the null threshold at this looser alpha")
    confirm_strata: int = option(4, "score strata of the stratified confirmation")
    confirm_per_stratum: int = option(6, "LLM calls per stratum")
    seed: int = option(0, "seed of the confirmation samples")

    def __post_init__(self) -> None:
        check_feedback(self.feedback)
        if self.threshold not in THRESHOLD_METHODS:
            raise ValueError(f"threshold must be one of {THRESHOLD_METHODS}")
        if self.confirm not in CONFIRM_METHODS:
            raise ValueError(f"confirm must be one of {CONFIRM_METHODS}")
        if self.threshold == "fixed" and self.threshold_value is None:
            raise ValueError("threshold 'fixed' needs threshold_value")
        if self.threshold == "labelled" and not self.labelled:
            raise ValueError("threshold 'labelled' needs labelled: a JSONL of {text, relevant}")
        if self.threshold == "reference" and not self.reference:
            raise ValueError("threshold 'reference' needs reference: a file of documents not about the topic")
        if self.threshold == "relevance" and not self.relevance:
            raise ValueError("threshold 'relevance' needs relevance: packaged or a relevance model folder")
        if self.threshold in ("relevance", "turns") and self.confirm != "none":
            raise ValueError(f"LLM confirmation works on cosine scores: it cannot follow threshold '{self.threshold}'")


def read_labelled(path: str | Path) -> list[tuple[str | None, str | None, bool]]:
    """A JSONL of ``{"text" | "id", "relevant": true|false}`` -> [(text, id, relevant)].

    ``id`` names a document of the corpus itself (its source id, e.g. a CSV ``id``, or its response index):
    labelling a few of the corpus's own documents calibrates against the confusers that corpus really holds.
    """
    out = []
    for n, obj in iter_jsonl(path):
        text, doc_id = obj.get("text"), obj.get("id")
        if not isinstance(obj.get("relevant"), bool) or (not isinstance(text, str) and doc_id is None):
            raise DataError(f"{path}:{n}: expected {{\"text\": str or \"id\": ..., \"relevant\": true|false}}")
        out.append((text if isinstance(text, str) else None, None if doc_id is None else str(doc_id),
                    obj["relevant"]))
    return out


def decide_threshold(config: TrendConfig, scores: pd.Series, corpus: Corpus, topic: str) -> Threshold:
    """The threshold the config asks for, from the corpus's scores, a reference corpus or labelled examples."""
    table = corpus.table
    if config.threshold == "fixed" and config.threshold_value is not None:  # TrendConfig requires the value
        return Threshold(float(config.threshold_value), "fixed")
    if config.threshold == "relevance":
        cut = 0.5 if config.threshold_value is None else float(config.threshold_value)
        return Threshold(cut, "relevance", {"model": config.relevance, "count_rule": config.count_rule})
    if config.threshold == "turns":  # the turns shown as counted: those at p >= 0.5
        return Threshold(0.5, "turns", {"model": config.topic_model, "count_rule": "expected"})
    if config.threshold == "null":
        return null_threshold(scores.to_numpy(), config.alpha)
    if config.threshold == "mixture":
        return mixture_threshold(scores.to_numpy(), config.seed)
    if config.threshold == "reference" and config.reference:  # and the file
        reference = load_corpus(config.reference, table.require_encoder())
        return reference_threshold(topic_scores(reference.table, topic, config.feedback).to_numpy(), config.alpha)
    if not config.labelled:
        raise ValueError(f"threshold {config.threshold!r} needs its setting (see TrendConfig)")
    labelled = read_labelled(config.labelled)
    row_of = {sid: i for i, sid in corpus.source_ids.items()} | {str(i): i for i in table.frame.index}
    missing = [d for t, d, _ in labelled if t is None and d not in row_of]
    if missing:
        raise DataError(f"{config.labelled}: ids not in the corpus: {missing[:5]}")
    texts = [t for t, _, _ in labelled if t is not None]
    q = topic_vector(table, topic, config.feedback)[0]  # (D,): the vector the corpus is scored with
    text_scores = iter(table.require_encoder().encode_documents(texts) @ q if texts else [])  # (T,)
    s = [float(next(text_scores)) if t is not None else float(scores.loc[row_of[d]]) for t, d, _ in labelled]
    relevant = [r for _, _, r in labelled]
    return labelled_threshold([x for x, r in zip(s, relevant) if r], [x for x, r in zip(s, relevant) if not r])


def count_method(config: TrendConfig, table) -> tuple[TrendConfig, str | None]:
    """``config`` with its ``auto`` threshold decided, and the note saying how: ``turns`` (the per-turn topic model,
    trained on conversations) where the rows are a conversation (two speakers or more, sessions of two turns or more
    on average), the model was trained with the table's encoder and no LLM confirmation is asked (it confirms cosine
    scores); else ``mixture``."""
    if config.threshold != "auto":
        return config, None
    frame = table.frame
    conversation = frame["speaker"].nunique() >= 2 and len(frame) >= 2 * frame["session"].nunique()
    encoder = table.encoder_id or table.require_encoder().identity
    fits = conversation and load_topic_model(config.topic_model).fits_encoder(encoder)
    if fits and config.confirm == "none":
        return replace(config, threshold="turns"), ("counted by the per-turn topic model (turns; --threshold "
                                                    "mixture counts by the cosine scores' mixture)")
    why = ("the documents are no conversation" if not conversation else "the topic model was trained with another "
           "encoder" if not fits else "LLM confirmation confirms cosine scores")
    return replace(config, threshold="mixture"), f"counted by the cosine scores' mixture ({why})"


def analyse_trend(corpus: Corpus, question: str, config: TrendConfig | None = None,
                  backend: LLMBackend | None = None) -> TrendResult:
    """Count, per period of the window, the documents relevant to the question's topic, and sample them.

    ``backend`` (an LLM backend) is used only when ``config.confirm`` is not "none".
    """
    config, how = count_method(config or TrendConfig(), corpus.table)
    table, frame = corpus.table, corpus.table.frame
    now = as_time(config.now, table.tz) if config.now else table.end.to_pydatetime()
    speakers = sorted(frame["speaker"].unique())
    query = event_window(parse_trend_question(question, now, speakers, config.period, config.topic, config.start,
                                              config.end), table, now)
    notes = list(query.notes) + ([how] if how else [])
    if unread := language_note(question, query.start is not None):  # said first: its topic is another language's
        notes.insert(0, unread)
    if corpus.skipped:  # documents the counts cannot hold
        first = corpus.skipped[0]
        notes.insert(0, f"{SKIPPED_NOTE} {len(corpus.skipped):,} of {corpus.n_read:,} documents not counted, with no "
                        f"usable timestamp (first: {first['where']}, {first['reason']})")
    rows = execute(query.ops, frame).rows
    start = query.start or (rows["timestamp"].min() if len(rows) else None)
    end = query.end or (rows["timestamp"].max() if len(rows) else None)
    period = query.period
    if period == "auto":
        period = auto_period(end - start) if start is not None and end is not None else "month"
        notes.append(f"period chosen from the window's length: {period}")
    if start is not None and end is not None:
        check_span(period, start, end, _ends(corpus, rows))
    scores = topic_scores(table, query.topic, config.feedback)
    try:
        threshold = decide_threshold(config, scores, corpus, query.topic)
    except ValueError as e:  # too few documents to read a threshold off: say which corpus
        raise ValueError(f"{corpus.path or 'the documents'}: {e}") from e
    if config.threshold == "relevance" and config.relevance:  # the samples are the most probable ones
        window = model_probabilities(table, query.topic, Reranker(relevance_model(config.relevance)), rows)
        weights = count_weights(window, config.count_rule, threshold.value)
    elif config.threshold == "turns":  # the expected number of turns about the topic
        window = topic_probabilities(table, query.topic, load_topic_model(config.topic_model), rows)
        weights = count_weights(window, "expected")
    else:
        window = scores.loc[rows.index]
        weights = (window >= threshold.value).astype(np.float64)
    confirmation = None
    if config.confirm != "none":
        if backend is None:
            notes.append("LLM confirmation asked for but no LLM backend given: threshold decisions kept")
        else:
            weights, confirmation = _confirm(config, scores, window, rows, threshold, query.topic, backend, notes)
    keys = rows[PERIOD_COLUMN[period]]
    periods = [] if start is None or end is None else enumerate_periods(period, start, end, rows["session"].tolist())
    if start is None:
        notes.append("no documents in the window")
    n_docs = keys.value_counts().to_dict()
    n_rel = weights.groupby(keys).sum().to_dict() if len(rows) else {}
    out = []
    for key in periods:
        members = window[(keys == key) & (weights >= 0.5)].sort_values(ascending=False)
        samples = [_sample(corpus, i, float(s), confirmation) for i, s in members.head(config.n_samples).items()]
        out.append(PeriodCount(key, int(n_docs.get(key, 0)), float(n_rel.get(key, 0.0)), samples,
                               [int(i) for i in members.index]))
    return TrendResult(question, query.topic, period, _iso(start), _iso(end), now.isoformat(), threshold, out,
                       len(rows), corpus.skipped, corpus.n_read, corpus.path, confirmation, notes)


def _confirm(config, scores, window, rows, threshold, topic, backend, notes):
    """LLM confirmation over the window's candidates; returns (weights, confirmation summary)."""
    try:
        floor = min(threshold.value, null_threshold(scores.to_numpy(), config.confirm_floor_alpha).value)
    except ValueError as e:  # too few documents for a null: confirm what the threshold kept
        floor = threshold.value
        notes.append(f"LLM candidates: those above the threshold only ({e})")
    texts = rows["text"].to_dict()
    judge = llm_judge(backend, topic)
    cand = window[window >= floor]
    weights = (window >= threshold.value).astype(np.float64)
    if config.confirm == "binary":
        ranked = cand.sort_values(ascending=False).index.tolist()
        count, calls = binary_search_boundary(ranked, texts, judge)
        weights[:] = 0.0
        weights.loc[ranked[:count]] = 1.0
        notes.append(f"binary search (assumes relevance falls monotonically with the score): {count} of "
                     f"{len(ranked)} candidates, {calls} LLM calls")
        return weights, {"method": "binary", "floor": floor, "candidates": len(ranked), "count": count,
                         "calls": calls}
    conf = confirm_stratified(cand.to_dict(), texts, judge, floor, config.confirm_strata,
                              config.confirm_per_stratum, config.seed)
    summary = {**conf.to_dict(), "floor": floor, "candidates": len(cand)}
    if conf.calls and conf.failed_calls == conf.calls:
        notes.append(f"every LLM confirmation call failed ({conf.calls}): threshold decisions kept")
        return weights, summary
    weights[:] = 0.0
    for i, w in conf.weights.items():
        weights.loc[i] = w
    notes.append(f"LLM-confirmed on a stratified sample: {conf.calls} calls over {len(cand)} candidates "
                 f"(score >= {floor:.3f}); inversion rate {conf.inversion_rate}")
    return weights, summary


def _ends(corpus: Corpus, rows: pd.DataFrame) -> str:
    """The documents at either end of ``rows`` in time, by the corpus's own ids, for an error message."""
    if not len(rows):
        return ""
    first, last = rows["timestamp"].idxmin(), rows["timestamp"].idxmax()
    name = {i: corpus.source_ids.get(i, f"row {i}") for i in (first, last)}
    return (f" (first document {name[first]} at {rows.at[first, 'timestamp'].isoformat()}, last {name[last]} at "
            f"{rows.at[last, 'timestamp'].isoformat()})")


def _sample(corpus: Corpus, i: int, score: float, confirmation: dict | None) -> dict:
    row = corpus.table.frame.loc[i]
    out = {"id": int(i), "timestamp": row["timestamp"].isoformat(), "speaker": row["speaker"],
           "score": round(score, 4), "text": row["text"]}
    if i in corpus.source_ids and corpus.source_ids[i] != str(i):
        out["source_id"] = corpus.source_ids[i]
    if confirmation and str(i) in confirmation.get("verdicts", {}):
        out["llm"] = confirmation["verdicts"][str(i)]
    return out


def _iso(t) -> str | None:
    return None if t is None else pd.Timestamp(t).isoformat()


# ---- command line ------------------------------------------------------------------------------------------
@dataclass(kw_only=True)
class TrendAskArguments(TrendConfig):
    """Count, sample, plot and report a topic over time."""

    question: str = option(help="the trend question", positional=True)
    docs: str = option(help="CSV / JSONL of {text, timestamp, source?}, or a Zyphra/LoCoMo log")
    format: str = option("auto", "the documents' format", choices=("auto", "documents", "log", "zyphra", "locomo"))
    sample: str | None = option(None, "LoCoMo sample id (default: the first)")
    tz: str | None = option(None, "zone of the calendar (default: the zone the timestamps are written in, else UTC)")
    timestamps: str = option("strict", "how log timestamps are read: strict (ISO 8601 or the dataset's format), "
        "lenient (also relative stamps, against the wall clock) or a strptime format such as '%d.%m.%Y %H:%M'")
    llm: str | dict = option("smollm2", "LLM spec for the report and confirmation, or 'none' (extractive report)")
    encoder: str | None = option(None, "dual encoder checkpoint folder or backbone (default: packaged MiniLM)")
    cache_dir: str = option(help="embedding cache ('' for none)", default_factory=lambda: default_cache_dir("trends"))
    output_dir: str = option(help="output folder: trend.json, volume.png, report.md, config.yaml (replaced "
        "whole; a folder holding other files is refused)", aliases=["--out"])

    def trend_config(self) -> TrendConfig:
        return TrendConfig(**{f.name: getattr(self, f.name) for f in fields(TrendConfig)})


def main(argv: Sequence[str] | None = None) -> int:
    _, args = parse_command({"ask": (TrendAskArguments, TrendAskArguments.__doc__)}, argv,
                            prog="python -m retrieval.trends.analysis", description=__doc__.split("\n")[0])

    from models.dual_encoder import load_encoder
    from retrieval.trends.report import check_output_dir, write_trend_outputs

    config = args.trend_config()
    try:
        check_output_dir(args.output_dir)  # before the work: the report will replace this folder whole
        corpus = load_corpus(args.docs, load_encoder(args.encoder), args.format, args.tz, args.sample,
                             args.cache_dir or None, timestamps=args.timestamps)
    except (DataError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    from retrieval.llm import llm_spec, load_backend

    backend = None
    if llm_spec(args.llm) is not None:
        try:
            backend = load_backend(args.llm)
        except Exception as e:  # no LLM: the counts, samples and plot still come out
            print(f"warning: LLM backend {args.llm!r} unavailable ({type(e).__name__}: {e}); extractive report",
                  file=sys.stderr)
    try:
        result = analyse_trend(corpus, args.question, config, backend)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    paths = write_trend_outputs(result, args.output_dir, backend=backend, config=config, settings=args)
    for warning in result.warnings:  # said first
        print(f"warning: {warning}")
    print(f"topic: {result.topic!r}  period: {result.period}  window: {result.start} .. {result.end}")
    print(f"threshold: {result.threshold.value:.3f} ({result.threshold.method})  "
          f"documents: {result.n_window} in the window, {len(result.skipped)} skipped (no usable timestamp)")
    for p in result.periods:
        ids = ", ".join(f"#{s['id']}" for s in p.samples)
        print(f"  {p.period!s:>10}  {p.n_relevant:7.1f} / {p.n_docs:<5d} {ids}")
    for note in result.notes:
        print(f"  # {note}")
    for name, path in paths.items():
        print(f"{name}: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
