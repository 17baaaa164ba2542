"""Fit the state-aware re-ranker of a trained cell state tracker (retrieval/ctbls/state_rerank.py) on SQA.

    python -m train.state_rerank --tracker runs/state_tracker_sqa                 # writes TRACKER/state_rerank.json
    python -m train.state_rerank --tracker runs/state_tracker_sqa --train-tables 300 --questions FILE.tsv

Rows: every turn of ``--train-tables`` tables drawn at random from SQA's train tables (their cells encoded with the
tracker: about 20 ms a cell on CPU), ranked by the tracker with the reference history in the anchor (as in its
training), the previous answer being the reference one; each answer cell is a positive, the tracker's top
``--top-negatives`` other cells and ``--random-negatives`` more drawn from the rest are negatives. Every model of
:data:`GRID` is fitted on those rows and scored on the dev tables (every cell of every turn re-ranked): the one
with the best top-3 from the second question on (ties: MRR@10 over all turns) is saved, with the dev scores of the
whole grid and of the tracker alone in its ``report``. Validation tables are never read here.
"""

from __future__ import annotations

import random
import sys
import time
from dataclasses import asdict, dataclass

import numpy as np
from tqdm.auto import tqdm

from retrieval.config import option, parse_config, write_config
from retrieval.ctbls.state_features import StateFeaturizer, TurnState
from retrieval.ctbls.state_rerank import (
    RERANK_FILE,
    RerankSettings,
    StateReranker,
    reference_state,
    whole_table_rankings,
)
from retrieval.ctbls.state_tracker import CellStateTracker, dialogue_turns
from retrieval.data.conversation_sets import ConversationSet, load_conversation_set, selection_split
from retrieval.data.jsonio import DataError, run_cli
from retrieval.data.paths import data_dir_option, default_cache_dir
from retrieval.search.metrics import ranking_metrics

GRID = (RerankSettings("logistic", c=1.0), RerankSettings("hgb", 300, 4, learning_rate=0.05),
        RerankSettings("hgb", 600, 6, learning_rate=0.05), RerankSettings("hgb", 1000, 8, learning_rate=0.05))


@dataclass
class TurnExample:
    """One turn for the re-ranker: its table's uid, its state, the tracker's ranking and its answer cells."""

    table_uid: str
    state: TurnState
    ranked: list
    relevant: set


def turn_examples(tracker: CellStateTracker, data: ConversationSet, batch_size: int, cache_dir: str | None
                  ) -> list[TurnExample]:
    """Every turn of ``data`` with an answer cell, ranked with the reference history in the anchor."""
    tracker.index_tables(data.tables.values(), batch_size=batch_size, cache_dir=cache_dir, show_progress_bar=True)
    turns = [(c, p, t) for c in data.conversations for p, t in dialogue_turns(c) if t.targets]
    anchors = [tracker.history(p, t.query) for _, p, t in turns]
    ranked = whole_table_rankings(tracker, anchors, [c.table_id for c, *_ in turns], batch_size)
    out = []
    for (conv, previous, turn), cells in zip(turns, ranked):
        out.append(TurnExample(conv.table_id, reference_state(conv, len(previous)), cells,
                               {(conv.table_id, r, c) for r, c in turn.targets}))
    return out


