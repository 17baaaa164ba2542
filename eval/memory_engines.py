"""The memory's figures on each engine, from one run: the same logs and questions asked of the log's table in
process (what ``eval.temporal`` and ``eval.locomo_answers`` report), of a living memory in a folder (SQLite,
vector files, BM25 segments) and of a living memory in PostgreSQL (pgvector, BM25 statistics in tables).

    python -m eval.memory_engines                                   # a temporary PostgreSQL from the pgserver wheel
    python -m eval.memory_engines --store postgresql://me@dbhost/scratch --logs 26 28 --samples conv-26

Each living memory is filled with the log's rows and the very vectors the table holds (nothing encoded twice),
then asked every question with the same planner and settings. Printed per engine: Zyphra's rule planner (recall
/ precision / F2 by kind, question latency), LoCoMo's when-answers (gold evidence and end to end, strict /
lenient), and how many questions got exactly the rows (Zyphra) or the answer and top rows (LoCoMo) of the
in-process table. A difference is a fact about an engine to explain, not noise to average away.
"""

from __future__ import annotations

import logging
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from eval import locomo_answers, temporal
from models.dual_encoder import load_encoder
from retrieval.atomic import write_json
from retrieval.config import option, parse_config, write_config
from retrieval.data.jsonio import INPUT_ERRORS
from retrieval.data.paths import LOCOMO_FILE, ZYPHRA_DIR, default_cache_dir
from retrieval.data.timestamps import zone_name
from retrieval.memory.conversation_table import ConversationTable
from retrieval.memory.postgres.local import database_url
from retrieval.memory.postgres.store import connect
from retrieval.memory.temporal_memory import TemporalMemory
from retrieval.memory.temporal_result import TemporalResult

logger = logging.getLogger(__name__)

ENGINES = ("table", "folder", "postgresql")
BATCH = 512  # turns per append when a living memory is filled


@dataclass
class EnginesArguments:
    """The memory's Zyphra and LoCoMo figures on each engine, from one run."""

    zyphra: str = option(str(ZYPHRA_DIR), "Zyphra's folder (ConversationData/, TestData/)")
    locomo: str = option(str(LOCOMO_FILE), "LoCoMo JSON")
    logs: list[str] | None = option(None, "Zyphra log ids (default: all)")
    samples: list[str] | None = option(None, "LoCoMo sample ids (default: all)")
    store: str = option("pgserver", "the PostgreSQL to fill: a URL (a database the run may create tables in), or "
                        "'pgserver' for a temporary one from the pgserver wheel")
    engines: list[str] = option(list(ENGINES), "the engines to run", choices=ENGINES)
    encoder: str | None = option(None, "dual encoder (default: packaged MiniLM)")
    cache_dir: str = option(help="embedding cache ('' for none)", default_factory=lambda: default_cache_dir("temporal"))
    latency_sample: int = option(100, "Zyphra questions per log timed on each engine")
    output: str | None = option(None, "write the results as JSON here")


def table_vectors(index) -> np.ndarray:
    """Every vector of a flat in-process index, in row order."""
    return index.index.reconstruct_n(0, index.index.ntotal)


def asking_settings(memory: TemporalMemory) -> dict:
    """The constructor's arguments that say how ``memory`` plans, rewrites, ranks and answers."""
    return {"planner": memory.planner, "rewrite": memory.rewrite, "llm_rewriter": memory.llm_rewriter,
            "ranker": memory.ranker, "fusion": memory.fusion, "cut": memory.cut, "prior": memory.prior,
            "evidence_rule": memory.evidence_rule}


class RecordingMemory(TemporalMemory):
    """A memory that records the rows of every answer it gives (in ``record``)."""

    def __init__(self, table: ConversationTable, record: list[list[int]], **settings):
        super().__init__(table, **settings)
        self.record = record

    def ask(self, *args, **kwargs) -> TemporalResult:
        result = super().ask(*args, **kwargs)
        self.record.append(list(result.ids))
        return result


def living_copy(memory: TemporalMemory, name: str, engine: str, folder: Path, url: str | None,
                record: list[list[int]]) -> RecordingMemory:
    """A living memory on ``engine`` holding ``memory``'s rows and vectors, with its planner and settings, recording
    its answers' rows in ``record``."""
    table = memory.table
    turns = table.turn_index is not None
    tz = zone_name(table.zone.zone) if table.zone.source == "given" else None  # else taken from the turns, as a log
    where = folder / name if engine == "folder" else f"eval-{name}"
    copy = TemporalMemory.open(where, encoder=table.encoder, create=True, turns=turns, tz=tz,
                               store=url if engine == "postgresql" else None)
    frame = table.frame
    vectors = {"text": table_vectors(table.index)} | ({"turn": table_vectors(table.turn_index)} if turns else {})
    for start in range(0, len(frame), BATCH):
        part = frame.iloc[start:start + BATCH]
        copy.add_many([{"speaker": r.speaker, "text": r.text, "timestamp": r.timestamp, "session": int(r.session)}
                       for r in part.itertuples()], embeddings={v: e[start:start + len(part)] for v, e in
                                                                 vectors.items()})
    mine = copy.table.frame
    if list(mine.index) != list(frame.index) or mine["text"].tolist() != frame["text"].tolist():
        raise ValueError(f"{name}: the {engine} memory does not hold the log's rows in the log's order (duplicates or "
                         "a log out of time order): its answers could not be compared row by row")
    return RecordingMemory.wrap(copy.folder, record=record, **asking_settings(memory))


