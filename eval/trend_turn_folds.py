"""Counting a topic in a person's chat with a learned per-turn model, scored leave-one-chat-out, beside the trend
analysis's thresholds in the same run: the user trial's trend questions (``counts`` keys, :mod:`eval.trial_trends`).

    python -m eval.trend_turn_folds --chats eval/trial eval/trial_dev2 eval/trial_dev3 eval/trial_dev4 eval/trial_dev5

Each chat folder holds ``chat.jsonl`` and ``questions.jsonl``; its counts questions are the examples. A turn's
features (:data:`FEATURES`) say how close it is to the question's topic (read as the trend analysis reads it): the
topic's cosine to it, with and without pseudo-relevance feedback (raw, and as a robust z within the chat), the share
of the topic's content stems it says, its BM25 score, the best feedback z of its session's turns within 1, 2 and 3
turns of it (a topic is carried by turns that do not name it: "fingers crossed", "when do you hear back?"), its
distance in turns to the nearest turn of its session that names the topic, that session's share of such turns and
its mean feedback z, and its length. A logistic regression over them is fitted on every chat but one and counts the
one left out: by the expected count (the sum of its probabilities) and by the turns at probability 0.5 or more. The
analysis's ``mixture`` and ``null`` thresholds count the same questions in the same run.

Per question: the share of periods within 15 % of the key's count (:func:`eval.trial_trends.within`; the periods
where either side counts something), the mean absolute count error per period, and the counted total over the key's.
"""

from __future__ import annotations

import logging
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd

from eval.trial_trends import ask_trend, within
from eval.user_trial import read_questions, turn_positions
from models.dual_encoder import load_encoder
from retrieval.atomic import write_json
from retrieval.config import option, parse_config, write_config
from retrieval.data.conversation_log import load_log
from retrieval.data.jsonio import INPUT_ERRORS, DataError, run_cli
from retrieval.memory.relevance.features import neighbour_best
from retrieval.memory.temporal_memory import TemporalMemory
from retrieval.memory.when_neighbours import content_stems, participant_names
from retrieval.trends.analysis import topic_scores
from retrieval.trends.periods import PERIOD_COLUMN
from retrieval.trends.question import parse_trend_question

FEATURES = ("cosine", "cosine_feedback", "z", "z_feedback", "stems", "bm25", "context_1", "context_2", "context_3",
            "stems_context_2", "seed_distance", "session_stems", "session_z", "length")
FEEDBACK = 10  # the analysis's --feedback N as it is usually run
BASELINES = ("mixture", "null")


@dataclass
class TrendTurnArguments:
    """A learned per-turn topic model, leave-one-chat-out, beside the trend analysis's thresholds."""

    chats: list[str] = option(help="chat folders, each with chat.jsonl and questions.jsonl (counts keys)")
    encoder: str | None = option(None, "dual encoder (default: packaged MiniLM)")
    output: str | None = option(None, "write every question's figures as JSON here")


def robust_z(x: np.ndarray) -> np.ndarray:
    median = np.median(x)
    return (x - median) / (1.4826 * np.median(np.abs(x - median)) + 1e-6)


def turn_features(table, topic: str) -> np.ndarray:
    """(turns, len(FEATURES)) for every turn of ``table`` against ``topic``."""
    frame = table.frame
    names, ids = participant_names(frame), frame.index.tolist()
    cosine, feedback = topic_scores(table, topic).to_numpy(), topic_scores(table, topic, FEEDBACK).to_numpy()
    z, zf = robust_z(cosine), robust_z(feedback)
    wanted = content_stems(topic, names)
    stems = np.array([len(content_stems(t, names) & wanted) / max(len(wanted), 1) for t in frame["text"]])
    bm25 = dict(table.rank_sparse(topic, k=len(table)))
    bm = np.array([bm25.get(i, 0.0) for i in frame.index])
    sessions = frame["session"].to_numpy()
    seeds = np.flatnonzero(stems > 0)
    distance = np.array([min([abs(i - j) for j in seeds if sessions[j] == sessions[i]] + [10]) for i in
                         range(len(frame))], dtype=float)
    by_session = pd.Series(stems > 0).groupby(sessions)
    return np.column_stack([
        cosine, feedback, z, zf, stems, bm / (bm.max() + 1e-9),
        *(neighbour_best(frame, ids, zf, w, -5.0) for w in (1, 2, 3)),
        neighbour_best(frame, ids, stems, 2), distance / 10, by_session.transform("mean").to_numpy(),
        pd.Series(zf).groupby(sessions).transform("mean").to_numpy(),
        np.log1p([len(str(t).split()) for t in frame["text"]])])


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


