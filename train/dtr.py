"""Train the Dense Table Retriever (cTBLS stage 1) with accelerate.

    accelerate launch -m train.dtr --config configs/dtr.yaml
    accelerate launch --cpu -m train.dtr --config configs/dtr.yaml --output-dir runs/x --num-train-epochs 1
    accelerate launch --multi_gpu --num_processes 8 -m train.dtr --config configs/dtr_roberta.yaml
    CUDA_VISIBLE_DEVICES= accelerate launch --multi_gpu --num_processes 2 -m train.dtr --config configs/dtr.yaml
    torchrun --nproc_per_node 2 -m train.dtr --config configs/dtr.yaml      # CPU processes over gloo
    accelerate launch -m train.dtr --config configs/dtr.yaml --resume-from-checkpoint latest
    ctbls train dtr --config configs/dtr.yaml         # one process, as accelerate --cpu would

Pairs: (question, its table's text) for the questions of the train split's tables, plus
optional self-supervised (pseudo-query, table) pairs from tables outside val and test; tokenised
once through ``datasets`` (train/data.py: ``map``, cached by content; the same batches as tokenising
each batch's texts).
Validation: MRR@10 of the val split's questions over the val tables plus distractors.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass

from models.dual_encoder import DualEncoder
from models.losses import InBatchContrastiveLoss
from retrieval.config import option, parse_config
from retrieval.ctbls.table_retriever import DenseTableRetriever, TableTextSettings
from retrieval.ctbls.table_text import TABLE_FIELDS
from retrieval.data.jsonio import run_cli
from retrieval.data.ottqa import load_questions, load_tables
from retrieval.data.ottqa_conversations import table_split
from retrieval.data.paths import default_cache_dir
from retrieval.data.synthetic import pseudo_queries
from retrieval.search.bm25 import BM25Retriever
from retrieval.search.metrics import ranking_metrics
from train.args import TrainingArguments
from train.data import (
    PAIR_FIELDS,
    TokenizedPairCollator,
    cap,
    tokenized_cache,
    tokenized_examples,
)
from train.loop import make_accelerator, train


@dataclass
class DTRArguments(TrainingArguments):
    """Train the Dense Table Retriever."""

    output_dir: str = option("runs/dtr", "where checkpoints and results go")
    table_representation: str = option("header", "how a table is written as text", choices=tuple(TABLE_FIELDS))
    max_intro_words: int | None = option(64, "words of the page intro kept (none: all)")
    symmetric_loss: bool = option(False, "also rank the questions for each table")
    synthetic_per_table: int = option(0, "pseudo-queries per table outside val/test")
    max_synthetic_examples: int | None = option(None, "cap on the pseudo-query pairs")
    val_distractors: int = option(1000, "extra tables in the validation pool")
    hard_negatives: int = option(0, "BM25-mined wrong tables per pair")
    cache_dir: str | None = option(help="cache folder: the tokenised pairs go to tokenized/ there ('' for none)",
                                   default_factory=default_cache_dir)


def build_pairs(args: DTRArguments, tables: dict, settings: TableTextSettings) -> list[dict]:
    uids = sorted(tables)
    doc_id = {uid: i for i, uid in enumerate(uids)}
    pairs = [{"query": q.question, "document": settings.text(tables[q.table_id]), "doc_id": doc_id[q.table_id]}
             for q in load_questions(args.data_file("questions"))
             if q.table_id in tables and table_split(q.table_id) == "train"]
    pairs = cap(pairs, args.max_train_examples, args.seed)
    if args.synthetic_per_table:
        rng = random.Random(args.seed)
        synthetic = [{"query": text, "document": settings.text(tables[uid]), "doc_id": doc_id[uid]}
                     for uid in uids if table_split(uid) == "train"
                     for text in pseudo_queries(tables[uid], args.synthetic_per_table, rng)]
        pairs += cap(synthetic, args.max_synthetic_examples, args.seed)
    if args.hard_negatives:
        add_bm25_negatives(pairs, uids, [settings.text(tables[u]) for u in uids], args.hard_negatives)
    return pairs


def add_bm25_negatives(pairs: list[dict], uids: list[str], texts: list[str], n: int) -> None:
    """Give each pair the ``n`` best BM25 tables other than its own, as hard negatives."""
    bm25 = BM25Retriever(texts, list(range(len(uids))))
    ranked = bm25.search([p["query"] for p in pairs], n + 1)
    for pair, hits in zip(pairs, ranked):
        wrong = [i for i, _ in hits if i != pair["doc_id"]][:n]
        pair["negatives"] = [texts[i] for i in wrong]
        pair["negative_ids"] = wrong


def make_validation(args: DTRArguments, tables: dict, settings: TableTextSettings):
    questions = [q for q in load_questions(args.data_file("questions"))
                 if q.table_id in tables and table_split(q.table_id) == "val"]
    pool = sorted({q.table_id for q in questions})
    others = sorted(set(tables) - set(pool))
    pool += random.Random(args.seed).sample(others, min(args.val_distractors, len(others)))

    def evaluate(encoder: DualEncoder) -> dict[str, float]:
        retriever = DenseTableRetriever(encoder, settings)
        retriever.index_tables([tables[u] for u in pool], batch_size=args.per_device_eval_batch_size)
        ranked = retriever.retrieve([q.question for q in questions], k=10)
        return ranking_metrics(([u for u, _ in r], {q.table_id}) for r, q in zip(ranked, questions))

    return evaluate


def main(argv: list[str] | None = None) -> dict:
    args = parse_config(DTRArguments, argv, prog="accelerate launch -m train.dtr", description=__doc__)
    accelerator = make_accelerator(args)
    settings = TableTextSettings(args.table_representation, args.max_intro_words)
    tables = load_tables(args.data_file("tables"))
    encoder = DualEncoder.from_backbone(
        args.model_name_or_path, shared=args.shared_encoder, pooling=args.pooling, normalize=args.normalize,
        temperature=args.temperature, max_query_length=args.max_query_length,
        max_document_length=args.max_document_length)
    pairs = build_pairs(args, tables, settings)
    accelerator.print(f"{len(pairs)} training pairs")
    with accelerator.main_process_first():  # the first process tokenises, the others read its cache file
        examples = tokenized_examples(pairs, encoder, PAIR_FIELDS, tokenized_cache(args.cache_dir))
    loss_fn = InBatchContrastiveLoss(args.temperature, args.symmetric_loss, args.gather_across_processes)

    def compute_loss(model, batch):
        return loss_fn(model(batch["query"], "query"), model(batch["document"], "document"), batch["doc_id"])

    return train(args, accelerator, encoder, examples, TokenizedPairCollator(encoder), compute_loss,
                 make_validation(args, tables, settings), project_name="dtr", save_settings=settings.save)


def cli() -> int:
    return run_cli(main)


if __name__ == "__main__":
    sys.exit(cli())
