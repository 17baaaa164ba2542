"""Train the memory's relevance model (the second stage that re-ranks and cuts the content ranking's candidates) on
the open data's questions and the rows that answer them.

    python -m train.memory_relevance --config configs/memory_relevance.yaml
    ctbls train memory-relevance --config configs/memory_relevance.yaml --conversations 26,41,42   # a subset

The examples (:mod:`retrieval.memory.relevance_examples`: LoCoMo categories 1-4 with their evidence turns,
Zyphra's time+content questions with their rows) are extracted per conversation into ``OUTPUT_DIR/examples/`` as
they are done, each file keyed by what it depends on (the features, the encoder, the data, the code), so a run
stopped half-way resumes from the conversations it has and never reuses another version's; the fit takes seconds. The
model's form (degree and L2 strength) and its cut (a probability) are chosen by inner leave-conversations-out folds
over the training conversations.
The folder written (``relevance.json`` and a model card) is what ``--relevance`` of the memory's commands loads.
Figures for conversations the model never saw come from ``--folds K`` of the evaluations (eval.relevance_folds).
"""

from __future__ import annotations

import hashlib
import json
import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from models.dual_encoder import load_encoder
from retrieval.atomic import write_json
from retrieval.config import option, parse_config, write_config
from retrieval.data.jsonio import DataError, read_json, run_cli
from retrieval.data.paths import LOCOMO_FILE, ZYPHRA_DIR, default_cache_dir
from retrieval.memory.relevance.example import Example
from retrieval.memory.relevance.features import FEATURES
from retrieval.memory.relevance.folds import CS, INNER_FOLDS, fit_with_cut
from retrieval.memory.relevance.model import DEGREES
from retrieval.memory.relevance_examples import available_conversations, conversation_key, examples
from train.relevance_card import model_card

logger = logging.getLogger("train.memory_relevance")


@dataclass
class MemoryRelevanceArguments:
    """Train the memory's relevance model."""

    output_dir: str = option("runs/memory_relevance", "the model folder (relevance.json, README.md, examples/)")
    locomo: str = option(str(LOCOMO_FILE), "LoCoMo JSON ('' for none)")
    zyphra_dir: str = option(str(ZYPHRA_DIR), "Zyphra's folder ('' for none)")
    conversations: str | None = option(None, "comma-separated conversation keys to train on (26 for conv-26 and "
        "log 26; default: every conversation of both sources)")
    encoder: str | None = option(None, "the memory's dual encoder (default: packaged MiniLM); a model is for the "
        "encoder it was trained with")
    cache_dir: str = option(help="embedding cache ('' for none)", default_factory=lambda: default_cache_dir("temporal"))
    inner_folds: int = option(INNER_FOLDS, "leave-conversations-out folds that choose the model's form and its cut")
    cs: list[float] = option(list(CS), "the logistic regression's inverse L2 strengths the inner folds choose from")
    degrees: list[int] = option(list(DEGREES), "the inputs' degrees they choose from (1: the features; 2: also "
        "every product of two)")
    package_dir: str | None = option(None, "also write the model and its card (no examples) here: "
        "retrieval/memory/relevance/packaged is the model the memory's commands use by default (--relevance auto)")


def example_json(e: Example) -> dict:
    return {"conversation": e.conversation, "source": e.source, "question": e.question, "ids": e.ids,
            "x": e.x.tolist(), "relevant": sorted(e.relevant), "k": e.k, "cut": e.cut, "asks_when": e.asks_when}


def example_from_json(d: dict) -> Example:
    return Example(d["conversation"], d["source"], d["question"], [int(i) for i in d["ids"]],
                   np.asarray(d["x"], dtype=np.float64).reshape(len(d["ids"]), -1), frozenset(d["relevant"]),
                   int(d["k"]), bool(d["cut"]), bool(d["asks_when"]))


def extraction_key(args: MemoryRelevanceArguments, encoder) -> dict:
    """What a conversation's examples depend on: the features, the encoder, the data files (size and time) and the
    code that reads questions and utterances (a digest of retrieval/memory/ and retrieval/timex/): a cached file with
    another key is extracted again, so a resumed run never mixes examples of two versions."""
    root = Path(__file__).resolve().parents[1] / "retrieval"
    digest = hashlib.sha256()
    for path in sorted([*(root / "memory").rglob("*.py"), *(root / "timex").rglob("*.py")]):
        digest.update(path.read_bytes())
    data = {}
    for name in (args.locomo, args.zyphra_dir):
        if name and Path(name).exists():
            stat = Path(name).stat()
            data[str(name)] = [stat.st_size, int(stat.st_mtime)]
    return {"features": list(FEATURES), "encoder": encoder.identity, "data": data, "code": digest.hexdigest()[:16]}


def cached_examples(args: MemoryRelevanceArguments, keys: Sequence[str] | None, encoder) -> list[Example]:
    """Every training conversation's examples (``keys``; None: every one the sources hold), read from ``examples/``
    where an earlier run of the same :func:`extraction_key` wrote them, else extracted and written there (one file
    per conversation, atomically)."""
    keys = list(keys) if keys is not None else available_conversations(args.locomo or None, args.zyphra_dir or None)
    folder = Path(args.output_dir) / "examples"
    folder.mkdir(parents=True, exist_ok=True)
    run_key = json.loads(json.dumps(extraction_key(args, encoder)))
    got: dict[str, list[Example]] = {}
    for key in keys:
        path = folder / f"{key}.json"
        cached = read_json(path) if path.is_file() else None
        if isinstance(cached, dict) and cached.get("key") == run_key:
            got[key] = [example_from_json(d) for d in cached["examples"]]
            continue
        fresh = examples(encoder, args.locomo or None, args.zyphra_dir or None, args.cache_dir or None, only=[key])
        got[key] = fresh.get(key, [])
        write_json(path, {"key": run_key, "examples": [example_json(e) for e in got[key]]})
    missing = sorted(k for k, v in got.items() if not v)
    if missing:
        raise DataError(f"no questions for conversations {missing} in the data given")
    return [e for key in sorted(got) for e in got[key]]


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_config(MemoryRelevanceArguments, argv, prog="python -m train.memory_relevance",
                        description=__doc__.split("\n")[0])
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    keys = [conversation_key(k) for k in args.conversations.split(",") if k.strip()] if args.conversations else None
    encoder = load_encoder(args.encoder)
    train = cached_examples(args, keys, encoder)
    model = fit_with_cut(train, args.inner_folds, args.cs, args.degrees)
    model = replace(model, training={**model.training, "encoder": encoder.identity})
    folder = model.save(args.output_dir, model_card(model, args.output_dir))
    if args.package_dir:
        model.save(args.package_dir, model_card(model, args.package_dir))
    write_config(args)
    print(f"relevance model: {model.training['questions']} questions of conversations "
          f"{', '.join(model.training['conversations'])}; degree {model.degree}, C {model.training['c']} (inner-fold "
          f"log loss by form {model.training['inner_log_loss_by_form']}); cut: {model.cut}"
          f"{f' at P >= {model.threshold}' if model.cut == 'threshold' else ''} (inner-fold mean F2 by cut "
          f"{model.training['inner_f2_by_cut']}); wrote {folder}"
          f"{f' and {args.package_dir}' if args.package_dir else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
