"""Evaluate the coarse cell state tracker: BM25, the untuned encoder, the trained tracker and the
reciprocal rank fusion of BM25 and the tracker, side by side.

    python -m eval.state_tracking --tracker runs/state_tracker [--dtr runs/dtr] [--questions FILE]
        [--tables FILE] [--passages FILE] [--split test] [--output runs/state_tracker/eval_state_tracking.json]
    python -m eval.state_tracking --tracker runs/state_tracker --hybridialogue experimental_data.json
    python -m eval.state_tracking --tracker runs/state_tracker --history-turns 0   # anchor = the query alone
    ctbls-eval-state-tracking ...                                                   # the same, as a console script

Every turn of every OTT-QA conversation of the split is a query: its anchor is the earlier
turns (with their reference answers) and the current query, its candidates the cells of a
table, its target the answer cell(s). Two settings: "gold_table" (the conversation's own
table) and "dtr_table" (the table the DTR retrieves for the conversation's first query, from every
table of ``--tables``, or with ``--dtr-pool split`` from the split's tables, the cTBLS paper's
setting; a missed table is a missed turn). ``--dtr untuned`` uses the
untuned encoder as the DTR. With ``--hybridialogue`` each turn ranks its own candidates
(``possible_next_cands_ids``, their ``linearized_input``) instead.

Turns whose answer cells all lie outside the table cannot be scored: they are counted
(``turns_without_valid_answer_cell``), not scored. Empty cells, ragged tables and links
without a passage are counted in ``cells``.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from eval.plots import state_tracking_chart, write_chart
from eval.report import METRICS, print_table, run_cli, write_json
from models.dual_encoder import DualEncoder
from retrieval.config import option, parse_config, write_config
from retrieval.ctbls.state_tracker import CellStateTracker, dialogue_turns
from retrieval.ctbls.table_retriever import DenseTableRetriever
from retrieval.data.hybridialogue import load_hybridialogue
from retrieval.data.jsonio import DataError
from retrieval.data.ottqa import DEFAULT_DATA_DIR, load_passages, load_questions, load_tables
from retrieval.data.ottqa_conversations import BenchmarkReport, build_conversations, require_conversations
from retrieval.data.paths import default_cache_dir
from retrieval.search.bm25 import BM25Retriever
from retrieval.search.cached_index import cached_index
from retrieval.search.fusion import reciprocal_rank_fusion
from retrieval.search.metrics import ranking_metrics

DATA = DEFAULT_DATA_DIR  # ../shared/data/ottqa
COLUMNS = ["mrr@10", "top1", "top3", "top10"]
K = 10


def _by_position(ranked: list[list], relevant: list[set], positions: list[int]) -> dict[str, dict]:
    """Metrics per turn position: "turn1", "turn2", "turn3", "turn4+"."""
    groups: dict[str, list] = {}
    for r, rel, p in zip(ranked, relevant, positions):
        groups.setdefault(f"turn{p + 1}" if p < 3 else "turn4+", []).append((r, rel))
    return {name: ranking_metrics(pairs) for name, pairs in sorted(groups.items())}


def _metrics(ranked: list[list], relevant: list[set], positions: list[int]) -> dict:
    return {**ranking_metrics(zip(ranked, relevant)), "by_turn": _by_position(ranked, relevant, positions)}


def _trackers(checkpoint: str | None, baseline: str, history_turns: int | str = "saved"
              ) -> dict[str, CellStateTracker]:
    trained = CellStateTracker.from_pretrained(checkpoint) if checkpoint else None
    if trained and history_turns != "saved":  # an ablation: the anchor differs from training's
        trained.settings = replace(trained.settings, history_turns=history_turns)
    cfg = trained.encoder.config if trained else None
    untuned = DualEncoder.from_backbone(baseline, **({"max_query_length": cfg.max_query_length,
                                                      "max_document_length": cfg.max_document_length} if cfg else {}))
    out = {"untuned": CellStateTracker(untuned, trained.settings if trained else None)}
    if trained:
        out["tracker"] = trained
    return out


def dtr_tables(dtr: str, baseline: str, tables: dict, queries: list[str], cache_dir: str | None,
               batch_size: int) -> list[str]:
    """The DTR's top table (uid) for each query, from every table in ``tables``."""
    retriever = (DenseTableRetriever(DualEncoder.from_backbone(baseline)) if dtr == "untuned"
                 else DenseTableRetriever.from_pretrained(dtr))
    retriever.index_tables([tables[u] for u in sorted(tables)], batch_size=batch_size, show_progress_bar=True,
                           cache_dir=cache_dir)
    return [r[0][0] if r else "" for r in retriever.retrieve(queries, k=1)]


