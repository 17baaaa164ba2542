"""Train the coarse cell state tracker (cTBLS stage 2) with accelerate.

    accelerate launch -m train.state_tracker --config configs/state_tracker.yaml
    accelerate launch --cpu -m train.state_tracker --config configs/state_tracker.yaml --loss triplet
    accelerate launch -m train.state_tracker --config configs/state_tracker_roberta.yaml
    accelerate launch --cpu -m train.state_tracker --config configs/state_tracker_sqa.yaml
    ctbls train tracker --config configs/state_tracker.yaml   # one process

Examples: every turn of the train split's conversations with an answer cell gives
(history + query, answer cell, K other cells of the same table); see train/triplets.py. ``--dataset``
chooses the conversations (retrieval/data/conversation_sets.py): OTT-QA's questions grouped by table, or
SQA's question sequences (``--dataset sqa``, whose answer sets give ``--positives-per-turn`` examples a turn). They are
tokenised once through ``datasets`` (train/data.py), the batches the same as tokenising their texts.
With --synthetic-per-table N, N pseudo-query turns per train table join them
(retrieval/data/synthetic.py: other cells of the row, the column header, a span of the linked page).
Loss: the paper's triplet margin loss (L2 distance) over the K negatives, or the DTR's
in-batch contrastive loss with the K negatives added to the batch's documents.
Validation: MRR@10 of the selection split's turns (OTT-QA val, SQA dev) over their own (gold) table's cells.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass
from pathlib import Path

import torch

from models.dual_encoder import DualEncoder
from models.losses import InBatchContrastiveLoss, triplet_margin_loss
from retrieval.atomic import write_json
from retrieval.config import option, parse_config
from retrieval.ctbls.cell_text import ROW_CONTEXTS, CellTextSettings
from retrieval.ctbls.state_tracker import CellStateTracker, dialogue_turns
from retrieval.data.conversation_sets import (
    DATASETS,
    ConversationSet,
    load_conversation_set,
    selection_split,
)
from retrieval.data.jsonio import run_cli
from retrieval.data.paths import default_cache_dir
from retrieval.data.synthetic import pseudo_cell_queries
from retrieval.data.types import Conversation, Turn
from retrieval.search.metrics import ranking_metrics
from train.args import TrainingArguments
from train.data import (
    TRIPLET_FIELDS,
    TokenizedTripletCollator,
    cap,
    tokenized_cache,
    tokenized_examples,
)
from train.loop import make_accelerator, train
from train.triplets import MINERS, build_triplets

LOSSES = ("triplet", "contrastive")


@dataclass
class StateTrackerArguments(TrainingArguments):
    """Train the coarse cell state tracker."""

    output_dir: str = option("runs/state_tracker", "where checkpoints and results go")
    dataset: str = option("ottqa", "ottqa (OTT-QA's questions grouped by table) or sqa (SQA's question sequences, "
                                   "DATA_DIR/sqa; --questions: any TSV in its format)", choices=DATASETS)
    positives_per_turn: int = option(1, "answer cells of a turn each made an example (SQA's answers are sets)")
    max_query_length: int = option(128, "token limit of the history + query")
    max_document_length: int = option(96, "token limit of a cell's text")
    loss: str = option("triplet", "triplet (cTBLS) or contrastive (the DTR's)", choices=LOSSES)
    margin: float = option(1.0, "triplet margin (L2 distance)")
    random_negatives: int = option(1, "random cells of the table per example")
    hard_negatives: int = option(2, "mined cells of the table per example")
    row_col_negatives: int = option(1, "cells of the answer's row and column per example")
    hard_negative_miner: str = option("bm25", "bm25, model (the starting encoder) or none", choices=MINERS)
    row_context: str = option("key", "key, row or none: what of the cell's row it carries", choices=ROW_CONTEXTS)
    max_row_words: int = option(32, "words of the row context kept")
    use_passages: bool = option(True, "append the linked page's intro ('txt: ...')")
    max_passage_words: int | None = option(48, "words of the linked intro kept")
    history_turns: int | None = option(None, "earlier turns kept (none = all that fit)")
    history_answers: bool = option(True, "earlier turns' answers in the history text")
    val_max_tables: int | None = option(None, "cap on val tables (quick runs)")
    synthetic_per_table: int = option(0, "self-supervised (pseudo-query, cell) turns per train-split table, added to "
        "the real turns")
    cache_dir: str | None = option(help="cache folder: cell embeddings for mining, the tokenised triplets in "
                                        "tokenized/ ('' for none)", default_factory=default_cache_dir)

    def __post_init__(self) -> None:
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}")
        if self.hard_negative_miner not in MINERS:
            raise ValueError(f"hard_negative_miner must be one of {MINERS}")
        if self.positives_per_turn < 1:
            raise ValueError("positives_per_turn must be at least 1")

    def conversation_set(self, split: str) -> ConversationSet:
        """The conversations of ``split`` of the dataset, from the data files the arguments name."""
        return load_conversation_set(self.dataset, split, self.data_dir, self.questions, self.tables, self.passages,
                                     self.use_passages)

    def text_settings(self) -> CellTextSettings:
        return CellTextSettings(row_context=self.row_context, max_row_words=self.max_row_words,
                                passages=self.use_passages,
                                max_passage_words=self.max_passage_words, history_turns=self.history_turns,
                                history_answers=self.history_answers)


def make_validation(args: StateTrackerArguments, val: ConversationSet, settings: CellTextSettings):
    """MRR@10 (and top-k) of the selection split's turns over their own table's cells (the conversations of its
    first ``val_max_tables`` tables)."""
    uids = list(dict.fromkeys(c.table_id for c in val.conversations))[: args.val_max_tables]
    conversations = [c for c in val.conversations if c.table_id in set(uids)]
    turns = [(c.table_id, prev, t) for c in conversations for prev, t in dialogue_turns(c) if t.targets]

    def evaluate(encoder: DualEncoder) -> dict[str, float]:
        tracker = CellStateTracker(encoder, settings)
        tracker.index_tables([val.tables[u] for u in uids], val.passages,
                             batch_size=args.per_device_eval_batch_size)
        ranked = tracker.rank_texts([tracker.history(p, t.query) for _, p, t in turns], [u for u, *_ in turns], 10)
        return ranking_metrics(([i[1:] for i, _ in r], set(t.targets)) for r, (_, _, t) in zip(ranked, turns))

    return evaluate


def synthetic_conversations(conversations: list, tables: dict, passages: dict, per_table: int, seed: int) -> list:
    """One-turn conversations of pseudo-queries over the tables of ``conversations`` (train split only)."""
    rng = random.Random(seed)
    uids = sorted({c.table_id for c in conversations if c.table_id in tables})
    return [Conversation(f"synthetic:{uid}:{n}", uid, [Turn(f"synthetic:{uid}:{n}", query, table_id=uid,
                                                            targets=[target])])
            for uid in uids for n, (query, target) in enumerate(pseudo_cell_queries(tables[uid], per_table, rng,
                                                                                     passages))]


def main(argv: list[str] | None = None) -> dict:
    args = parse_config(StateTrackerArguments, argv, prog="accelerate launch -m train.state_tracker",
                        description=__doc__)
    accelerator = make_accelerator(args)
    settings = args.text_settings()
    data = args.conversation_set("train")  # with --use-passages a missing passages file is an error, not none
    tables, passages = data.tables, data.passages
    encoder = DualEncoder.from_backbone(
        args.model_name_or_path, shared=args.shared_encoder, pooling=args.pooling, normalize=args.normalize,
        temperature=args.temperature, max_query_length=args.max_query_length,
        max_document_length=args.max_document_length)
    tracker = CellStateTracker(encoder, settings)
    conversations = data.conversations
    if args.synthetic_per_table:
        conversations += synthetic_conversations(conversations, tables, passages, args.synthetic_per_table, args.seed)
    with accelerator.main_process_first():
        examples, counts = build_triplets(
            conversations, tables, tracker, passages, args.random_negatives,
            args.hard_negatives, args.row_col_negatives, args.hard_negative_miner, args.seed, args.cache_dir,
            args.positives_per_turn)
    examples = cap(examples, args.max_train_examples, args.seed)
    accelerator.print(f"{len(examples)} training triplets; {dict(counts)}")
    if accelerator.is_main_process:
        write_json(Path(args.output_dir, "training_data.json"), {"examples": len(examples), **counts}, indent=2)

    with accelerator.main_process_first():  # the first process tokenises, the others read its cache file
        tokenized = tokenized_examples(examples, encoder, TRIPLET_FIELDS, tokenized_cache(args.cache_dir))
    contrastive = InBatchContrastiveLoss(args.temperature, False, args.gather_across_processes)

    def compute_loss(model, batch):
        anchors = model(batch["anchor"], "query")  # (B, D)
        positives = model(batch["positive"], "document")  # (B, D)
        negatives = model(batch["negatives"], "document")  # (B*K, D)
        if args.loss == "triplet":
            return triplet_margin_loss(anchors, positives, negatives.view(len(anchors), -1, anchors.shape[-1]),
                                       args.margin)
        ids = torch.cat([batch["pos_id"], batch["neg_ids"].flatten()])
        return contrastive(anchors, torch.cat([positives, negatives]), ids)

    return train(args, accelerator, encoder, tokenized, TokenizedTripletCollator(encoder), compute_loss,
                 make_validation(args, args.conversation_set(selection_split(args.dataset)), settings),
                 project_name="state_tracker",
                 save_settings=settings.save)


def cli() -> int:
    return run_cli(main)


if __name__ == "__main__":
    sys.exit(cli())
