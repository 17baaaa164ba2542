"""The per-turn topic model (:mod:`retrieval.trends.topic_turns`, ``--threshold turns``) scored leave one chat out,
beside the trend analysis's thresholds in the same run, on the user trial's trend questions (counts keys,
:mod:`retrieval.trends.topic_labels`).

    python -m eval.trend_turn_folds --chats eval/trial eval/trial_dev2 eval/trial_dev3 eval/trial_dev4 eval/trial_dev5

The model (its features: :data:`~retrieval.trends.topic_turns.FEATURES`) is fitted on every chat but one and counts
the one left out: by the expected count (the sum of its probabilities, what ``--threshold turns`` counts) and by the
turns at probability 0.5 or more. The analysis's ``mixture`` and ``null`` thresholds count the same questions.

Per question: the share of periods within 15 % of the key's count (:func:`eval.trial_trends.within`; the periods
where either side counts something), the mean absolute count error per period, and the counted total over the key's.
"""

from __future__ import annotations

import logging
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from eval.trial_trends import within
from models.dual_encoder import load_encoder
from retrieval.atomic import write_json
from retrieval.config import option, parse_config, write_config
from retrieval.data.jsonio import INPUT_ERRORS, DataError, run_cli
from retrieval.trends.analysis import TrendConfig, analyse_trend
from retrieval.trends.periods import PERIOD_COLUMN
from retrieval.trends.planted import TurnSources
from retrieval.trends.topic_labels import labelled_topics
from retrieval.trends.topic_turns import FEATURES, TopicTurnModel, turn_features

BASELINES = ("mixture", "null")


@dataclass
class TrendTurnArguments(TurnSources):
    """A learned per-turn topic model, leave-one-chat-out, beside the trend analysis's thresholds."""

    output: str | None = option(None, "write every question's figures as JSON here")


def figures(periods: np.ndarray, truth: np.ndarray, weights: np.ndarray) -> dict:
    """Within-15 % share, count error per period and counted / key total for one question."""
    key, got = Counter(), Counter()
    for p, t, w in zip(periods, truth, weights):
        key[p] += t
        got[p] += w
    scored = [p for p in set(key) | set(got) if key[p] or round(got[p])]
    return {"within": float(np.mean([within(key[p], round(got[p])) for p in scored])) if scored else 1.0,
            "mae": float(np.mean([abs(key[p] - got[p]) for p in scored])) if scored else 0.0,
            "ratio": float(weights.sum() / max(truth.sum(), 1))}


def examples(chat_dir: str, encoder) -> list[dict]:
    """The trend questions of one chat folder (:func:`~retrieval.trends.topic_labels.labelled_topics`), each with
    its turns' features, labels and period keys, and the baselines' counted weights."""
    out = []
    for t in labelled_topics(chat_dir, encoder):
        frame = t.corpus.table.frame
        baselines = {}
        for method in BASELINES:
            config = TrendConfig(now=t.question["now"], threshold=method)
            counted = analyse_trend(t.corpus, t.question["question"], config).counted_ids()
            baselines[method] = np.array([float(i in counted) for i in frame.index])
        out.append({"chat": t.chat, "id": t.question.get("id"), "topic": t.topic,
                    "x": turn_features(t.corpus.table, t.topic), "y": t.about,
                    "periods": frame[PERIOD_COLUMN[t.period]].astype(str).to_numpy(), "baselines": baselines})
    return out


def run(args: TrendTurnArguments) -> dict:
    if len(args.chats) < 2:
        raise DataError("--chats: leave-one-chat-out needs two chats or more")
    encoder = load_encoder(args.encoder)
    data = [e for c in args.chats for e in examples(c, encoder)]
    planted = [rows for rows in [args.planted_rows(encoder)] if rows is not None]
    rows, summary = [], defaultdict(list)
    for chat in dict.fromkeys(e["chat"] for e in data):
        train = [(e["x"], e["y"]) for e in data if e["chat"] != chat] + planted
        model = TopicTurnModel.fit(np.concatenate([x for x, _ in train]), np.concatenate([y for _, y in train]))
        for e in (e for e in data if e["chat"] == chat):
            p = model.probabilities(e["x"])
            methods = {"learned, expected count": p, "learned, p >= 0.5": (p >= 0.5).astype(float),
                       **e["baselines"]}
            row = {"chat": chat, "id": e["id"], "topic": e["topic"], "key_turns": int(e["y"].sum()),
                   **{m: figures(e["periods"], e["y"], w) for m, w in methods.items()}}
            rows.append(row)
            for m in methods:
                for k, v in row[m].items():
                    summary[m, k].append(v)
    return {"chats": args.chats, "planted_log": args.planted_log or None, "features": list(FEATURES), "questions": rows,
            "summary": {m: {k: round(float(np.mean(summary[m, k])), 3) for k in ("within", "mae", "ratio")}
                        for m in dict.fromkeys(m for m, _ in summary)}}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_config(TrendTurnArguments, argv, prog="python -m eval.trend_turn_folds", description=__doc__)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    try:
        report = run(args)
    except INPUT_ERRORS as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    also = f" and planted log {args.planted_log}" if args.planted_log else ""
    print(f"{len(report['questions'])} trend questions over {len(args.chats)} chats, each chat counted by a model "
          f"fitted on the others{also}")
    print(f"{'method':<26}{'periods within 15 %':>20}{'count error / period':>22}{'counted / key':>15}")
    for m, s in report["summary"].items():
        print(f"{m:<26}{100 * s['within']:>19.1f}%{s['mae']:>22.2f}{s['ratio']:>15.2f}")
    if args.output:
        write_json(args.output, report, indent=2, default=str)
        write_config(args)
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
