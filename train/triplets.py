"""Training triplets for the state tracker: (history, answer cell, other cells of the same table).

An answer that is a set of cells (SQA's "which of those were held in May?") gives several positives per turn,
each an example with the same anchor.

Negatives that matter (counted per example, fixed so batches stack): random cells of the
table, hard cells that BM25 or the starting encoder ranks highest for the history, and
cells sharing the answer's row or column. Cells holding the same value as an answer cell
are never negatives: they are the same answer written twice.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping

import numpy as np
import torch

from models.dual_encoder import DualEncoder
from retrieval.ctbls.cell_text import CellId, cells_by_table
from retrieval.ctbls.state_tracker import CellStateTracker, dialogue_turns
from retrieval.data.types import Conversation, Table
from retrieval.search.bm25 import BM25Retriever
from retrieval.search.cached_index import cached_index

MINERS = ("bm25", "model", "none")


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def mine_hard(miner: str, tracker: CellStateTracker, anchors: list[str], table_uids: list[str],
              ids: list[CellId], texts: list[str], k: int, cache_dir: str | None = None) -> list[list[CellId]]:
    """The top-k cells of each anchor's table, by BM25 or by the tracker's (starting) encoder."""
    subsets = cells_by_table(ids)
    if miner == "bm25":
        bm25 = BM25Retriever(texts, ids)
        return [[i for i, _ in bm25.search([a], k, subset=subsets[u])[0]] for a, u in zip(anchors, table_uids)]
    if miner == "model":
        enc = tracker.encoder
        index = cached_index(enc, texts, ids, cache_dir)
        queries = enc.encode_queries(anchors)
        return [[i for i, _ in index.search(q[None], k, subset=subsets[u])[0]] for q, u in zip(queries, table_uids)]
    raise ValueError(f"unknown hard negative miner {miner!r}; choose from {MINERS}")


def build_triplets(conversations: list[Conversation], tables: Mapping[str, Table], tracker: CellStateTracker,
                   passages: Mapping[str, str] | None, random_negatives: int, hard_negatives: int,
                   row_col_negatives: int, miner: str = "bm25", seed: int = 0, cache_dir: str | None = None,
                   positives_per_turn: int = 1) -> tuple[list[dict], Counter]:
    """Examples {"anchor", "positive", "negatives", "pos_id", "neg_ids"}: per turn with an answer cell, one for
    each of up to ``positives_per_turn`` of its answer cells (the first, then others at random), each with its
    own negatives (of its row and column) and the turn's mined ones.

    Returns the examples and counts of what was skipped or padded (turns without an answer
    cell, tables with no other cell to be a negative, negatives drawn twice for lack of cells).
    """
    rng = random.Random(seed)
    counts: Counter = Counter()
    counts["conversations_with_missing_table"] = sum(c.table_id not in tables for c in conversations)
    used = [tables[u] for u in dict.fromkeys(c.table_id for c in conversations if c.table_id in tables)]  # once each
    ids, texts, stats = tracker.cells(used, passages)
    counts.update({f"cells_{k}": v for k, v in stats.as_dict().items()})
    number = {i: n for n, i in enumerate(ids)}
    text_of = dict(zip(ids, texts))

    turns = [(c, prev, t) for c in conversations if c.table_id in tables for prev, t in dialogue_turns(c)]
    counts["turns_without_answer_cell"] = sum(1 for *_, t in turns if not t.targets)
    turns = [x for x in turns if x[2].targets]
    anchors = [tracker.history(prev, t.query) for _, prev, t in turns]
    k_hard = hard_negatives + 8  # room for answer cells and duplicates of the answer value
    hard = (mine_hard(miner, tracker, anchors, [c.table_id for c, *_ in turns], ids, texts, k_hard, cache_dir)
            if hard_negatives and miner != "none" else [[] for _ in turns])

    examples = []
    n_neg = random_negatives + hard_negatives + row_col_negatives
    for (conv, _, turn), anchor, mined in zip(turns, anchors, hard):
        table = tables[conv.table_id]
        answers = {_norm(table.cell(r, c).text) for r, c in turn.targets}
        pool = [(conv.table_id, r, c) for r, cells in enumerate(table.rows) for c, cell in enumerate(cells)
                if (r, c) not in turn.targets and _norm(cell.text) not in answers]
        if not pool:
            counts["turns_without_negative_cell"] += 1
            continue
        # several positives for an answer set (SQA): the first answer cell, then others drawn at random
        others = rng.sample(turn.targets[1:], min(positives_per_turn, len(turn.targets)) - 1) \
            if positives_per_turn > 1 else []
        for row, col in [turn.targets[0], *others]:
            chosen = _negatives(pool, mined, row, col, hard_negatives, row_col_negatives, n_neg, rng, counts)
            positive = (conv.table_id, row, col)
            examples.append({"anchor": anchor, "positive": text_of[positive], "pos_id": number[positive],
                             "negatives": [text_of[i] for i in chosen], "neg_ids": [number[i] for i in chosen]})
    counts["examples"] = len(examples)
    return examples, counts


def _negatives(pool: list[CellId], mined: list[CellId], row: int, col: int, hard_negatives: int,
               row_col_negatives: int, n_neg: int, rng: random.Random, counts: Counter) -> list[CellId]:
    """``n_neg`` cells of ``pool`` (the table's cells that are not answers): the mined ones first, then cells of the
    positive's row or column, then others at random (drawn again when the table is too small)."""
    allowed = set(pool)
    chosen: list[CellId] = [i for i in mined if i in allowed][:hard_negatives]
    line = [i for i in pool if (i[1] == row or i[2] == col) and i not in chosen]
    chosen += rng.sample(line, min(row_col_negatives, len(line)))
    rest = [i for i in pool if i not in chosen]
    chosen += rng.sample(rest, min(n_neg - len(chosen), len(rest)))
    if len(chosen) < n_neg:  # a small table: draw again with replacement so batches stack
        counts["examples_with_repeated_negatives"] += 1
        chosen += rng.choices(pool, k=n_neg - len(chosen))
    return chosen


class TripletCollator:
    """Tokenises anchors (query side), positives and the flattened (B*K) negatives (document side)."""

    def __init__(self, encoder: DualEncoder):
        self.encoder = encoder

    def __call__(self, batch: list[dict]) -> dict:
        return {
            "anchor": self.encoder.tokenize([b["anchor"] for b in batch], "query"),
            "positive": self.encoder.tokenize([b["positive"] for b in batch], "document"),
            "negatives": self.encoder.tokenize([n for b in batch for n in b["negatives"]], "document"),
            "pos_id": torch.tensor([b["pos_id"] for b in batch], dtype=torch.long),
            "neg_ids": torch.tensor(np.array([b["neg_ids"] for b in batch]), dtype=torch.long),  # (B, K)
        }
