"""Evaluate table retrieval: BM25, the untuned encoder, the trained DTR and their fusion, side by side.

    python -m eval.retrieval --checkpoint runs/dtr [--tables FILE] [--questions FILE] [--split test]
        [--output runs/dtr/eval_retrieval.json]

Two candidate pools: every table in ``--tables`` ("all_tables") and only the tables of
the evaluated split ("split_tables", the cTBLS paper's setting). Every question of the
split is a query; the ``first_turn_*`` metrics use only each conversation's first turn.
"""

from __future__ import annotations

import argparse
import json
import logging

import torch

from eval.report import METRICS, print_table, run_cli, write_json
from models.dual_encoder import DualEncoder
from retrieval.ctbls.table_retriever import DenseTableRetriever, TableTextSettings
from retrieval.data.ottqa import DEFAULT_DATA_DIR, load_questions, load_tables
from retrieval.data.ottqa_conversations import BenchmarkReport, build_conversations
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
    conversations = build_conversations(load_questions(questions_path), tables, split, report)
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


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--checkpoint", help="trained DTR folder (omit to compare BM25 and the untuned encoder only)")
    p.add_argument("--tables", default=str(DATA / "tables.jsonl"))
    p.add_argument("--questions", default=str(DATA / "questions_dev.json"))
    p.add_argument("--split", default="test", help="train, val, test or all")
    p.add_argument("--baseline", default="packaged:minilm", help="the untuned encoder")
    p.add_argument("--cache-dir", default="runs/cache", help="document embedding cache ('' to disable)")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--bf16", action="store_true", help="encode under bf16 autocast (faster on CPUs with BF16)")
    p.add_argument("--output", help="JSON file for the results")
    a = p.parse_args(argv)
    results = evaluate(a.checkpoint, a.tables, a.questions, None if a.split == "all" else a.split,
                       a.baseline, a.cache_dir or None, a.batch_size, a.bf16)
    print_results(results)
    write_json(a.output, results)
    return results


if __name__ == "__main__":
    run_cli(main)
