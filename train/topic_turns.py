"""Train the trend analysis's per-turn topic model (:mod:`retrieval.trends.topic_turns`) on chats in which a person
marked every turn about a topic (the user trial's trend questions, :mod:`retrieval.trends.topic_labels`).

    python -m train.topic_turns --chats eval/trial eval/trial_dev2 eval/trial_dev3 eval/trial_dev4 eval/trial_dev5 \\
        --output-dir runs/topic_turns
    ctbls train topic-turns --chats ... --package-dir retrieval/trends/packaged     # the packaged model, again

The fit takes seconds (a logistic regression over 14 features per turn; embedding the chats takes longer). The folder
written (``topic_turns.json`` and a model card) is what ``--threshold turns --topic-model FOLDER`` of the trend
analysis loads. Figures for chats the model never saw: ``python -m eval.trend_turn_folds`` (leave one chat out).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from models.dual_encoder import load_encoder
from retrieval.config import option, parse_config, write_config
from retrieval.data.jsonio import DataError, run_cli
from retrieval.trends.planted import TurnSources
from retrieval.trends.topic_labels import LabelledTopic, labelled_topics
from retrieval.trends.topic_turns import FEATURES, TopicTurnModel, turn_features

logger = logging.getLogger("train.topic_turns")


@dataclass
class TopicTurnArguments(TurnSources):
    """Train the trend analysis's per-turn topic model."""

    output_dir: str = option("runs/topic_turns", "the model folder (topic_turns.json, README.md)")
    c: float = option(1.0, "the logistic regression's inverse L2 strength")
    package_dir: str | None = option(None, "also write the model and its card here: retrieval/trends/packaged is the "
        "model --threshold turns uses by default (--topic-model packaged)")


def training_rows(topics: Sequence[LabelledTopic]) -> tuple[np.ndarray, np.ndarray]:
    """Every turn of every labelled topic's chat: its features against the topic, and whether it is about it."""
    if not topics:
        raise DataError("no labelled topics to train on")
    x = [turn_features(t.corpus.table, t.topic) for t in topics]
    return np.concatenate(x), np.concatenate([t.about for t in topics])


def card(model: TopicTurnModel) -> str:
    t = model.training
    weights = "\n".join(f"| `{f}` | {w:+.3f} |" for f, w in zip(model.features, model.coef))
    p = t.get("planted")
    planted = (f", and Zyphra log {p['log']} planted with five topics as `eval.trends` plants its calibration log "
               f"({p['rows']} turn-topic rows, {p['about']} planted)") if p else ""
    return f"""---
library_name: ctbls
language: en
tags: [trends, conversational-memory, logistic-regression]
---

# The trend analysis's per-turn topic model

The probability that a turn of a conversation is about a trend's topic (`retrieval/trends/topic_turns.py`): a
logistic regression over {len(model.features)} features of the turn and of the turns around it. The trend analysis
counts a topic as the sum of these probabilities (`--threshold turns`).

Trained on {t.get('topics')} topics marked by a person in the chats {', '.join(t.get('chats', []))}
({t.get('turns')} turns, {t.get('about')} about their topic){planted}, encoder `{t.get('encoder')}`,
C = {t.get('c')}. Scored leave one chat out by `python -m eval.trend_turn_folds` and on the other planted logs by
`python -m eval.trends --topic-model` (docs/trends.md); figures on these chats and this log are in-sample.

| input | weight (standardised) |
|---|---|
{weights}
"""


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_config(TopicTurnArguments, argv, prog="python -m train.topic_turns",
                        description=__doc__.split("\n")[0])
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    encoder = load_encoder(args.encoder)
    topics = [t for chat in args.chats for t in labelled_topics(chat, encoder)]
    x, y = training_rows(topics)
    training = {"chats": list(dict.fromkeys(t.chat for t in topics)), "topics": len(topics), "turns": len(y),
                "about": int(y.sum()), "c": args.c, "encoder": encoder.identity, "features": list(FEATURES)}
    if (planted := args.planted_rows(encoder)) is not None:
        px, py = planted
        x, y = np.concatenate([x, px]), np.concatenate([y, py])
        training["planted"] = {"log": args.planted_log, "rows": len(py), "about": int(py.sum())}
    model = TopicTurnModel.fit(x, y, c=args.c, training=training)
    folder = model.save(args.output_dir, card(model))
    if args.package_dir:
        model.save(args.package_dir, card(model))
    write_config(args)
    also = f" and {args.package_dir}" if args.package_dir else ""
    print(f"topic-turn model: {len(topics)} topics of {len(training['chats'])} chats, {training['turns']} turns "
          f"({training['about']} about their topic)"
          + (f", and {training['planted']['rows']} rows of planted log {args.planted_log}" if args.planted_log else "")
          + f"; wrote {folder}{also}")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
