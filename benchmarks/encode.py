"""Encoding throughput of our DualEncoder against ``SentenceTransformer.encode``: same model, texts, batch.

    python -m benchmarks.encode --output runs/bench/encode.json
    python -m benchmarks.encode --texts 2000 --repeats 3 --batch-size 64 --max-length 256

Texts: OTT-QA tables as the table retriever indexes them (``table_text``, long) and Zyphra utterances
(short), mixed. The model: the packaged all-MiniLM-L6-v2 folder, loaded by all. Methods, run in
turns on the same texts, ``--repeats`` times: ours in fp32, ours under bf16 autocast (where the CPU
has native bf16), ours with the weights cast to bf16 (``DualEncoder.set_precision("bf16")``, what a memory
created with ``precision="bf16"`` runs), sentence-transformers in fp32 (its default)
and in bf16 (the model's weights cast, ``model_kwargs={"dtype": torch.bfloat16}``), and ONNX Runtime
on the same model exported offline (``benchmarks/onnx_encoder.py``: sentence-transformers' own
``backend="onnx"`` needs ``optimum-onnx``, which cannot be installed beside transformers 5; whether it
loads is recorded as ``st_onnx_backend``). All sort by length and run without gradients, on
``--threads`` threads; the ratio is texts/s over sentence-transformers' fp32, per round, then the
median. Agreement: the lowest cosine between each method's embedding and sentence-transformers'
fp32 one for the same text.
"""

from __future__ import annotations

import importlib.util
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

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
from benchmarks.onnx_encoder import OnnxEncoder, export_onnx
from benchmarks.real_embeddings import bench_cache_dir, utterance_texts
from eval.report import print_table
from retrieval.config import option, parse_config, write_config


def st_onnx_backend() -> str:
    """Whether sentence-transformers' own ONNX backend loads here: "available", or why not."""
    from sentence_transformers import SentenceTransformer

    from models.packaged import default_encoder_path

    try:
        SentenceTransformer(default_encoder_path(), device="cpu", backend="onnx")
    except Exception as e:  # noqa: BLE001  (any failure is the answer: it is recorded, not raised)
        return f"unavailable: {type(e).__name__}: {str(e).splitlines()[0]}"
    return "available"


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


def onnx_encoder(max_length: int, threads: int | None) -> OnnxEncoder | str:
    """The packaged MiniLM exported and run under ONNX Runtime, or why it cannot be (the ``onnx`` extra missing, or
    the export failing)."""
    from models.packaged import default_encoder_path

    missing = [m for m in ("onnx", "onnxruntime") if importlib.util.find_spec(m) is None]
    if missing:
        return f"needs {' and '.join(missing)}, not installed (pip install -e '.[onnx]')"
    try:
        return OnnxEncoder(export_onnx(default_encoder_path(), Path(bench_cache_dir()) / "onnx-minilm"),
                           default_encoder_path(), max_length, threads)
    except (ImportError, RuntimeError) as e:
        return f"the ONNX export or session failed: {e}"


def main(argv: Sequence[str] | None = None) -> dict:
    args = parse_config(EncodeArguments, argv, prog="python -m benchmarks.encode", description=__doc__)

    from sentence_transformers import SentenceTransformer

    from models.dual_encoder import DualEncoder
    from models.packaged import default_encoder_path

    limit_threads(args.threads)
    texts = benchmark_texts(args.texts, args.seed)
    ours = DualEncoder.from_backbone(default_encoder_path(), max_document_length=args.max_length)
    ours_bf16 = DualEncoder.from_backbone(default_encoder_path(), max_document_length=args.max_length)
    ours_bf16.set_precision("bf16-autocast")
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
        ours_w = DualEncoder.from_backbone(default_encoder_path(), max_document_length=args.max_length)
        ours_w.set_precision("bf16")  # what sentence-transformers' bf16 does: the weights cast
        methods["ours_bf16_weights"] = run("ours_bf16_weights", lambda: ours_w.encode_documents(texts, args.batch_size))
        st_bf16 = SentenceTransformer(default_encoder_path(), device="cpu", model_kwargs={"dtype": torch.bfloat16})
        st_bf16.max_seq_length = args.max_length
        methods["sentence_transformers_bf16"] = run("sentence_transformers_bf16", lambda: st_bf16.encode(
            texts, batch_size=args.batch_size, normalize_embeddings=True, convert_to_numpy=True))
    skipped = {} if cpu_has_bf16() else {"bf16 rows": "this CPU has no bf16 instructions"}
    onnx = onnx_encoder(args.max_length, args.threads)
    if isinstance(onnx, str):  # a missing optional piece: the row is left out, with its reason
        skipped["onnxruntime_fp32"] = onnx
    else:
        methods["onnxruntime_fp32"] = run("onnxruntime_fp32", lambda: onnx.encode(texts, args.batch_size))
    for name, why in skipped.items():
        print(f"skipped {name}: {why}")
    st_onnx = st_onnx_backend()
    for fn in methods.values():  # warm-up, every method
        fn()
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
    fastest = max(rows, key=lambda r: r["texts_per_s"])
    ours_best = max((r for r in rows if r["method"].startswith("ours")), key=lambda r: r["texts_per_s"])
    print(f"fastest: {fastest['method']} ({fastest['texts_per_s']} texts/s); ours at best {ours_best['method']} "
          f"({ours_best['texts_per_s']} texts/s, {ours_best['texts_per_s'] / fastest['texts_per_s']:.2f}x of it)")
    report = {"command": command_line("benchmarks.encode", argv), "machine": machine(), "threads": args.threads,
              "st_onnx_backend": st_onnx, "skipped": skipped, "fastest": fastest["method"],
              "ours_best": ours_best["method"], "texts": len(texts),
              "mean_chars": round(float(np.mean([len(t) for t in texts])), 1), "batch_size": args.batch_size,
              "max_length": args.max_length, "repeats": args.repeats, "seconds": times, "results": rows,
              "table": table, "load_average_end": load_average()}
    write_report(report, args.output)
    write_config(args)
    return report


if __name__ == "__main__":
    main()
