"""What the relevance model adds to a question: the second stage's time (features and probabilities) on one thread,
at the candidate counts the plans really leave, beside a cross-encoder over the same pairs.

    python -m benchmarks.relevance_cost --threads 1 --output runs/bench/relevance_cost.json
    python -m benchmarks.relevance_cost --model runs/memory_relevance --cross-encoder-layers 6 2   # the alternative

The questions are LoCoMo's (categories 1-4) of ``--samples``, each asked through the memory with a recorder as its
second stage, so every call timed is one a question made: its query, its candidates (the first stage's best, after
the plan's filters). The first stage's own time (query encoding, dense and BM25 search) is not counted: it is paid
with or without the model. The cross-encoder rows time packaged MiniLM (cut to ``--cross-encoder-layers`` layers,
untrained: the cost is the same) reading (question, "speaker: utterance") pairs of the same candidates, 128 tokens.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from benchmarks.common import RunArguments, command_line, limit_threads, load_average, machine, summary_ms, write_report
from models.dual_encoder import load_encoder
from retrieval.config import option, parse_config, write_config
from retrieval.data.jsonio import run_cli
from retrieval.data.locomo_qa import evidence_questions, read_samples, sample_id, sample_utterances
from retrieval.data.paths import LOCOMO_FILE, default_cache_dir
from retrieval.memory.conversation_table import ConversationTable
from retrieval.memory.relevance.model import RelevanceModel
from retrieval.memory.relevance.rerank import RankCall, RankRecorder, Reranker
from retrieval.memory.temporal_memory import TemporalMemory
from retrieval.memory.when_answer import question_kind


@dataclass
class RelevanceCostArguments(RunArguments):
    """The relevance model's added time per question."""

    model: str = option("runs/memory_relevance", "a relevance model folder (python -m train.memory_relevance)")
    locomo: str = option(str(LOCOMO_FILE), "LoCoMo JSON")
    samples: list[str] = option(["conv-26", "conv-30"], "sample ids whose questions are asked")
    questions: int = option(200, "questions timed (a seeded sample)")
    repeats: int = option(3, "timings per call (the median is kept)")
    cross_encoder_layers: list[int] = option([], "also time a MiniLM cross-encoder with this many layers (e.g. 6 2)")
    cross_encoder_questions: int = option(20, "questions the cross-encoder is timed on")
    cache_dir: str = option(help="embedding cache ('' for none)", default_factory=lambda: default_cache_dir("temporal"))


def recorded_calls(args: RelevanceCostArguments) -> list[RankCall]:
    """The first-stage rankings LoCoMo's questions make (one per question), a seeded sample of ``args.questions``."""
    encoder, calls = load_encoder(None), []
    for i, sample in enumerate(read_samples(args.locomo)):
        if sample_id(sample, i) not in args.samples:
            continue
        utterances = sample_utterances(sample, args.locomo, i)
        recorder = RankRecorder()
        memory = TemporalMemory(ConversationTable.from_utterances(utterances, encoder, args.cache_dir or None,
                                                                  turns=True), relevance=recorder)
        for qa in evidence_questions(sample, utterances, categories=(1, 2, 3, 4)):
            recorder.calls.clear()
            memory.when_evidence(qa.question) if question_kind(qa.question) else memory.ask(qa.question)
            calls += recorder.calls[:1]
    random.Random(args.seed).shuffle(calls)
    return calls[: args.questions]


def time_reranker(reranker: Reranker, calls: Sequence[RankCall], repeats: int) -> list[float]:
    out = []
    for c in calls:
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            reranker.rerank(c.table, c.query, c.fused, c.k, c.prefer, c.margin, c.asks_when)
            times.append(time.perf_counter() - start)
        out.append(float(np.median(times)))
    return out


def time_cross_encoder(layers: int, calls: Sequence[RankCall], candidates: int) -> list[float]:
    from sentence_transformers import CrossEncoder

    from models.packaged import default_encoder_path

    model = CrossEncoder(default_encoder_path(), num_labels=1, max_length=128, device="cpu")
    model.model.bert.encoder.layer = model.model.bert.encoder.layer[:layers]
    out = []
    for c in calls:
        frame = c.table.frame
        pairs = [(c.query, f"{frame.at[i, 'speaker']}: {frame.at[i, 'text']}") for i, _ in c.fused[:candidates]]
        start = time.perf_counter()
        model.predict(pairs, batch_size=64, show_progress_bar=False)
        out.append(time.perf_counter() - start)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_config(RelevanceCostArguments, argv, prog="python -m benchmarks.relevance_cost",
                        description=__doc__.split("\n")[0])
    limit_threads(args.threads)
    reranker = Reranker(RelevanceModel.load(args.model))
    calls = recorded_calls(args)
    counts = [min(len(c.fused), reranker.model.candidates) for c in calls]
    report = {"command": command_line("benchmarks.relevance_cost", argv), "machine": machine(),
              "load_before": load_average(), "questions": len(calls),
              "candidates": {"median": float(np.median(counts)), "p95": float(np.percentile(counts, 95)),
                             "max": int(max(counts))},
              "relevance_model": summary_ms(time_reranker(reranker, calls, args.repeats))}
    print(f"{len(calls)} questions; candidates per question: median {report['candidates']['median']:.0f}, "
          f"p95 {report['candidates']['p95']:.0f}")
    print(f"relevance model (features + probabilities): {report['relevance_model']}")
    for layers in args.cross_encoder_layers:
        row = summary_ms(time_cross_encoder(layers, calls[: args.cross_encoder_questions], reranker.model.candidates))
        report[f"cross_encoder_{layers}_layers"] = row
        print(f"cross-encoder, MiniLM with {layers} layers, the same candidates: {row}")
    report["load_after"] = load_average()
    write_report(report, args.output)
    write_config(args)
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
