"""Evaluate the coarse cell state tracker: BM25, the untuned encoder, the trained tracker and the
reciprocal rank fusion of BM25 and the tracker, side by side.

    python -m eval.state_tracking --tracker runs/state_tracker [--dtr runs/dtr] [--questions FILE]
        [--tables FILE] [--passages FILE] [--split test] [--output runs/state_tracker/eval_state_tracking.json]
    python -m eval.state_tracking --tracker runs/state_tracker --hybridialogue experimental_data.json
    python -m eval.state_tracking --tracker runs/state_tracker --history-turns 0   # anchor = the query alone
    python -m eval.state_tracking --dataset sqa --tracker runs/state_tracker_sqa \
        --tracker-without-history runs/state_tracker_sqa_nohistory [--questions FILE.tsv] [--split validation]
        [--state-rerank auto|none|FILE]
    ctbls eval state-tracking ...                                                   # the same, as a command

Every turn of every conversation of the split (OTT-QA's questions grouped by table, or with
``--dataset sqa`` SQA's question sequences; retrieval/data/conversation_sets.py) is a query: its
anchor is the earlier turns (with their reference answers) and the current query, its candidates
the cells of a table, its targets the answer cell(s). Per turn: top-1/3/10 (an answer cell within
k), MRR@10 of the first answer cell and recall@10 of the answer set; overall, by position (turn 1,
2, 3, 4+) and from the second turn on. Two settings: "gold_table" (the conversation's own
table) and "dtr_table" (the table the DTR retrieves for the conversation's first query, from every
table of ``--tables``, or with ``--dtr-pool split`` from the split's tables, the cTBLS paper's
setting; a missed table is a missed turn). ``--dtr untuned`` uses the
untuned encoder as the DTR. With ``--hybridialogue`` each turn ranks its own candidates
(``possible_next_cands_ids``, their ``linearized_input``) instead.

With a state re-ranker (train/state_rerank.py; ``--state-rerank auto``, the default, takes the ``--tracker``
folder's ``state_rerank.json`` when it has one, so OTT-QA's trackers run without) one more row, "tracker with
history + state re-ranking": the tracker's ranking of the whole table re-scored from the dialogue state
(retrieval/ctbls/state_rerank.py), the previous answer it reads being the reference one, as in the anchor.

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
from pathlib import Path

import numpy as np

from eval.plots import state_tracking_chart, write_chart
from eval.report import METRICS, print_table, run_cli, write_json
from eval.results import Headline, write_results
from models.dual_encoder import DualEncoder
from retrieval.config import option, parse_config, write_config
from retrieval.ctbls.state_rerank import StateReranker, find_reranker, reference_state, whole_table_rankings
from retrieval.ctbls.state_tracker import CellStateTracker, dialogue_turns
from retrieval.ctbls.table_retriever import DenseTableRetriever
from retrieval.data.conversation_sets import (
    DATASETS,
    SPLITS,
    ConversationSet,
    load_conversation_set,
    report_split,
)
from retrieval.data.hybridialogue import load_hybridialogue
from retrieval.data.jsonio import DataError
from retrieval.data.paths import data_dir_option, default_cache_dir
from retrieval.search.bm25 import BM25Retriever
from retrieval.search.cached_index import cached_index
from retrieval.search.fusion import reciprocal_rank_fusion
from retrieval.search.metrics import ranking_metrics, recall

COLUMNS = ["mrr@10", "top1", "top3", "top10", "recall@10"]
RERANKED = "tracker with history + state re-ranking"
EVAL_SPLITS = (*dict.fromkeys(s for splits in SPLITS.values() for s in splits), "all")
K = 10


def _by_position(ranked: list[list], relevant: list[set], positions: list[int]) -> dict[str, dict]:
    """Metrics per turn position: "turn1", "turn2", "turn3", "turn4+"."""
    groups: dict[str, tuple[list, list]] = {}
    for r, rel, p in zip(ranked, relevant, positions):
        group = groups.setdefault(f"turn{p + 1}" if p < 3 else "turn4+", ([], []))
        group[0].append(r)
        group[1].append(rel)
    return {name: _scores(*pairs) for name, pairs in sorted(groups.items())}


def _scores(ranked: list[list], relevant: list[set]) -> dict:
    """MRR@10 and top-k of the first answer cell, and recall@10 of the whole answer set."""
    out = ranking_metrics(zip(ranked, relevant))
    out["recall@10"] = float(np.mean([recall(r[:K], rel) for r, rel in zip(ranked, relevant)])) if ranked else 0.0
    return out


def _metrics(ranked: list[list], relevant: list[set], positions: list[int]) -> dict:
    later = [i for i, p in enumerate(positions) if p >= 1]
    return {**_scores(ranked, relevant), "by_turn": _by_position(ranked, relevant, positions),
            "from_turn2": _scores([ranked[i] for i in later], [relevant[i] for i in later])}


def _trackers(checkpoint: str | None, baseline: str, history_turns: int | str = "saved",
              without_history: str | None = None) -> dict[str, CellStateTracker]:
    trained = CellStateTracker.from_pretrained(checkpoint) if checkpoint else None
    if trained and history_turns != "saved":  # an ablation: the anchor differs from training's
        trained.settings = replace(trained.settings, history_turns=history_turns)
    cfg = trained.encoder.config if trained else None
    untuned = DualEncoder.from_backbone(baseline, **({"max_query_length": cfg.max_query_length,
                                                      "max_document_length": cfg.max_document_length} if cfg else {}))
    out = {"untuned": CellStateTracker(untuned, trained.settings if trained else None)}
    if without_history:  # a tracker trained with the query alone as anchor, on the same budget
        out["tracker (no history)"] = CellStateTracker.from_pretrained(without_history)
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


def rank_cells(trackers: dict[str, CellStateTracker], turns: list, tables: list, passages: dict,
               cache_dir: str | None, batch_size: int) -> tuple[dict[str, list[list]], object]:
    """Each method's top-K cell ids for every (conversation, history, turn): the dense trackers, BM25 over the
    history anchor and over the query alone, and the fusion of BM25 (query) with the dense model under test."""
    ranked: dict[str, list[list]] = {}
    stats = None
    for name, tracker in trackers.items():
        stats = tracker.index_tables(tables, passages, batch_size=batch_size, cache_dir=cache_dir,
                                     show_progress_bar=True)
        anchors = [tracker.history(p, t.query) for _, p, t in turns]
        ranked[name] = [[i for i, _ in r] for r in tracker.rank_texts(anchors, [c.table_id for c, *_ in turns], K,
                                                                        batch_size)]
    # BM25 over the same cell texts and anchors as the encoders (and over the current query alone).
    first = next(iter(trackers.values()))
    ids, texts, _ = first.cells(tables, passages)
    bm25 = BM25Retriever(texts, ids)
    for name, anchors in (("bm25", [first.history(p, t.query) for _, p, t in turns]),
                          ("bm25 (query only)", [t.query for *_, t in turns])):
        ranked[name] = [[i for i, _ in bm25.search([a], K, subset=first.cells_of[c.table_id])[0]]
                        for a, (c, *_) in zip(anchors, turns)]
    dense = "tracker" if "tracker" in trackers else "untuned"
    ranked[f"bm25 (query only)+{dense} (rrf)"] = [
        [i for i, _ in reciprocal_rank_fusion([[(x, 0) for x in b], [(x, 0) for x in d]], top=K)]
        for b, d in zip(ranked["bm25 (query only)"], ranked[dense])]
    return ranked, stats


def reranked_cells(tracker: CellStateTracker, reranker: StateReranker, turns: list, tables: dict,
                   batch_size: int) -> list[list]:
    """Top-K cell ids of every turn after the state re-ranking of the tracker's whole-table ranking; the previous
    answer it reads is the reference one (as the tracker's anchor holds). ``tracker`` must be indexed."""
    anchors = [tracker.history(p, t.query) for _, p, t in turns]
    full = whole_table_rankings(tracker, anchors, [c.table_id for c, *_ in turns], batch_size)
    return [[i for i, _ in reranker.rerank(ranked, tables[c.table_id], reference_state(c, len(p)))[:K]]
            for (c, p, _), ranked in zip(turns, full)]


def evaluate_conversations(data: ConversationSet, checkpoint: str | None, baseline: str, dtr: str | None,
                           cache_dir: str | None, batch_size: int = 64, dtr_pool: str = "all",
                           history_turns: int | str = "saved", without_history: str | None = None,
                           where: tuple[str, str] = ("", ""), reranker: StateReranker | None = None) -> dict:
    """Rank every turn's table cells by each method; metrics overall, by position and from the second turn.
    With ``reranker`` (and a trained tracker) also the row :data:`RERANKED`."""
    started = time.perf_counter()
    conversations = data.conversations
    turns = [(c, p, t) for c in conversations for p, t in dialogue_turns(c)]
    positions = [len(p) for _, p, _ in turns]
    scored = [i for i, (*_, t) in enumerate(turns) if t.targets]
    if not scored:
        raise DataError(f"{where[0]}: none of the {len(turns):,} questions{where[1]} has an answer cell inside its "
                        "table")
    relevant = [{(c.table_id, r, col) for r, col in t.targets} for c, _, t in turns]
    eval_tables = [data.tables[u] for u in dict.fromkeys(c.table_id for c in conversations)]
    trackers = _trackers(checkpoint, baseline, history_turns, without_history)
    ranked, stats = rank_cells(trackers, turns, eval_tables, data.passages, cache_dir, batch_size)
    if reranker is not None and "tracker" in trackers:
        ranked[RERANKED] = reranked_cells(trackers["tracker"], reranker, turns, data.tables, batch_size)
    order = (["bm25", "bm25 (query only)"] + list(trackers) + [RERANKED] * (RERANKED in ranked)
             + [m for m in ranked if m.endswith("(rrf)")])

    def score(kept: Sequence[bool]) -> dict:
        return {m: _metrics([ranked[m][i] if kept[i] else [] for i in scored], [relevant[i] for i in scored],
                            [positions[i] for i in scored]) for m in order}

    results: dict = {"gold_table": score([True] * len(turns))}
    if dtr:
        first_query = {c.conv_id: c.turns[0].query for c in conversations}
        pool = data.tables if dtr_pool == "all" else {t.uid: t for t in eval_tables}
        found = dict(zip(first_query, dtr_tables(dtr, baseline, pool, list(first_query.values()), cache_dir,
                                                 batch_size)))
        hit = [found[c.conv_id] == c.table_id for c, *_ in turns]
        results["dtr_table"] = score(hit)
        results["dtr_table"]["_table_found"] = {
            "dtr": dtr, "conversations": len(conversations),
            "conversations_with_table_found": sum(found[c.conv_id] == c.table_id for c in conversations),
            "pool": dtr_pool, "pool_tables": len(pool)}
    results["_data"] = {
        "dataset": data.dataset, "split": data.split, "conversations": len(conversations), "turns": len(turns),
        "turns_scored": len(scored), "tables": len(eval_tables), "cells": stats.as_dict() if stats else {},
        "checkpoint": checkpoint, "checkpoint_without_history": without_history, "baseline": baseline,
        "settings": vars(next(iter(trackers.values())).settings),
        "settings_by_method": {name: vars(t.settings) for name, t in trackers.items()}, **data.report,
        "state_rerank": (reranker.report or {}).get("chosen", "fitted") if reranker else None,
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
    """Cell state tracking: BM25, the untuned encoder, the trained tracker(s) and their fusion."""

    tracker: str | None = option(None, "trained tracker folder (omit to compare BM25 and the untuned encoder)",
        aliases=["--checkpoint"])
    tracker_without_history: str | None = option(None, "a second tracker folder, trained with the query alone as "
        "anchor on the same budget: the row 'tracker (no history)'")
    dataset: str = option("ottqa", "ottqa (OTT-QA's questions grouped by table) or sqa (SQA's question sequences)",
        choices=DATASETS)
    data_dir: str = data_dir_option("ottqa/ and sqa/")
    dtr: str | None = option(None, "DTR folder, or 'untuned', for the end-to-end setting (omit to skip it)")
    dtr_pool: str = option("all", "tables the DTR chooses from: all of --tables, or the split's",
        choices=("all", "split"))
    tables: str | None = option(None, "OTT-QA tables.jsonl (default DATA_DIR/ottqa/tables.jsonl)")
    questions: str | None = option(None, "questions file: OTT-QA's format (default DATA_DIR/ottqa/questions_dev.json)"
        " or, with --dataset sqa, SQA's TSV (default DATA_DIR/sqa/train.tsv; tables read from DATA_DIR/sqa)")
    passages: str | None = option(None, "OTT-QA's linked page intros (default DATA_DIR/ottqa/passages_dev.jsonl; "
        "'' for none; a missing file is an error)")
    hybridialogue: str | None = option(None, "a HybriDialogue experimental_data.json: rank its own candidates")
    split: str | None = option(None, "the split's conversations: ottqa train, val or test (default test); sqa "
        "train, dev or validation (default validation); or all", choices=EVAL_SPLITS)
    baseline: str = option("packaged:minilm", "the untuned encoder")
    cache_dir: str = option(help="cell and table embedding cache ('' to disable)", default_factory=default_cache_dir)
    batch_size: int = option(64, "encoder batch size")
    history_turns: int | str | None = option("saved", "earlier turns in the anchor: 'saved' (the checkpoint's "
        "setting), 'all' or N (an ablation)", parse=_history_turns, metavar="saved|all|N")
    state_rerank: str = option("auto", "the state re-ranker (train/state_rerank.py): 'auto' (the --tracker folder's "
        "state_rerank.json when it has one), 'none', or a file: the row '" + RERANKED + "'")
    output: str | None = option(None, "JSON file for the results")
    results: str | None = option(None, "a results file for README's table (results/NAME.json: eval.results)")

    def conversation_set(self) -> ConversationSet:
        split = {None: report_split(self.dataset), "all": None}.get(self.split, self.split)
        return load_conversation_set(self.dataset, split, self.data_dir, self.questions, self.tables, self.passages,
                                     use_passages=self.passages != "")


def main(argv: list[str] | None = None) -> dict:
    a = parse_config(StateTrackingEvalArguments, argv, prog="python -m eval.state_tracking", description=__doc__)
    cache = a.cache_dir or None
    if a.hybridialogue:
        results = evaluate_hybridialogue(a.tracker, a.hybridialogue, a.baseline, cache, a.batch_size)
    else:
        data = a.conversation_set()
        results = evaluate_conversations(data, a.tracker, a.baseline, a.dtr, cache, a.batch_size, a.dtr_pool,
                                         a.history_turns, a.tracker_without_history, _where(a, data),
                                         find_reranker(a.state_rerank, a.tracker))
    n = results["_data"]["turns_scored"]
    for setting, rows in results.items():
        if setting.startswith("_"):
            continue
        methods = {m: v for m, v in rows.items() if not m.startswith("_")}
        print_table(methods, COLUMNS, f"{setting} ({n} turns)", METRICS)
        if "from_turn2" in next(iter(methods.values())):
            later = {m: v["from_turn2"] for m, v in methods.items()}
            print_table(later, COLUMNS, f"{setting}, from the second turn on ({later['bm25']['n']} turns)", METRICS)
        for best in [m for m in ("tracker", RERANKED) if m in rows] or ["untuned"]:  # the dense models under test
            print_table(rows[best]["by_turn"], COLUMNS, f"{setting}, {best}, turn by turn", METRICS)
        if "_table_found" in rows:
            print(json.dumps(rows["_table_found"]))
    print(json.dumps(results["_data"]))
    write_json(a.output, results)
    write_chart(state_tracking_chart, results, a.output)
    write_config(a)
    if a.results and not a.hybridialogue:
        write_results(a.results, "python -m eval.state_tracking", argv, a, lambda: headline(results), _data_files(a))
    return results


def headline(results: dict) -> list[Headline]:
    """The row of README's results table: the answer cell in the top 3 with the gold table (OTT-QA), or from the
    second question on (SQA), for the best trained ranking beside BM25 and the untuned encoder."""
    data, rows = results["_data"], results["gold_table"]
    best = next((m for m in (RERANKED, "tracker") if m in rows), None)
    if best is None:
        return []
    if data["dataset"] == "sqa":
        return [Headline(f"Cell state tracking: SQA {data['split']}, from the second question on "
                         f"({rows['bm25']['from_turn2']['n']} turns)", "top-3", rows[best]["from_turn2"]["top3"],
                         {"BM25": rows["bm25"]["from_turn2"]["top3"],
                          "tracker alone": rows["tracker"]["from_turn2"]["top3"]} if best == RERANKED else
                         {"BM25": rows["bm25"]["from_turn2"]["top3"]}, "no published cell ranking on SQA")]
    return [Headline(f"Cell state tracking: OTT-QA {data['split']}, gold table, {data['turns_scored']} turns",
                     "top-3", rows[best]["top3"], {"BM25": rows["bm25"]["top3"], "untuned MiniLM":
                                                   rows["untuned"]["top3"]},
                     "cTBLS 0.78 (HybriDialogue, about 30 candidates a turn: not ours)")]


def _data_files(a: StateTrackingEvalArguments) -> list[Path]:
    root = Path(a.data_dir)
    if a.dataset == "sqa":
        return [Path(a.questions or root / "sqa" / "train.tsv"), root / "sqa" / "table_csv"]
    files = [Path(a.tables or root / "ottqa" / "tables.jsonl"),
             Path(a.questions or root / "ottqa" / "questions_dev.json")]
    return files + ([Path(a.passages or root / "ottqa" / "passages_dev.jsonl")] if a.passages != "" else [])


def _where(a: StateTrackingEvalArguments, data: ConversationSet) -> tuple[str, str]:
    """The questions file an evaluation read, and what its questions are about, for its messages."""
    split = f" (split {data.split})" if data.split else ""
    if a.dataset == "sqa":
        return str(a.questions or Path(a.data_dir) / "sqa" / "train.tsv"), f" about its tables{split}"
    folder = Path(a.data_dir) / "ottqa"
    tables = a.tables or folder / "tables.jsonl"
    return str(a.questions or folder / "questions_dev.json"), f" about tables in {tables}{split}"


def cli() -> int:
    return run_cli(main)


if __name__ == "__main__":
    sys.exit(cli())
