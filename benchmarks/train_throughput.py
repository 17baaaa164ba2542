"""Training throughput (pairs/s) of the DTR's training loop against sentence-transformers' own trainer.

    python -m benchmarks.train_throughput --output runs/bench/train.json
    python -m benchmarks.train_throughput --steps 12 --repeats 2 --batch-size 16 --max-length 64

Both train the packaged all-MiniLM-L6-v2 on the same OTT-QA (question, table text) pairs with the
same batch, sequence length (queries and tables both cut at ``--max-length`` tokens), learning
rate and in-batch negatives loss (ours: ``InBatchContrastiveLoss``, temperature 0.05; theirs:
``MultipleNegativesRankingLoss``, scale 20 = 1/0.05), fp32, one process. Ours runs
:func:`train.loop.train`, the loop ``train/dtr.py`` runs, with train/dtr.py's pairs, collator and
loss; theirs runs ``SentenceTransformerTrainer.train``. Throughput is timed from the start of step
``--warmup`` + 1 to the start of the last step (steps started, by the loss call or the trainer's
``on_step_begin``), so loading, the first steps and saving are left out of both alike. The two
alternate ``--repeats`` times; the ratio is per round, then the median.

This benchmark lives in ``train/`` because it runs the training loop (nothing outside ``train/``
imports it).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from benchmarks.common import (
    RunArguments,
    command_line,
    limit_threads,
    load_average,
    machine,
    write_report,
)
from eval.report import print_table
from retrieval.config import option, parse_config, write_config


def training_pairs(n: int, seed: int) -> list[dict]:
    from retrieval.ctbls.table_retriever import TableTextSettings
    from retrieval.data.ottqa import load_tables
    from train import dtr

    args = dtr.DTRArguments(max_train_examples=n, seed=seed)
    settings = TableTextSettings(args.table_representation, args.max_intro_words)
    return dtr.build_pairs(args, load_tables(args.data_file("tables")), settings)


def throughput(starts: list[float], batch: int, warmup: int) -> float:
    """Pairs/s between the start of step warmup+1 and the start of the last step."""
    s = starts[warmup:]
    return batch * (len(s) - 1) / (s[-1] - s[0])


def run_ours(pairs: list[dict], batch: int, max_length: int, steps: int, lr: float, seed: int) -> list[float]:
    from accelerate.state import AcceleratorState

    from models.dual_encoder import DualEncoder
    from models.losses import InBatchContrastiveLoss
    from train.args import TrainingArguments
    from train.data import PairCollator
    from train.loop import make_accelerator, train

    AcceleratorState._reset_state(True)
    with tempfile.TemporaryDirectory() as out:
        args = TrainingArguments(output_dir=out, per_device_train_batch_size=batch, max_train_steps=steps,
                                 learning_rate=lr, num_warmup_steps=0, max_query_length=max_length,
                                 max_document_length=max_length, seed=seed)
        accelerator = make_accelerator(args)
        encoder = DualEncoder.from_backbone("packaged:minilm", max_query_length=max_length,
                                            max_document_length=max_length, temperature=0.05)
        loss_fn = InBatchContrastiveLoss(0.05, False, args.gather_across_processes)
        starts: list[float] = []

        def compute_loss(model, b):  # train/dtr.py's loss, with the step's start time noted
            starts.append(time.perf_counter())
            return loss_fn(model(b["query"], "query"), model(b["document"], "document"), b["doc_id"])

        train(args, accelerator, encoder, pairs, PairCollator(encoder), compute_loss)
    return starts


def run_sentence_transformers(pairs: list[dict], batch: int, max_length: int, steps: int, lr: float,
                              seed: int) -> list[float]:
    from accelerate.state import AcceleratorState
    from datasets import Dataset
    from sentence_transformers import (
        SentenceTransformer,
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )
    from sentence_transformers.losses import MultipleNegativesRankingLoss
    from transformers import TrainerCallback

    from models.packaged import default_encoder_path

    AcceleratorState._reset_state(True)
    starts: list[float] = []

    class StepStarts(TrainerCallback):
        def on_step_begin(self, args, state, control, **kwargs):
            starts.append(time.perf_counter())

    model = SentenceTransformer(default_encoder_path(), device="cpu")
    model.max_seq_length = max_length
    data = Dataset.from_dict({"anchor": [p["query"] for p in pairs], "positive": [p["document"] for p in pairs]})
    with tempfile.TemporaryDirectory() as out:
        args = SentenceTransformerTrainingArguments(
            output_dir=out, per_device_train_batch_size=batch, max_steps=steps, learning_rate=lr, warmup_steps=0,
            save_strategy="no", report_to="none", logging_steps=10**6, seed=seed, use_cpu=True,
            dataloader_drop_last=True, disable_tqdm=True)
        trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=data,
                                             loss=MultipleNegativesRankingLoss(model, scale=20.0),
                                             callbacks=[StepStarts()])
        trainer.train()
    return starts


@dataclass
class TrainThroughputArguments(RunArguments):
    """Our training loop against the sentence-transformers trainer, pairs per second."""

    seed: int = option(42, "seed of the pairs and the models")
    batch_size: int = option(16, "pairs per step")
    max_length: int = option(64, "token limit")
    steps: int = option(10, "steps per run")
    warmup: int = option(2, "steps left out of the timing")
    repeats: int = option(2, "interleaved rounds")
    learning_rate: float = option(2e-5, "AdamW learning rate, both trainers")


def main(argv: Sequence[str] | None = None) -> dict:
    args = parse_config(TrainThroughputArguments, argv, prog="python -m benchmarks.train_throughput",
                        description=__doc__)

    limit_threads(args.threads)
    pairs = training_pairs(args.batch_size * args.steps, args.seed)
    runs = {"ours (train/dtr.py loop)": run_ours, "sentence_transformers trainer": run_sentence_transformers}
    rates: dict[str, list[float]] = {name: [] for name in runs}
    loads = []
    for _ in range(args.repeats):
        for name, fn in runs.items():
            starts = fn(pairs, args.batch_size, args.max_length, args.steps, args.learning_rate, args.seed)
            rates[name].append(throughput(starts, args.batch_size, args.warmup))
            loads.append(load_average()[0])
            print(f"{name}: {rates[name][-1]:.2f} pairs/s (load {loads[-1]})", flush=True)
    ours, theirs = rates.values()
    ratios = [a / b for a, b in zip(ours, theirs)]
    rows = [{"trainer": name, "pairs_per_s": round(float(np.median(r)), 2),
             "per_round": ", ".join(f"{x:.2f}" for x in r),
             "ratio_vs_st": round(float(np.median(ratios)), 3) if name == next(iter(runs)) else 1.0}
            for name, r in rates.items()]
    table = print_table(rows, title=f"== training throughput: batch {args.batch_size}, {args.max_length} tokens, "
                                    f"steps {args.warmup + 1}..{args.steps} timed, {args.repeats} rounds ==")
    report = {"command": command_line("benchmarks.train_throughput", argv), "machine": machine(),
              "threads": args.threads,
              "batch_size": args.batch_size, "max_length": args.max_length, "steps": args.steps,
              "warmup": args.warmup, "pairs_per_s": rates, "ratios": ratios, "results": rows, "table": table,
              "load_per_run": loads}
    write_report(report, args.output)
    write_config(args)
    return report


if __name__ == "__main__":
    main()