def feature_rows(examples: list[TurnExample], data: ConversationSet, top_negatives: int, random_negatives: int,
                 seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(N, F) features and (N,) labels: each turn's answer cells and the negatives described in the module."""
    rng = random.Random(seed)
    featurizer = StateFeaturizer()
    xs, ys = [], []
    for ex in tqdm(examples, desc="re-ranker features", unit="turn"):
        ids, x = featurizer(ex.ranked, data.tables[ex.table_uid], ex.state)
        row = {cell: i for i, cell in enumerate(ids)}
        others = [cell for cell, _ in ex.ranked if cell not in ex.relevant and cell in row]
        rest = others[top_negatives:]
        keep = [row[c] for c in ex.relevant if c in row] + [row[c] for c in others[:top_negatives]]
        keep += [row[c] for c in rng.sample(rest, min(random_negatives, len(rest)))]
        xs.append(x[keep])
        ys.append(np.array([ids[i] in ex.relevant for i in keep], dtype=np.int64))
    if not xs:
        raise DataError("no turn with an answer cell to fit the re-ranker on")
    return np.concatenate(xs), np.concatenate(ys)


def ranking_scores(rankings: list[list], examples: list[TurnExample]) -> dict:
    """MRR@10 / top-1/3/10 over all turns and from the second question on."""
    pairs = [([cell for cell, _ in r], ex.relevant) for r, ex in zip(rankings, examples)]
    later = [pair for pair, ex in zip(pairs, examples) if ex.state.position >= 1]
    return {"all": ranking_metrics(pairs), "from_turn2": ranking_metrics(later)}


def reranked(reranker: StateReranker, examples: list[TurnExample], data: ConversationSet) -> list[list]:
    return [reranker.rerank(ex.ranked, data.tables[ex.table_uid], ex.state) for ex in examples]


@dataclass
class StateRerankArguments:
    """Fit the state-aware re-ranker on train tables, choose its settings on dev, save it with the tracker."""

    tracker: str = option(help="trained tracker folder (train/state_tracker.py --dataset sqa)")
    data_dir: str = data_dir_option("sqa/")
    questions: str | None = option(None, "a questions TSV in SQA's format (default DATA_DIR/sqa/train.tsv)")
    train_tables: int = option(200, "train tables whose turns the re-ranker is fitted on (0: all; CPU: cells are "
                                    "encoded)")
    dev_tables: int = option(0, "dev tables the settings are chosen on (0: all)")
    top_negatives: int = option(30, "the tracker's top non-answer cells a training turn keeps as negatives")
    random_negatives: int = option(10, "other non-answer cells a training turn keeps, drawn at random")
    seed: int = option(0, "seed of the table draw, the negatives and the models")
    batch_size: int = option(64, "encoder batch size")
    cache_dir: str = option(help="cell embedding cache ('' to disable)", default_factory=default_cache_dir)
    output: str | None = option(None, f"where the re-ranker goes (default TRACKER/{RERANK_FILE})")

    def __post_init__(self) -> None:
        for name in ("train_tables", "dev_tables"):
            if getattr(self, name) < 0:
                raise ValueError(f"--{name.replace('_', '-')} must be 0 (all) or more, got {getattr(self, name)}")
        if self.output is None:
            self.output = f"{self.tracker.rstrip('/')}/{RERANK_FILE}"


def _sample(data: ConversationSet, n: int, seed: int) -> ConversationSet:
    """The conversations over ``n`` of ``data``'s tables drawn at random (all when ``n`` is 0 or more than it has)."""
    uids = sorted({c.table_id for c in data.conversations})
    if 0 < n < len(uids):
        uids = sorted(random.Random(seed).sample(uids, n))
    keep = set(uids)
    return ConversationSet(data.dataset, data.split, [c for c in data.conversations if c.table_id in keep],
                           {u: data.tables[u] for u in uids}, data.passages, data.answer_texts, data.report)


def main(argv: list[str] | None = None) -> dict:
    a = parse_config(StateRerankArguments, argv, prog="python -m train.state_rerank", description=__doc__)
    started = time.perf_counter()
    tracker = CellStateTracker.from_pretrained(a.tracker)
    cache = a.cache_dir or None
    train = _sample(load_conversation_set("sqa", "train", a.data_dir, a.questions), a.train_tables, a.seed)
    dev = _sample(load_conversation_set("sqa", selection_split("sqa"), a.data_dir, a.questions), a.dev_tables,
                  a.seed)
    train_examples = turn_examples(tracker, train, a.batch_size, cache)
    x, y = feature_rows(train_examples, train, a.top_negatives, a.random_negatives, a.seed)
    dev_examples = turn_examples(tracker, dev, a.batch_size, cache)
    scores = {"tracker alone": ranking_scores([ex.ranked for ex in dev_examples], dev_examples)}
    fitted = {}
    for settings in tqdm(GRID, desc="re-ranker grid", unit="model"):
        fitted[settings.name] = StateReranker(settings).fit(x, y)
        scores[settings.name] = ranking_scores(reranked(fitted[settings.name], dev_examples, dev), dev_examples)
        print(f"dev {settings.name}: from the second question top-3 {scores[settings.name]['from_turn2']['top3']:.3f}"
              f", all MRR@10 {scores[settings.name]['all']['mrr@10']:.3f}")
    best = max(fitted, key=lambda n: (scores[n]["from_turn2"]["top3"], scores[n]["all"]["mrr@10"]))
    reranker = fitted[best]
    reranker.report = {"chosen": best, "chosen_on": dev.split, "settings": asdict(reranker.settings),
                       "dev_scores": scores, "train_tables": len(train.tables), "train_turns": len(train_examples),
                       "train_rows": int(len(y)), "train_positives": int(y.sum()), "dev_tables": len(dev.tables),
                       "dev_turns": len(dev_examples), "tracker": a.tracker, "seed": a.seed,
                       "runtime_s": round(time.perf_counter() - started, 1)}
    reranker.save(a.output)
    print(f"chosen on {dev.split}: {best}; tracker alone from the second question top-3 "
          f"{scores['tracker alone']['from_turn2']['top3']:.3f}, re-ranked {scores[best]['from_turn2']['top3']:.3f}"
          f" -> {a.output}")
    write_config(a)
    return reranker.report


def cli() -> int:
    return run_cli(main)


if __name__ == "__main__":
    sys.exit(cli())
