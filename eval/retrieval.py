"""Evaluate table retrieval: BM25, the untuned encoder, the trained DTR and their fusion, side by side.

    python -m eval.retrieval --dtr runs/dtr [--tables FILE] [--questions FILE] [--split test]
        [--output runs/dtr/eval_retrieval.json]        # or: ctbls eval retrieval ...

Two candidate pools: every table in ``--tables`` ("all_tables") and only the tables of
the evaluated split ("split_tables", the cTBLS paper's setting). Every question of the
split is a query; the ``first_turn_*`` metrics use only each conversation's first turn.
"""

from __future__ import annotations

import json
import logging
import sys
from dataclasses import dataclass

import torch

from eval.plots import retrieval_chart, write_chart
from eval.report import METRICS, print_table, run_cli, write_json
from eval.results import Headline, write_results
from models.dual_encoder import DualEncoder
from retrieval.config import option, parse_config, write_config
from retrieval.ctbls.table_retriever import DenseTableRetriever, TableTextSettings
from retrieval.data.ottqa import DEFAULT_DATA_DIR, load_questions, load_tables
from retrieval.data.ottqa_conversations import BenchmarkReport, build_conversations, require_conversations
from retrieval.data.paths import default_cache_dir
from retrieval.search.bm25 import BM25Retriever
from retrieval.search.fusion import reciprocal_rank_fusion
from retrieval.search.metrics import ranking_metrics

DATA = DEFAULT_DATA_DIR  # ../shared/data/ottqa
logger = logging.getLogger(__name__)


def _metrics(ranked: list[list], relevant: list[str], first: list[bool]) -> dict:
    out = ranking_metrics((r, {t}) for r, t in zip(ranked, relevant))
    firsts = ranking_metrics((r, {t}) for r, t, f in zip(ranked, relevant, first) if f)
    out.update({f"first_turn_{k}": v for k, v in firsts.items()})
    return out


def evaluate(checkpoint: str | None, tables_path: str, questions_path: str, split: str | None,
             baseline: str, cache_dir: str | None, batch_size: int = 64, bf16: bool = False) -> dict:
    tables = load_tables(tables_path)
    report = BenchmarkReport()
    questions = load_questions(questions_path)
    conversations = require_conversations(build_conversations(questions, tables, split, report), questions, split,
                                          questions_path, tables_path)
    turns = [t for c in conversations for t in c.turns]
    first = [i == 0 for c in conversations for i, _ in enumerate(c.turns)]
    queries, relevant = [t.query for t in turns], [t.table_id for t in turns]
    uids = sorted(tables)
    pools = {"all_tables": None, "split_tables": sorted({c.table_id for c in conversations})}

    dtr = DenseTableRetriever.from_pretrained(checkpoint) if checkpoint else None
    settings = dtr.settings if dtr else TableTextSettings()
    texts = [settings.text(tables[u]) for u in uids]
    bm25 = BM25Retriever(texts, uids)
    max_len = dtr.encoder.config.max_document_length if dtr else 128
    retrievers = {"untuned": DenseTableRetriever(DualEncoder.from_backbone(baseline, max_document_length=max_len),
                                                 settings)}
    if dtr:
        retrievers["dtr"] = dtr
    indices, query_emb = {}, {}
    for name, retriever in retrievers.items():
        retriever.encoder.autocast_dtype = torch.bfloat16 if bf16 else None
        indices[name] = retriever.index_tables([tables[u] for u in uids], batch_size=batch_size,
                                               show_progress_bar=True, cache_dir=cache_dir)
        query_emb[name] = retriever.encoder.encode_queries(queries, batch_size=batch_size)

    results: dict = {}
    for pool, subset in pools.items():
        ranked = {"bm25": [[u for u, _ in r] for r in bm25.search(queries, 100, subset)]}
        for name in retrievers:
            ranked[name] = [[u for u, _ in r] for r in indices[name].search(query_emb[name], 100, subset)]
        dense = "dtr" if dtr else "untuned"
        ranked[f"bm25+{dense} (rrf)"] = [
            [u for u, _ in reciprocal_rank_fusion([[(x, 0) for x in b], [(x, 0) for x in d]], top=10)]
            for b, d in zip(ranked["bm25"], ranked[dense])]
        results[pool] = {m: _metrics(r, relevant, first) for m, r in ranked.items()}
        results[pool]["_pool_size"] = len(subset) if subset is not None else len(uids)
    results["_data"] = {"split": split, "conversations": len(conversations), "questions": len(turns),
                        "table_representation": settings.representation, "bf16_autocast": bf16, **report.as_dict()}
    return results


def print_results(results: dict) -> None:
    for pool in ("all_tables", "split_tables"):
        print_table({m: v for m, v in results[pool].items() if not m.startswith("_")},
                    ["mrr@10", "top1", "top3", "top10", "first_turn_mrr@10", "first_turn_top1"],
                    f"{pool} ({results[pool]['_pool_size']} tables, {results['_data']['questions']} questions)",
                    METRICS)
    print(json.dumps(results["_data"]))


SPLITS = ("train", "val", "test", "all")


@dataclass
class RetrievalEvalArguments:
    """Table retrieval: BM25, the untuned encoder, the trained DTR and their fusion."""

    dtr: str | None = option(None, "trained DTR folder (omit to compare BM25 and the untuned encoder only)",
        aliases=["--checkpoint"])
    tables: str = option(str(DATA / "tables.jsonl"), "OTT-QA tables.jsonl")
    questions: str = option(str(DATA / "questions_dev.json"), "OTT-QA questions file")
    split: str = option("test", "the split's conversations", choices=SPLITS)
    baseline: str = option("packaged:minilm", "the untuned encoder")
    cache_dir: str = option(help="document embedding cache ('' to disable)", default_factory=default_cache_dir)
    batch_size: int = option(64, "encoder batch size")
    bf16: bool = option(False, "encode under bf16 autocast (faster on CPUs with BF16)")
    output: str | None = option(None, "JSON file for the results")
    results: str | None = option(None, "a results file for README's table (results/NAME.json: eval.results)")


def headline(results: dict) -> list[Headline]:
    """The row of README's results table: the DTR over every table, beside BM25 and the untuned encoder."""
    pool, data = results["all_tables"], results["_data"]
    if "dtr" not in pool:
        return []
    return [Headline(f"Table retrieval: OTT-QA {data['split']}, {pool['_pool_size']:,} tables, "
                     f"{data['questions']} questions", "MRR@10", pool["dtr"]["mrr@10"],
                     {"BM25": pool["bm25"]["mrr@10"], "untuned MiniLM": pool["untuned"]["mrr@10"]},
                     "cTBLS DTR 0.846 (a pool of 243 tables, not ours)")]


def main(argv: list[str] | None = None) -> dict:
    a = parse_config(RetrievalEvalArguments, argv, prog="python -m eval.retrieval", description=__doc__)
    results = evaluate(a.dtr, a.tables, a.questions, None if a.split == "all" else a.split,
                       a.baseline, a.cache_dir or None, a.batch_size, a.bf16)
    print_results(results)
    write_json(a.output, results)
    write_chart(retrieval_chart, results, a.output)
    write_config(a)
    write_results(a.results, "python -m eval.retrieval", argv, a, lambda: headline(results), [a.tables, a.questions])
    return results


def cli() -> int:
    return run_cli(main)


if __name__ == "__main__":
    sys.exit(cli())