def evaluate_ottqa(checkpoint: str | None, tables_path: str, questions_path: str, passages_path: str | None,
                   split: str | None, baseline: str, dtr: str | None, cache_dir: str | None,
                   batch_size: int = 64, dtr_pool: str = "all", history_turns: int | str = "saved") -> dict:
    started = time.perf_counter()
    tables = load_tables(tables_path)
    passages = load_passages(passages_path) if passages_path else {}
    report = BenchmarkReport()
    questions = load_questions(questions_path)
    conversations = require_conversations(build_conversations(questions, tables, split, report), questions, split,
                                          questions_path, tables_path)
    turns = [(c, p, t) for c in conversations for p, t in dialogue_turns(c)]
    positions = [len(p) for _, p, _ in turns]
    scored = [i for i, (*_, t) in enumerate(turns) if t.targets]
    if not scored:
        raise DataError(f"{questions_path}: none of the {len(turns):,} questions about tables in {tables_path}"
                        f"{f' (split {split})' if split else ''} has an answer cell inside its table")
    relevant = [{(c.table_id, r, col) for r, col in t.targets} for c, _, t in turns]
    eval_tables = [tables[c.table_id] for c in conversations]

    trackers = _trackers(checkpoint, baseline, history_turns)
    ranked: dict[str, list[list]] = {}
    stats = None
    for name, tracker in trackers.items():
        stats = tracker.index_tables(eval_tables, passages, batch_size=batch_size, cache_dir=cache_dir,
                                     show_progress_bar=True)
        anchors = [tracker.history(p, t.query) for _, p, t in turns]
        ranked[name] = [[i for i, _ in r] for r in tracker.rank_texts(anchors, [c.table_id for c, *_ in turns], K,
                                                                        batch_size)]
    # BM25 over the same cell texts and anchors as the encoders (and over the current query alone).
    first = next(iter(trackers.values()))
    ids, texts, _ = first.cells(eval_tables, passages)
    bm25 = BM25Retriever(texts, ids)
    for name, anchors in (("bm25", [first.history(p, t.query) for _, p, t in turns]),
                          ("bm25 (query only)", [t.query for *_, t in turns])):
        ranked[name] = [[i for i, _ in bm25.search([a], K, subset=first.cells_of[c.table_id])[0]]
                        for a, (c, *_) in zip(anchors, turns)]
    dense = "tracker" if "tracker" in trackers else "untuned"
    fused = f"bm25 (query only)+{dense} (rrf)"
    ranked[fused] = [[i for i, _ in reciprocal_rank_fusion([[(x, 0) for x in b], [(x, 0) for x in d]], top=K)]
                     for b, d in zip(ranked["bm25 (query only)"], ranked[dense])]
    order = ["bm25", "bm25 (query only)", "untuned"] + (["tracker"] if "tracker" in trackers else []) + [fused]

    def score(kept: Sequence[bool]) -> dict:
        return {m: _metrics([ranked[m][i] if kept[i] else [] for i in scored], [relevant[i] for i in scored],
                            [positions[i] for i in scored]) for m in order}

    results: dict = {"gold_table": score([True] * len(turns))}
    if dtr:
        first_query = {c.conv_id: c.turns[0].query for c in conversations}
        pool = tables if dtr_pool == "all" else {c.table_id: tables[c.table_id] for c in conversations}
        found = dict(zip(first_query, dtr_tables(dtr, baseline, pool, list(first_query.values()), cache_dir,
                                                 batch_size)))
        hit = [found[c.conv_id] == c.table_id for c, *_ in turns]
        results["dtr_table"] = score(hit)
        results["dtr_table"]["_table_found"] = {
            "dtr": dtr, "conversations": len(conversations),
            "conversations_with_table_found": sum(found[c.conv_id] == c.table_id for c in conversations),
            "pool": dtr_pool, "pool_tables": len(pool)}
    results["_data"] = {
        "split": split, "conversations": len(conversations), "turns": len(turns), "turns_scored": len(scored),
        "tables": len(eval_tables), "cells": stats.as_dict() if stats else {}, "checkpoint": checkpoint,
        "baseline": baseline, "settings": vars(first.settings), **report.as_dict(),
        "runtime_s": round(time.perf_counter() - started, 1)}
    return results


