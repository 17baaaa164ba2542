"""Load time and generation throughput of an LLM backend, printed as one JSON object.

    python -m retrieval.llm.speed                                  # SmolLM2, its cached copy
    python -m retrieval.llm.speed --fresh-conversion               # also time the GGUF conversion
    python -m retrieval.llm.speed --llm '{"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:8080/v1"}'

Tokens/s counts generated tokens (``completion_tokens``) over the wall time of the call: one
conversation alone, then ``--batch-size`` conversations in one call.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import dataclass

from retrieval.config import option, parse_config
from retrieval.llm.base import Chat, LLMBackend
from retrieval.llm.factory import llm_spec, load_backend
from retrieval.llm.local import TransformersBackend

TOPICS = ["football clubs", "rivers", "volcanoes", "chess openings", "jazz", "bridges", "comets", "libraries"]


def _conversation(topic: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"Write a long paragraph about {topic}."}]


def _throughput(backend: LLMBackend, conversations: list[Chat], max_new_tokens: int) -> dict:
    start, cpu = time.perf_counter(), time.process_time()
    results = backend.generate(conversations, max_new_tokens=max_new_tokens)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    tokens = sum(r.completion_tokens or 0 for r in results)
    return {
        "conversations": len(results),
        "ok": sum(r.ok for r in results),
        "tokens": tokens,
        "wall_s": round(wall, 2),
        "tokens_per_s": round(tokens / wall, 1),
        # This process's CPU time: on a machine shared with other jobs, wall time alone misleads.
        "cpu_s": round(cpu, 2),
        "load_avg_1m": round(os.getloadavg()[0], 1),
    }


@dataclass
class SpeedArguments:
    """Load time and generation throughput of an LLM backend."""

    llm: str | dict = option("smollm2", "LLM spec: a name like 'smollm2' or a JSON mapping", aliases=["--spec"])
    max_new_tokens: int = option(64, "tokens generated per conversation")
    batch_size: int = option(8, "conversations in the batched call")
    fresh_conversion: bool = option(False, "SmolLM2 only: convert the GGUF into a new temp folder first and time it")


def main(argv: list[str] | None = None) -> dict:
    args = parse_config(SpeedArguments, argv, prog="python -m retrieval.llm.speed", description=__doc__)
    spec = llm_spec(args.llm)
    if spec is None:
        raise ValueError(f"LLM spec {args.llm!r} names no backend to time")
    report: dict = {"spec": spec, "cpus": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 1)}
    with tempfile.TemporaryDirectory() as scratch:
        if args.fresh_conversion:
            from retrieval.llm.smollm2 import ensure_smollm2

            start = time.perf_counter()
            ensure_smollm2(scratch)
            report["convert_s"] = round(time.perf_counter() - start, 2)
            spec = {"backend": "smollm2", "cache_dir": scratch}
        start = time.perf_counter()
        backend = load_backend(spec)
        report["load_s"] = round(time.perf_counter() - start, 2)
        report["model"] = backend.identity
        backend.generate([_conversation("warm-up")], max_new_tokens=4)
        report["single"] = _throughput(backend, [_conversation(TOPICS[0])], args.max_new_tokens)
        batch = [_conversation(TOPICS[i % len(TOPICS)]) for i in range(args.batch_size)]
        if isinstance(backend, TransformersBackend):  # a local model batches; a server takes requests in parallel
            backend.batch_size = args.batch_size
        report["batch"] = _throughput(backend, batch, args.max_new_tokens)
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
