"""Encoding throughput of our DualEncoder against ``SentenceTransformer.encode``: same model, texts, batch.

    python -m benchmarks.encode --output runs/bench/encode.json
    python -m benchmarks.encode --texts 2000 --repeats 3 --batch-size 64 --max-length 256

Texts: OTT-QA tables as the table retriever indexes them (``table_text``, long) and Zyphra utterances
(short), mixed. The model: the packaged all-MiniLM-L6-v2 folder, loaded by both. Methods, run in
turns on the same texts, ``--repeats`` times: ours in fp32, ours under bf16 autocast (where the CPU
has native bf16), and sentence-transformers in fp32 (its default). Both sort by length and run under
no-grad; the ratio is texts/s over sentence-transformers', per round, then the median. Agreement:
the lowest cosine between our embedding and sentence-transformers' for the same text.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from benchmarks.common import (
    DATA_DIR,
    RunArguments,
    command_line,
    cpu_has_bf16,
    interleaved,
    limit_threads,
    load_average,
    machine,
    write_report,
)
from benchmarks.real_embeddings import utterance_texts
from eval.report import print_table
from retrieval.config import option, parse_config, write_config


def benchmark_texts(n: int, seed: int = 0) -> list[str]:
    from retrieval.ctbls.table_text import table_text
    from retrieval.data.ottqa import load_tables

    tables = load_tables(DATA_DIR / "ottqa" / "tables.jsonl")
    rng = random.Random(seed)
    docs = [table_text(tables[u]) for u in rng.sample(sorted(tables), n // 2)]
    utterances = [u.text for us in utterance_texts().values() for u in us]
    texts = docs + rng.sample(utterances, n - len(docs))
    rng.shuffle(texts)
    return texts


@dataclass
class EncodeArguments(RunArguments):
    """DualEncoder.encode against SentenceTransformer.encode."""

    texts: int = option(1000, "texts encoded (half tables, half utterances)")
    batch_size: int = option(64, "encoding batch size, both encoders")
    max_length: int = option(256, "token limit, both encoders")
    repeats: int = option(3, "interleaved rounds")


def main(argv: Sequence[str] | None = None) -> dict:
    args = parse_config(EncodeArguments, argv, prog="python -m benchmarks.encode", description=__doc__)

    from sentence_transformers import SentenceTransformer

    from models.dual_encoder import DualEncoder
    from models.packaged import default_encoder_path

    limit_threads(args.threads)
    texts = benchmark_texts(args.texts, args.seed)
    ours = DualEncoder.from_backbone(default_encoder_path(), max_document_length=args.max_length)
    ours_bf16 = DualEncoder.from_backbone(default_encoder_path(), max_document_length=args.max_length)
    ours_bf16.autocast_dtype = torch.bfloat16
    st = SentenceTransformer(default_encoder_path(), device="cpu")
    st.max_seq_length = args.max_length

    outputs: dict[str, np.ndarray] = {}

    def run(name, fn):
        def call():
            outputs[name] = fn()
        return call

    methods = {
        "ours_fp32": run("ours_fp32", lambda: ours.encode_documents(texts, args.batch_size)),
        "sentence_transformers": run("sentence_transformers", lambda: st.encode(
            texts, batch_size=args.batch_size, normalize_embeddings=True, convert_to_numpy=True)),
    }
    if cpu_has_bf16():
        methods["ours_bf16_autocast"] = run("ours_bf16_autocast",
                                            lambda: ours_bf16.encode_documents(texts, args.batch_size))
    ours.encode_documents(texts[:args.batch_size], args.batch_size)  # warm-up, both
    st.encode(texts[:args.batch_size], batch_size=args.batch_size)
    times = interleaved(methods, args.repeats)

    base = times["sentence_transformers"]
    rows = []
    for name, ts in times.items():
        ratios = [b / t for b, t in zip(base, ts)]
        cos = np.sum(outputs[name] * outputs["sentence_transformers"], axis=1)
        rows.append({"method": name, "texts_per_s": round(len(texts) / float(np.median(ts)), 1),
                     "median_s": round(float(np.median(ts)), 2),
                     "ratio_vs_st": round(float(np.median(ratios)), 3),
                     "ratio_min": round(min(ratios), 3), "ratio_max": round(max(ratios), 3),
                     "min_cosine_vs_st": round(float(cos.min()), 5)})
    table = print_table(rows, title=f"== encoding {len(texts)} texts, batch {args.batch_size}, "
                                    f"max {args.max_length} tokens, {args.repeats} interleaved rounds ==")
    report = {"command": command_line("benchmarks.encode", argv), "machine": machine(), "threads": args.threads,
              "texts": len(texts),
              "mean_chars": round(float(np.mean([len(t) for t in texts])), 1), "batch_size": args.batch_size,
              "max_length": args.max_length, "repeats": args.repeats, "seconds": times, "results": rows,
              "table": table, "load_average_end": load_average()}
    write_report(report, args.output)
    write_config(args)
    return report


if __name__ == "__main__":
    main()