def examples(chat_dir: Path, encoder) -> list[dict]:
    """The counts questions of one chat folder, each with its turns' features, labels and period keys, and the
    baselines' counted weights."""
    chat, path = chat_dir / "chat.jsonl", chat_dir / "questions.jsonl"
    questions = [q for q in read_questions(path) if q["key"]["expect"] == "counts"]
    if not questions:
        raise DataError(f"{path}: no counts questions")
    position = turn_positions(load_log(chat), questions, path)
    memory = TemporalMemory.from_file(chat, encoder=encoder, cache_dir=None)
    frame, out = memory.table.frame, []
    for q in questions:
        topic = parse_trend_question(q["question"], datetime.fromisoformat(q["now"]), participant_names(frame)).topic
        y = np.zeros(len(frame))
        y[[position[t] for t in q["key"]["turns"]]] = 1.0
        baselines = {}
        for method in BASELINES:
            counted = ask_trend(memory, q, method).counted_ids()
            baselines[method] = np.array([float(i in counted) for i in frame.index])
        out.append({"chat": chat_dir.name, "id": q["id"], "topic": topic, "x": turn_features(memory.table, topic),
                    "y": y, "periods": frame[PERIOD_COLUMN[q["key"]["period"]]].astype(str).to_numpy(),
                    "baselines": baselines})
    memory.close()
    return out


def run(args: TrendTurnArguments) -> dict:
    from sklearn.linear_model import LogisticRegression

    if len(args.chats) < 2:
        raise DataError("--chats: leave-one-chat-out needs two chats or more")
    encoder = load_encoder(args.encoder)
    data = [e for c in args.chats for e in examples(Path(c), encoder)]
    rows, summary = [], defaultdict(list)
    for chat in dict.fromkeys(e["chat"] for e in data):
        train = [e for e in data if e["chat"] != chat]
        x, y = np.concatenate([e["x"] for e in train]), np.concatenate([e["y"] for e in train])
        mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-9
        model = LogisticRegression(max_iter=3000).fit((x - mean) / scale, y)
        for e in (e for e in data if e["chat"] == chat):
            p = model.predict_proba((e["x"] - mean) / scale)[:, 1]
            methods = {"learned, expected count": p, "learned, p >= 0.5": (p >= 0.5).astype(float),
                       **e["baselines"]}
            row = {"chat": chat, "id": e["id"], "topic": e["topic"], "key_turns": int(e["y"].sum()),
                   **{m: figures(e["periods"], e["y"], w) for m, w in methods.items()}}
            rows.append(row)
            for m in methods:
                for k, v in row[m].items():
                    summary[m, k].append(v)
    return {"chats": args.chats, "features": list(FEATURES), "questions": rows,
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
    print(f"{len(report['questions'])} trend questions over {len(args.chats)} chats, each chat counted by a model "
          "fitted on the others")
    print(f"{'method':<26}{'periods within 15 %':>20}{'count error / period':>22}{'counted / key':>15}")
    for m, s in report["summary"].items():
        print(f"{m:<26}{100 * s['within']:>19.1f}%{s['mae']:>22.2f}{s['ratio']:>15.2f}")
    if args.output:
        write_json(args.output, report, indent=2, default=str)
        write_config(args)
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