def evaluate_hybridialogue(checkpoint: str | None, path: str, baseline: str, cache_dir: str | None,
                           batch_size: int = 64) -> dict:
    """Rank each turn's own candidates (HybriDialogue's ``possible_next_cands_ids``)."""
    hd = load_hybridialogue(path)
    turns = [(p, t) for c in hd.conversations for p, t in dialogue_turns(c)
             if hd.turn_correct.get(t.turn_id) and hd.turn_candidates.get(t.turn_id)]
    if not turns:
        raise DataError(f"{path}: none of its {sum(len(c.turns) for c in hd.conversations):,} turns has candidates "
                        "and a correct one among them")
    ids = sorted(hd.candidates)
    texts = [hd.candidates[i].text for i in ids]
    subsets = [hd.turn_candidates[t.turn_id] for _, t in turns]
    relevant = [set(hd.turn_correct[t.turn_id]) for _, t in turns]
    positions = [len(p) for p, _ in turns]
    ranked = {}
    trackers = _trackers(checkpoint, baseline)
    for name, tracker in trackers.items():
        enc = tracker.encoder
        index = cached_index(enc, texts, ids, cache_dir, batch_size=batch_size, show_progress_bar=True)
        queries = enc.encode_queries([tracker.history(p, t.query) for p, t in turns], batch_size)
        ranked[name] = [[i for i, _ in index.search(q[None], K, subset=s)[0]] for q, s in zip(queries, subsets)]
    first = next(iter(trackers.values()))
    bm25 = BM25Retriever(texts, ids)
    ranked["bm25"] = [[i for i, _ in bm25.search([first.history(p, t.query)], K, subset=s)[0]]
                      for (p, t), s in zip(turns, subsets)]
    order = ["bm25", "untuned"] + (["tracker"] if "tracker" in trackers else [])
    turns_all = sum(len(c.turns) for c in hd.conversations)
    return {"own_candidates": {m: _metrics(ranked[m], relevant, positions) for m in order},
            "_data": {"file": path, "conversations": len(hd.conversations), "turns": turns_all,
                      "turns_scored": len(turns), "turns_without_correct_candidate": turns_all - len(turns),
                      "mean_candidates": sum(map(len, subsets)) / max(len(subsets), 1)}}


def _history_turns(text: str) -> int | str | None:
    if text not in ("saved", "all") and not text.isdigit():
        raise ValueError(f"expected 'saved', 'all' or a number of turns, got {text!r}")
    return text if text == "saved" else None if text == "all" else int(text)


@dataclass
class StateTrackingEvalArguments:
    """Cell state tracking: BM25, the untuned encoder, the trained tracker and their fusion."""

    tracker: str | None = option(None, "trained tracker folder (omit to compare BM25 and the untuned encoder)",
        aliases=["--checkpoint"])
    dtr: str | None = option(None, "DTR folder, or 'untuned', for the end-to-end setting (omit to skip it)")
    dtr_pool: str = option("all", "tables the DTR chooses from: all of --tables, or the split's",
        choices=("all", "split"))
    tables: str = option(str(DATA / "tables.jsonl"), "OTT-QA tables.jsonl")
    questions: str = option(str(DATA / "questions_dev.json"), "OTT-QA questions file")
    passages: str = option(str(DATA / "passages_dev.jsonl"),
        "linked page intros ('' for none; a missing file is an error)")
    hybridialogue: str | None = option(None, "a HybriDialogue experimental_data.json: rank its own candidates")
    split: str = option("test", "the split's conversations", choices=("train", "val", "test", "all"))
    baseline: str = option("packaged:minilm", "the untuned encoder")
    cache_dir: str = option(help="cell and table embedding cache ('' to disable)", default_factory=default_cache_dir)
    batch_size: int = option(64, "encoder batch size")
    history_turns: int | str | None = option("saved", "earlier turns in the anchor: 'saved' (the checkpoint's "
        "setting), 'all' or N (an ablation)", parse=_history_turns, metavar="saved|all|N")
    output: str | None = option(None, "JSON file for the results")


def main(argv: list[str] | None = None) -> dict:
    a = parse_config(StateTrackingEvalArguments, argv, prog="python -m eval.state_tracking", description=__doc__)
    cache = a.cache_dir or None
    if a.hybridialogue:
        results = evaluate_hybridialogue(a.tracker, a.hybridialogue, a.baseline, cache, a.batch_size)
    else:
        results = evaluate_ottqa(a.tracker, a.tables, a.questions, a.passages or None,
                                 None if a.split == "all" else a.split, a.baseline, a.dtr, cache, a.batch_size,
                                 a.dtr_pool, a.history_turns)
    n = results["_data"]["turns_scored"]
    for setting, rows in results.items():
        if setting.startswith("_"):
            continue
        methods = {m: v for m, v in rows.items() if not m.startswith("_")}
        print_table(methods, COLUMNS, f"{setting} ({n} turns)", METRICS)
        best = "tracker" if "tracker" in rows else "untuned"  # turn by turn for the dense model under test
        print_table(rows[best]["by_turn"], COLUMNS, f"{setting}, {best}, turn by turn", METRICS)
        if "_table_found" in rows:
            print(json.dumps(rows["_table_found"]))
    print(json.dumps(results["_data"]))
    write_json(a.output, results)
    write_chart(state_tracking_chart, results, a.output)
    write_config(a)
    return results


def cli() -> int:
    return run_cli(main)


if __name__ == "__main__":
    sys.exit(cli())
