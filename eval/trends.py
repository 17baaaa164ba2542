"""Trend counts against known truth: topics planted at known per-period rates into real conversation logs.

    python -m eval.trends --data-dir ../shared/data --output runs/trends/eval.json      # or: ctbls eval trends
    python -m eval.trends --logs 28 41 --calibration-log 26 --periods month session --llm-topics 2 \\
        --output runs/trends/eval_llm.json

For every Zyphra log (real LoCoMo conversations), five topics the conversations never discuss are planted
as extra utterances inside the log's sessions, each topic with its own rate pattern over time (rising,
falling, spike, flat, step; :mod:`retrieval.trends.planted`), plus near misses that share the topics' words.
The truth for a topic is its planted utterances; the real utterances and near misses count as not relevant
(where the encoder scores a real utterance above the threshold, that is reported as a false positive, not
excused). Per period (day/week/month/session) it compares the estimated count with the true one: mean
absolute error, Pearson and Spearman correlation of the two series, for

- ``all_docs``: every document counts (Temporal Augmented Retrieval's relevance check, which always says yes);
- ``topk_period``: the k closest documents of each period count; ``global_topk``: the K closest overall;
- ``mixture`` (the default): where a two-component Gaussian mixture of the scores puts the topic's tail, never below
  the null threshold; chosen over ``null`` on the calibration log (planted with the calibration frames);
- ``null``: the unsupervised calibrated threshold (alpha 0.01; 0.001 and 0.05 shown for sensitivity);
- ``reference``: the 99th percentile of the topic's scores against the calibration log's real utterances;
- ``mixture, feedback 10`` / ``reference, feedback 10``: the same thresholds on the cosine to the topic's query moved
  toward its 10 closest documents (pseudo-relevance feedback, ``--feedback``; the reference log by the same
  procedure on its own documents), in the same run;
- ``labelled``: the F1-best threshold on labelled examples from another log, planted with other sentence frames;
- ``turns`` (with ``--topic-model``): the per-turn topic model's probabilities summed (``--threshold turns``), a model
  trained on other conversations (the packaged one: the user trial's chats), never on these logs;
- ``oracle_binary`` / ``oracle_stratified``: the LLM-confirmation searches with a perfect judge (the truth),
  which isolates what the original's monotonicity assumption costs from what the judge gets wrong;
- ``llm_stratified`` / ``llm_binary``: the same with the LLM as judge, on ``--llm-topics`` topics of the first
  log only (the offline SmolLM2-135M runs ~15 tokens/s here).
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from eval.relevance_folds import fold_relevance, model_for
from eval.report import run_cli
from eval.results import Headline, write_results
from eval.trend_metrics import count_metrics, decision_metrics, summarise
from eval.trend_report import print_summary
from retrieval.atomic import save_with, write_json
from retrieval.config import option, parse_config, write_config
from retrieval.data.conversation_log import load_log
from retrieval.data.paths import LOCOMO_FILE, data_dir_option, default_cache_dir
from retrieval.memory.conversation_table import ConversationTable
from retrieval.memory.relevance.rerank import Reranker
from retrieval.trends.analysis import FEEDBACK, PERIOD_COLUMN, check_feedback, enumerate_periods, topic_scores
from retrieval.trends.model_relevance import COUNT_RULES, count_weights, model_probabilities
from retrieval.trends.planted import CALIBRATION_FRAMES, TEST_FRAMES, TOPICS, build_table, plant_topics
from retrieval.trends.relevance import (
    binary_search_boundary,
    confirm_stratified,
    inversion_rate,
    labelled_threshold,
    llm_judge,
    mixture_threshold,
    null_threshold,
    reference_threshold,
)
from retrieval.trends.topic_turns import load_topic_model, topic_probabilities

DEFAULT_LOGS = ("28", "41", "42", "43", "44", "45", "47", "48")
NULL_ALPHAS = (0.01, 0.001, 0.05)


# ---- planting -------------------------------------------------------------------------------------------------
def export_documents(table: ConversationTable, truth: dict[int, str], path: str | Path) -> None:
    """The planted table as a CSV of ``id, text, timestamp, source, session, truth``."""
    frame = table.frame
    out = pd.DataFrame({"id": frame["response_idx"], "text": frame["text"],
                        "timestamp": frame["timestamp"].map(lambda t: t.isoformat()), "source": frame["speaker"],
                        "session": frame["session"], "truth": [truth.get(i, "") for i in frame.index]})
    save_with(lambda partial: out.to_csv(partial, index=False), path)


# ---- one log --------------------------------------------------------------------------------------------------
def decisions_for_topic(scores: pd.Series, relevant: set, labelled_t: float | None, reference_t: float | None,
                        floor_alpha: float, seed: int) -> tuple[dict[str, pd.Series], dict]:
    """Relevance weights (id -> [0, 1]) of the threshold methods and of the oracle-judged searches."""
    out: dict[str, pd.Series] = {}
    info: dict = {}
    if reference_t is not None:
        out["reference"] = (scores >= reference_t).astype(float)
        info["threshold_reference"] = reference_t
    out["mixture"] = (scores >= mixture_threshold(scores.to_numpy()).value).astype(float)
    for alpha in NULL_ALPHAS:
        t = null_threshold(scores.to_numpy(), alpha)
        name = "null" if alpha == NULL_ALPHAS[0] else f"null@{alpha}"
        out[name] = (scores >= t.value).astype(float)
        info[f"threshold_{name}"] = t.value
    if labelled_t is not None:
        out["labelled"] = (scores >= labelled_t).astype(float)
        info["threshold_labelled"] = labelled_t
    floor = min(info["threshold_null"], null_threshold(scores.to_numpy(), floor_alpha).value)
    cand = scores[scores >= floor].sort_values(ascending=False)
    info["candidates"] = len(cand)
    info["candidate_recall"] = len(set(cand.index) & relevant) / len(relevant) if relevant else 1.0
    # How far true relevance is from monotone in the score, among the candidates (0 = monotone).
    info["truth_inversion_rate"] = inversion_rate(cand.tolist(), [i in relevant for i in cand.index])

    def oracle(texts):
        return [t in relevant for t in texts]  # "texts" are ids here: the oracle looks up the truth

    ids = {i: i for i in cand.index}
    count, calls = binary_search_boundary(cand.index.tolist(), ids, oracle)
    w = pd.Series(0.0, index=scores.index)
    w.loc[cand.index[:count]] = 1.0
    out["oracle_binary"] = w
    info["oracle_binary_calls"] = calls
    conf = confirm_stratified(cand.to_dict(), ids, oracle, floor, n_strata=4, per_stratum=6, seed=seed)
    w = pd.Series(0.0, index=scores.index)
    for i, v in conf.weights.items():
        w.loc[i] = v
    out["oracle_stratified"] = w
    info["oracle_stratified_calls"] = conf.calls
    return out, info


def evaluate_counts(table: ConversationTable, weights: dict[str, pd.Series], scores: pd.Series, truth_ids: set,
                    periods: Sequence[str], topk: int, global_k: int) -> dict[str, dict]:
    """Per period granularity and method: per-period (true, estimated) counts and their metrics."""
    frame = table.frame
    top_global = set(scores.sort_values(ascending=False).index[:global_k])
    out: dict[str, dict] = {}
    for period in periods:
        keys = frame[PERIOD_COLUMN[period]]
        all_periods = enumerate_periods(period, frame["timestamp"].min(), frame["timestamp"].max(),
                                        frame["session"].tolist())
        is_true = frame.index.isin(list(truth_ids)).astype(float)
        true = pd.Series(is_true, index=frame.index).groupby(keys).sum().reindex(all_periods, fill_value=0.0)
        n_docs = keys.value_counts().reindex(all_periods, fill_value=0).astype(float)
        estimates = {
            "all_docs": n_docs,
            "topk_period": n_docs.clip(upper=topk),
            "global_topk": pd.Series(frame.index.isin(list(top_global)).astype(float), index=frame.index)
            .groupby(keys).sum().reindex(all_periods, fill_value=0.0),
        }
        for name, w in weights.items():
            estimates[name] = w.reindex(frame.index, fill_value=0.0).groupby(keys).sum().reindex(all_periods,
                                                                                               fill_value=0.0)
        out[period] = {name: {**count_metrics(est.to_numpy(), true.to_numpy()), "true_total": float(true.sum()),
                              "est_total": float(est.sum()), "n_periods": len(all_periods),
                              "per_period": {str(k): [float(true[k]), round(float(est[k]), 3)] for k in all_periods}}
                       for name, est in estimates.items()}
    return out


def calibrate_labelled(encoder, cal_table: ConversationTable, cal_truth: dict[int, str], n_pos: int, n_neg: int,
                       rng: random.Random, feedback: int = 0) -> dict[str, float]:
    """Per topic: the F1-best threshold on ``n_pos`` relevant and ``n_neg`` other utterances of the calibration log."""
    out = {}
    for topic, spec in TOPICS.items():
        scores = topic_scores(cal_table, spec["query"], feedback)
        pos = [i for i, t in cal_truth.items() if t == topic]
        neg = [i for i in scores.index if cal_truth.get(i) != topic]
        pos, neg = rng.sample(pos, min(n_pos, len(pos))), rng.sample(neg, min(n_neg, len(neg)))
        out[topic] = labelled_threshold(scores.loc[pos].to_numpy(), scores.loc[neg].to_numpy()).value
    return out


def llm_confirmation(table: ConversationTable, topic: str, scores: pd.Series, relevant: set, floor: float, backend,
                     periods: Sequence[str], per_stratum: int, seed: int) -> dict:
    """Stratified and binary-search LLM confirmation on one topic of one log, scored against the truth."""
    texts = table.frame["text"].to_dict()
    judge = llm_judge(backend, TOPICS[topic]["query"])
    cand = scores[scores >= floor]
    start = time.perf_counter()
    conf = confirm_stratified(cand.to_dict(), texts, judge, floor, n_strata=4, per_stratum=per_stratum, seed=seed)
    strat_s = time.perf_counter() - start
    ranked = cand.sort_values(ascending=False).index.tolist()
    start = time.perf_counter()
    count, calls = binary_search_boundary(ranked, texts, judge)
    binary_s = time.perf_counter() - start
    judged = conf.verdicts
    agree = [v == (i in relevant) for i, v in judged.items()]
    w_strat = pd.Series(0.0, index=scores.index)
    for i, v in conf.weights.items():
        w_strat.loc[i] = v
    w_bin = pd.Series(0.0, index=scores.index)
    w_bin.loc[ranked[:count]] = 1.0
    counts = evaluate_counts(table, {"llm_stratified": w_strat, "llm_binary": w_bin}, scores, relevant, periods, 10, 50)
    for period in counts:
        counts[period] = {k: v for k, v in counts[period].items() if k.startswith("llm_")}
    return {"topic": topic, "candidates": len(cand), "stratified": conf.to_dict(), "stratified_s": round(strat_s, 1),
            "judge_accuracy": sum(agree) / len(agree) if agree else None, "judged": len(judged),
            "judge_yes_rate": sum(judged.values()) / len(judged) if judged else None,
            "truth_yes_rate_of_judged": sum(i in relevant for i in judged) / len(judged) if judged else None,
            "binary_count": count, "binary_calls": calls, "binary_s": round(binary_s, 1),
            "true_relevant": len(relevant), "counts": counts}


def fold_trend_relevance(args, encoder, folder: Path, cal_table: ConversationTable, cal_truth: dict[int, str]
                         ) -> dict:
    """The fold models of every open conversation, and how their probabilities count, chosen on the calibration log
    (planted with the calibration frames, scored by its own held-out model): the probability cut with the lowest
    mean monthly count error over the topics, then the rule (a cut, or the probabilities summed) with the lower."""
    models = fold_relevance(args.folds, encoder, args.locomo or None, folder.parent, args.cache_dir or None)
    reranker = Reranker(model_for(models, args.calibration_log))
    calibration = []
    for topic, spec in TOPICS.items():
        p = model_probabilities(cal_table, spec["query"], reranker, cal_table.frame)
        calibration.append((p, {i for i, t in cal_truth.items() if t == topic}))

    def monthly_mae(rule: str, cut: float) -> float:
        return float(np.mean([evaluate_counts(cal_table, {"w": count_weights(p, rule, cut)}, p, relevant, ["month"],
                                              1, 1)["month"]["w"]["mae"] for p, relevant in calibration]))

    pooled = np.concatenate([p.to_numpy() for p, _ in calibration])
    cuts = sorted({0.5, *np.quantile(pooled[pooled > 0], np.linspace(0.5, 0.995, 60)).round(4).tolist()})
    errors = {cut: monthly_mae("count", cut) for cut in cuts}
    cut = min(cuts, key=lambda c: (errors[c], abs(c - 0.5)))
    by_rule = {"count": errors[cut], "expected": monthly_mae("expected", cut)}
    rule = min(COUNT_RULES, key=lambda r: by_rule[r])
    print(f"relevance on calibration log {args.calibration_log}: rule {rule}, probability cut {cut:.4f} (monthly MAE "
          f"{by_rule['count']:.2f} at that cut, {errors.get(0.5, float('nan')):.2f} at 0.5; {by_rule['expected']:.2f} "
          "summing the probabilities)", flush=True)
    return {"models": models, "rule": rule, "cut": cut, "calibration_mae": by_rule}


def relevance_weights(relevance: dict, log_id: str, table: ConversationTable, topic: str) -> dict[str, pd.Series]:
    """``relevance`` (the rule and cut chosen on the calibration log) and ``relevance@OTHER`` weights of one topic
    over one log; ``relevance@0.5``: the count at the probability cut 0.5."""
    p = model_probabilities(table, topic, Reranker(model_for(relevance["models"], log_id)), table.frame)
    out = {("relevance" if rule == relevance["rule"] else f"relevance@{rule}"): count_weights(p, rule, relevance["cut"])
           for rule in COUNT_RULES}
    return out | {"relevance@0.5": count_weights(p, "count", 0.5)}


# ---- the command ----------------------------------------------------------------------------------------------
@dataclass
class TrendsEvalArguments:
    """Trend counts against topics planted at known rates into real conversation logs."""

    data_dir: str = data_dir_option("zyphra_temporal/", aliases=["--data"])
    logs: list[str] = option(list(DEFAULT_LOGS), "Zyphra log ids to evaluate on")
    calibration_log: str = option("26", "log whose planted copy calibrates 'labelled'")
    feedback: int = option(0, "pseudo-relevance feedback of the topic's query (retrieval.trends.analysis.topic_vector; "
                           f"0: the query alone); the mixture and reference rows are also counted with {FEEDBACK} "
                           "(or, given a feedback, with none) in the same run")
    calibration_positives: int = option(20, "labelled on-topic examples")
    calibration_negatives: int = option(200, "labelled off-topic examples")
    periods: list[str] = option(["month", "week", "session"], "periods to count by", choices=tuple(PERIOD_COLUMN))
    peak_rate: float = option(0.08, "a topic's highest share of a session")
    topk: int = option(10, "k of the top-k-per-period baseline")
    global_k: int = option(50, "K of the global top-K baseline")
    floor_alpha: float = option(0.1, "LLM/oracle candidates: null threshold here")
    llm: str | dict = option("smollm2", "LLM spec for --llm-topics")
    llm_topics: int = option(0, "topics of the first log to confirm with the LLM")
    llm_per_stratum: int = option(4, "LLM calls per score stratum")
    encoder: str | None = option(None, "dual encoder checkpoint or backbone (default: packaged MiniLM)")
    cache_dir: str = option(help="embedding cache ('' for none)", default_factory=lambda: default_cache_dir("trends"))
    seed: int = option(0, "seed of the planting and the samples")
    output: str | None = option(None, "write the results as JSON here")
    results: str | None = option(None, "a results file for README's table (results/NAME.json: eval.results)")
    export_docs: str | None = option(None, "also write the first log, planted, as a CSV of documents (a demo input "
        "for python -m retrieval.trends.analysis; its 'truth' column holds the planted label)")
    folds: int | None = option(None, "also count with the memory's learned relevance model (retrieval.trends."
        "model_relevance), each log by the model of the leave-conversations-out fold that never saw it; its count "
        "rule chosen on the calibration log (eval.relevance_folds)")
    locomo: str = option(str(LOCOMO_FILE), "LoCoMo JSON: training data of the --folds models ('' for Zyphra only)")
    topic_model: str | None = option("packaged", "also count with the per-turn topic model, the trend analysis's "
        "default over conversations (retrieval.trends.topic_turns: 'packaged', trained on the user trial's chats and "
        "the calibration log's planted turns, never on these logs; or a folder; '' to leave it out): the sum of its "
        "probabilities, row 'turns'")

    def __post_init__(self) -> None:
        if self.calibration_log in self.logs:
            raise ValueError("the calibration log must not be an evaluation log")
        check_feedback(self.feedback, "--feedback")


def main(argv: Sequence[str] | None = None) -> dict:
    args = parse_config(TrendsEvalArguments, argv, prog="python -m eval.trends", description=__doc__)

    from models.dual_encoder import load_encoder

    encoder = load_encoder(args.encoder)
    folder = Path(args.data_dir) / "zyphra_temporal" / "ConversationData"
    rng = random.Random(f"{args.seed}:{args.calibration_log}")  # one stream per log: reruns of a subset agree
    cal_utts, cal_truth, _ = plant_topics(load_log(folder / f"{args.calibration_log}.json"), CALIBRATION_FRAMES, rng,
                                          args.peak_rate)
    cal_table = build_table(cal_utts, encoder, args.cache_dir)
    labelled = calibrate_labelled(encoder, cal_table, cal_truth, args.calibration_positives,
                                  args.calibration_negatives, rng, args.feedback)
    # The reference null: each topic against the calibration log's own (unplanted) utterances, scored by the same
    # procedure (with feedback, the query moved toward that log's own closest utterances).
    ref_table = build_table([u for u in cal_utts if not u.turn_id.startswith("planted:")], encoder, args.cache_dir)
    reference = {(topic, f): reference_threshold(topic_scores(ref_table, spec["query"], f).to_numpy(),
                                                 NULL_ALPHAS[0]).value
                 for topic, spec in TOPICS.items() for f in {args.feedback, 0, FEEDBACK}}
    relevance = fold_trend_relevance(args, encoder, folder, cal_table, cal_truth) if args.folds else None
    topic_model = load_topic_model(args.topic_model) if args.topic_model else None
    if topic_model is not None and args.topic_model == "packaged" and not topic_model.fits_encoder(encoder.identity):
        print(f"no 'turns' row: the packaged topic model is for encoder {topic_model.training.get('encoder')}, not "
              f"{encoder.identity} (--topic-model FOLDER: one trained for it)", flush=True)
        topic_model = None
    backend = None
    if args.llm_topics:
        from retrieval.llm import load_backend

        backend = load_backend(args.llm)
    rows, logs, llm_runs = [], {}, []
    for log_id in args.logs:
        utts, truth, specs = plant_topics(load_log(folder / f"{log_id}.json"), TEST_FRAMES,
                                          random.Random(f"{args.seed}:{log_id}"), args.peak_rate)
        table = build_table(utts, encoder, args.cache_dir)
        logs[log_id] = {"utterances": len(table), "planted": len(truth), "topics": specs}
        if args.export_docs and log_id == args.logs[0]:
            export_documents(table, truth, args.export_docs)
        for t_i, (topic, spec) in enumerate(TOPICS.items()):
            relevant = {i for i, t in truth.items() if t == topic}
            near = {i for i, t in truth.items() if t.startswith("near_miss:")}
            scores = topic_scores(table, spec["query"], args.feedback)
            weights, info = decisions_for_topic(scores, relevant, labelled[topic], reference[topic, args.feedback],
                                                args.floor_alpha, args.seed)
            other = FEEDBACK if not args.feedback else 0  # the same thresholds with (without) feedback, same run
            moved = topic_scores(table, spec["query"], other)
            cut = mixture_threshold(moved.to_numpy()).value
            weights |= {f"mixture, feedback {other}": (moved >= cut).astype(float),
                        f"reference, feedback {other}": (moved >= reference[topic, other]).astype(float)}
            if relevance is not None:
                weights |= relevance_weights(relevance, log_id, table, spec["query"])
            if topic_model is not None:
                weights["turns"] = topic_probabilities(table, spec["query"], topic_model, table.frame)
            logs[log_id]["topics"][topic].update(info, planted=len(relevant), decisions={
                name: decision_metrics({i for i, v in w.items() if v >= 0.5}, relevant, near, len(table) - len(truth))
                for name, w in weights.items() if not name.startswith("oracle")})
            counted = evaluate_counts(table, weights, scores, relevant, args.periods, args.topk, args.global_k)
            for period, methods in counted.items():
                for method, m in methods.items():
                    rows.append({"log": log_id, "topic": topic, "pattern": specs[topic]["pattern"], "period": period,
                                 "method": method, **m})
            if backend is not None and log_id == args.logs[0] and t_i < args.llm_topics:
                floor = min(info["threshold_null"], null_threshold(scores.to_numpy(), args.floor_alpha).value)
                llm_runs.append(llm_confirmation(table, topic, scores, relevant, floor, backend, args.periods,
                                                 args.llm_per_stratum, args.seed))
        print(f"log {log_id}: {len(table)} utterances, {len(truth)} planted", flush=True)
    summary = summarise(rows)
    print_summary(summary, logs, llm_runs)
    result = {"config": vars(args), "encoder": encoder.identity, "labelled_thresholds": labelled,
              "relevance": relevance and {k: relevance[k] for k in ("rule", "cut", "calibration_mae")},
              "reference_thresholds": {topic: reference[topic, args.feedback] for topic in TOPICS}, "summary": summary,
              "logs": logs, "llm": llm_runs, "rows": rows}
    if args.output:
        write_json(args.output, result, indent=2, default=str)
        write_config(args)
    write_results(args.results, "python -m eval.trends", argv, args, lambda: headline(summary, len(args.logs)),
                  [folder / f"{log}.json" for log in [args.calibration_log, *args.logs]])
    return result


def headline(summary: dict, n_logs: int) -> list[Headline]:
    """README's row: the default count's error per month (over a conversation, the per-turn topic model's, else the
    mixture threshold's), beside counting every document (what the original counts), the mixture threshold, the
    null threshold (the default before it) and the global top K."""
    month = summary.get("month", {})
    default = "turns" if "turns" in month else "mixture"
    if default not in month:
        return []
    base = {name: month[m]["mae"] for m, name in (("all_docs", "all documents"), ("mixture", "mixture threshold"),
                                                   ("null", "null threshold"), ("global_topk", "global top-K"))
            if m in month and m != default}
    metric = "count error per month, MAE (lower is better)" + (", per-turn topic model" if default == "turns" else "")
    return [Headline(f"Trends: 5 topics planted at known rates in {n_logs} Zyphra logs ({month[default]['n']} "
                     "log-topic pairs)", metric, month[default]["mae"], base, "none published for this test", 1, 2)]


def cli() -> int:
    return run_cli(main)


if __name__ == "__main__":
    sys.exit(cli())