class Engine:
    """``wrap`` for the evaluations: each memory asked on one engine, every answer's rows recorded."""

    def __init__(self, name: str, folder: Path, url: str | None):
        self.name, self.folder, self.url = name, folder, url
        self.rows: dict[str, list[list[int]]] = {}
        self.opened: list[TemporalMemory] = []

    def __call__(self, memory: TemporalMemory, log: str) -> TemporalMemory:
        record = self.rows.setdefault(str(log), [])
        if self.name == "table":
            return RecordingMemory(memory.table, record, folder=memory.folder, **asking_settings(memory))
        copy = living_copy(memory, f"{log}", self.name, self.folder, self.url, record)
        self.opened.append(copy)
        return copy

    def close(self) -> None:
        for memory in self.opened:
            memory.close()
        self.opened = []


def agreement(rows: dict[str, list], reference: dict[str, list]) -> dict:
    """Questions whose rows equal the reference engine's, of those asked of both."""
    same = total = 0
    for log, lists in reference.items():
        for a, b in zip(lists, rows.get(log, [])):
            total += 1
            same += a == b
    return {"same_rows": same, "questions": total, "share": round(100 * same / total, 2) if total else None}


def zyphra_figures(report: dict) -> dict:
    results = report["results"]["rule"]
    return {kind: results[kind]["all"] for kind in sorted(results)} | {"latency": report["latency"]}


def run(args: EnginesArguments) -> dict:
    encoder = load_encoder(args.encoder)
    config = replace(temporal.TemporalEvalConfig(), zyphra_dir=args.zyphra, logs=args.logs, cache_dir=args.cache_dir,
                     latency_sample=args.latency_sample, content_cutoffs=[], semantic_ks=[10])
    out: dict = {"engines": {}, "zyphra_agreement": {}, "locomo_agreement": {}}
    recorded: dict[str, dict] = {}
    with database_url(args.store) as (url, _), tempfile.TemporaryDirectory(prefix="ctbls-engines-") as scratch:
        if "postgresql" in args.engines:
            connect(url).close()  # an unreachable database is said before any engine runs
        for name in args.engines:
            engine = Engine(name, Path(scratch) / name, url)
            try:
                zyphra = temporal.evaluate(config, encoder, wrap=engine)
                zyphra_rows, engine.rows = engine.rows, {}
                locomo = locomo_answers.evaluate(args.locomo, encoder, args.cache_dir or None, args.samples,
                                                 wrap=engine)
            finally:
                engine.close()
            out["engines"][name] = {"zyphra": zyphra_figures(zyphra), "locomo": locomo["results"]["overall"]}
            recorded[name] = {"zyphra": zyphra_rows,
                              "locomo": [(q["answers"], q["retrieved"]) for q in locomo["questions"]]}
            logger.info("%s: done", name)
    first = args.engines[0]
    for name in args.engines[1:]:
        out["zyphra_agreement"][name] = agreement(recorded[name]["zyphra"], recorded[first]["zyphra"])
        pairs = list(zip(recorded[name]["locomo"], recorded[first]["locomo"]))
        out["locomo_agreement"][name] = {"same_answers_and_rows": sum(a == b for a, b in pairs),
                                         "questions": len(pairs)}
    out["reference"] = first
    return out


def print_report(out: dict) -> None:
    print("Zyphra, rule planner (recall / precision / F2 %, n):")
    for name, figures in out["engines"].items():
        z = figures["zyphra"]
        kinds = "  ".join(f"{k} {v['recall']:.1f} / {v['precision']:.1f} / {v['f2']:.1f} ({v['n']})"
                          for k, v in z.items() if k != "latency")
        lat = z["latency"]["all"]
        print(f"  {name:<11} {kinds}  latency median {lat['median_ms']} ms, p95 {lat['p95_ms']} ms")
    print("LoCoMo when-answers (strict / lenient %, n):")
    for name, figures in out["engines"].items():
        cells = "  ".join(f"{m} {v['strict']:.1f} / {v['lenient']:.1f} ({v['n']})"
                          for m, v in figures["locomo"].items())
        print(f"  {name:<11} {cells}")
    for name in out["zyphra_agreement"]:
        z, lo = out["zyphra_agreement"][name], out["locomo_agreement"][name]
        print(f"{name} against {out['reference']}: Zyphra {z['same_rows']}/{z['questions']} questions with the same "
              f"rows; LoCoMo {lo['same_answers_and_rows']}/{lo['questions']} with the same answers and top rows")


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_config(EnginesArguments, argv, prog="python -m eval.memory_engines", description=__doc__)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        out = run(args)
    except (*INPUT_ERRORS, ValueError, ConnectionError) as e:  # ConnectionError: the --store database
        print(f"error: {e}", file=sys.stderr)
        return 2
    out["command"] = "python -m eval.memory_engines " + " ".join(sys.argv[1:] if argv is None else argv)
    print_report(out)
    if args.output:
        write_json(args.output, out, indent=2, default=str)
        write_config(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
