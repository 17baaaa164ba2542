"""Train the temporal memory's content encoder on LoCoMo's questions and their evidence turns (accelerate).

    accelerate launch --cpu --num_processes 1 -m train.dialogue_retriever --config configs/dialogue_retriever.yaml
    accelerate launch -m train.dialogue_retriever --config configs/dialogue_retriever.yaml \\
        --train-samples conv-44,conv-47,conv-48 --output-dir runs/dialogue_retriever_fold_b
    ctbls train dialogue-retriever --config configs/dialogue_retriever.yaml   # one process

The untuned MiniLM matches a question to utterances that are about the same thing, often other questions
("Seen any good movies lately?"), more than to the utterance that answers it. Pairs: a question (as the
planner's content query: time expressions and the participants' names removed) and one of its evidence
turns, in each of the two texts the conversation table indexes (the utterance, and the utterance after the
turn it follows). Hard negatives: the best BM25 turns of the evidence's days that are not evidence, the pool
the content ranking sorts at answer time. Loss: in-batch contrastive, the table retriever's. The pairs are
tokenised once through ``datasets``, as the table retriever's are (train/data.py).
Validation: MRR@10 and top-k of the ``val_samples``' questions ranked by the temporal memory's content
ranking (dense + BM25, both views, speaker prior) within their evidence days.

Which conversations to train on is a flag: evaluating on a conversation the encoder was trained on
measures memory, not retrieval (see README, "Temporal memory").
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from models.dual_encoder import DualEncoder
from models.losses import InBatchContrastiveLoss
from retrieval.config import option, parse_config
from retrieval.data.jsonio import DataError, run_cli
from retrieval.data.locomo_qa import evidence_days, evidence_questions, read_samples, sample_id, sample_utterances
from retrieval.data.paths import default_cache_dir
from retrieval.memory.conversation_table import ConversationTable, turn_texts
from retrieval.memory.temporal_memory import TemporalMemory
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
class DialogueRetrieverArguments(TrainingArguments):
    """Train the temporal memory's content encoder."""

    output_dir: str = option("runs/dialogue_retriever", "where checkpoints and results go")
    max_document_length: int = option(128, "token limit of an utterance (with its turn)")
    locomo: str | None = option(None, "LoCoMo JSON (default: DATA_DIR/locomo/...)")
    categories: str = option("1,3,4,5", "LoCoMo QA categories to train on (2 is temporal)")
    train_samples: str | None = option(None, "comma-separated sample ids (default: all but val_samples)")
    val_samples: str = option("conv-30", "comma-separated sample ids for validation")
    hard_negatives: int = option(2, "BM25 turns of the evidence days per pair")
    cache_dir: str | None = option(help="cache folder: the tokenised pairs go to tokenized/ there ('' for none)",
                                   default_factory=default_cache_dir)

    def locomo_file(self) -> str:
        return self.locomo or str(Path(self.data_dir) / "locomo" / "locomo_open.json")


def _ids(text: str | None) -> list[str]:
    return [s.strip() for s in (text or "").split(",") if s.strip()]


def split_samples(samples: list[dict], args: DialogueRetrieverArguments) -> tuple[list[dict], list[dict]]:
    by_id = {sample_id(s, i): s for i, s in enumerate(samples)}
    val, chosen = _ids(args.val_samples), _ids(args.train_samples)
    unknown = sorted(set(val + chosen) - set(by_id))
    if unknown:
        raise DataError(f"{args.locomo_file()}: no samples {unknown} (it has {sorted(by_id)})")
    if set(val) & set(chosen):
        raise DataError(f"samples {sorted(set(val) & set(chosen))} are both trained on and validated on")
    train_ids = chosen or [i for i in by_id if i not in val]
    return [by_id[i] for i in train_ids], [by_id[i] for i in val]


def build_pairs(samples: list[dict], args: DialogueRetrieverArguments) -> list[dict]:
    categories = [int(c) for c in _ids(args.categories)]
    pairs: list[dict] = []
    for n, sample in enumerate(samples):
        utterances = sample_utterances(sample, args.locomo_file())
        memory = TemporalMemory(ConversationTable.from_utterances(utterances))
        frame = memory.table.frame
        views = {"text": frame["text"].tolist(), "turn": turn_texts(frame)}
        position = {i: p for p, i in enumerate(frame.index)}
        bm25 = {view: BM25Retriever(texts, frame.index.tolist()) for view, texts in views.items()}
        for q in evidence_questions(sample, utterances, categories):
            query = memory.rank_op(q.question)["query"]
            pool = [i for i in evidence_days(memory.table.frame, q.evidence) if i not in q.evidence]
            for view, texts in views.items():
                wrong = [i for i, _ in bm25[view].search([query], args.hard_negatives, subset=pool)[0]]
                for e in q.evidence:
                    pairs.append({"query": query, "document": texts[position[e]], "doc_id": n * 100_000 + e,
                                  "negatives": [texts[position[i]] for i in wrong],
                                  "negative_ids": [n * 100_000 + i for i in wrong]})
    return pairs


def make_validation(samples: list[dict], args: DialogueRetrieverArguments):
    categories = [int(c) for c in _ids(args.categories)]
    prepared = []
    for sample in samples:
        utterances = sample_utterances(sample, args.locomo_file())
        prepared.append((utterances, evidence_questions(sample, utterances, categories)))

    def evaluate(encoder: DualEncoder) -> dict[str, float]:
        rankings = []
        for utterances, questions in prepared:
            memory = TemporalMemory(ConversationTable.from_utterances(utterances, encoder, turns=True))
            for q in questions:
                rows = memory.table.frame.loc[evidence_days(memory.table.frame, q.evidence)]
                rankings.append((memory.rank_rows(q.question, rows, 10), set(q.evidence)))
        return ranking_metrics(rankings)

    return evaluate if prepared else None


def main(argv: list[str] | None = None) -> dict:
    args = parse_config(DialogueRetrieverArguments, argv, prog="accelerate launch -m train.dialogue_retriever",
                        description=__doc__)
    accelerator = make_accelerator(args)
    train_samples, val_samples = split_samples(read_samples(args.locomo_file()), args)
    encoder = DualEncoder.from_backbone(
        args.model_name_or_path, shared=args.shared_encoder, pooling=args.pooling, normalize=args.normalize,
        temperature=args.temperature, max_query_length=args.max_query_length,
        max_document_length=args.max_document_length)
    pairs = cap(build_pairs(train_samples, args), args.max_train_examples, args.seed)
    if not pairs:
        raise DataError(f"{args.locomo_file()}: no questions of categories {args.categories} with evidence "
                        f"in the training samples")
    accelerator.print(f"{len(pairs)} training pairs from {len(train_samples)} conversations; "
                      f"validation on {[s.get('sample_id') for s in val_samples]}")
    with accelerator.main_process_first():  # the first process tokenises, the others read its cache file
        examples = tokenized_examples(pairs, encoder, PAIR_FIELDS, tokenized_cache(args.cache_dir))
    loss_fn = InBatchContrastiveLoss(args.temperature, False, args.gather_across_processes)

    def compute_loss(model, batch):
        return loss_fn(model(batch["query"], "query"), model(batch["document"], "document"), batch["doc_id"])

    return train(args, accelerator, encoder, examples, TokenizedPairCollator(encoder), compute_loss,
                 make_validation(val_samples, args), project_name="dialogue_retriever")


def cli() -> int:
    return run_cli(main)


if __name__ == "__main__":
    sys.exit(cli())
