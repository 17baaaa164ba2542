"""Evaluate cTBLS responses: ROUGE-1/2/L precision (the paper's metric), recall and F1 against reference answers.

    python -m eval.response --dtr runs/dtr --tracker runs/state_tracker [--llm smollm2]
        [--split test] [--max-conversations N] [--output runs/eval_response.json]
        [--predictions runs/eval_response.jsonl] [--cache $CTBLS_CACHE_DIR/generations.sqlite]
        [--fine-stage free spans extractive] [--table-setting bm25 dtr gold] [--span-scoring pmi]
    python -m eval.response --dataset sqa --tracker runs/state_tracker_sqa --split validation   # eval/response_sqa.py
    ctbls eval response ...        # the same, as a command

Every turn of every OTT-QA conversation of the split is answered by the LLM in these settings:

- ``none``: no knowledge, only the dialogue history and the query;
- ``top1`` / ``top3``: the tracker's top-1 / top-3 cells as knowledge, from the table chosen by
  ``bm25`` (BM25 over table texts), ``dtr`` (the Dense Table Retriever) or ``gold`` (the
  conversation's own table). BM25 and the DTR retrieve from the conversation's first query, and the
  table is kept for its later turns, as cTBLS does. Both search the tables of the split's
  conversations (``--pool split``, the default, the paper's setting; the same pool whatever
  ``--max-conversations``) or every table of ``--tables`` (``--pool all``);
- ``extractive``: no LLM; the answer is the top cell's value, for each table setting;
- ``spans/<table>``: the fine stage by span choice (``--fine-stage spans``; :mod:`eval.fine_stage`): the LLM
  scores candidate spans of the top ``--span-k`` cells (cell values, their parts, dates, numbers, entities and
  words of the linked pages) after few-shot examples from ``--examples-split``, and the likeliest is the answer.

``--fine-stage`` picks which of ``free`` (none, top1, top3), ``spans`` and ``extractive`` are scored, and
``--table-setting`` which tables. Besides ROUGE, ``exact`` is the exact match of the answer text (case and
spacing ignored).

The reference is the turn's OTT-QA ``answer-text``; the history is the earlier turns' queries and
*reference* answers (as the paper's evaluation does). Generation is greedy by default and cached in
sqlite (``--cache``), so a rerun gives the same numbers without LLM calls; identical prompts (e.g.
when BM25, the DTR and the gold table agree) are generated once.

A generation that fails (timeout, error, empty answer; after the backend's own retries) is
recorded with its reason in ``failures`` and scored as an empty answer (ROUGE 0); the run always
finishes and reports how many failed per setting.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from eval.fine_stage import SpanStage, choose_spans, exact_match, training_examples
from eval.generation import ROUGE_TYPES, generate_all, rouge_scores
from eval.plots import response_chart, write_chart
from eval.report import run_cli, write_json
from eval.response_sqa import main_sqa
from retrieval.atomic import write_text
from retrieval.config import option, parse_config, write_config
from retrieval.ctbls.pipeline import DEFAULT_MAX_NEW_TOKENS, response_messages
from retrieval.ctbls.prompts import DEFAULT_KNOWLEDGE_BUDGET, RESPONSE_SYSTEM_PROMPT
from retrieval.ctbls.span_choice import FINE_STAGES, SCORINGS, SpanChoice, span_cells
from retrieval.ctbls.state_tracker import CellStateTracker, dialogue_turns
from retrieval.ctbls.table_retriever import DenseTableRetriever
from retrieval.data.ottqa import load_passages, load_questions, load_tables
from retrieval.data.ottqa_conversations import BenchmarkReport, build_conversations, require_conversations
from retrieval.data.paths import data_dir_option, default_cache_dir
from retrieval.data.types import Conversation, Table
from retrieval.llm import LLMBackend, load_backend
from retrieval.search.bm25 import BM25Retriever

TABLE_SETTINGS = ("bm25", "dtr", "gold")
logger = logging.getLogger(__name__)


def setting_names(fine_stages: Sequence[str] = ("free", "extractive"),
                  table_settings: Sequence[str] = TABLE_SETTINGS) -> list[str]:
    """Every evaluated setting of these fine stages and tables, in report order."""
    names = (["none"] + [f"top{k}/{t}" for k in (1, 3) for t in table_settings]) if "free" in fine_stages else []
    return names + [f"{stage}/{t}" for stage in ("spans", "extractive") if stage in fine_stages
                    for t in table_settings]


def choose_tables(conversations: Sequence[Conversation], tables: Mapping[str, Table], pool: Sequence[str],
                  retriever: DenseTableRetriever, cache_dir: str | None, batch_size: int = 64) -> dict[str, dict]:
    """Per table setting, conversation id -> chosen table uid, from each conversation's first query."""
    first = [c.turns[0].query for c in conversations]
    texts = [retriever.settings.text(tables[u]) for u in pool]
    bm25 = BM25Retriever(texts, list(pool))
    retriever.index_tables([tables[u] for u in pool], batch_size=batch_size, cache_dir=cache_dir)
    found = {"bm25": bm25.search(first, 1), "dtr": retriever.retrieve(first, k=1)}
    chosen = {name: {c.conv_id: (r[0][0] if r else None) for c, r in zip(conversations, hits)}
              for name, hits in found.items()}
    chosen["gold"] = {c.conv_id: c.table_id for c in conversations}
    return chosen


def _value(tables: Mapping[str, Table], cell_id: tuple[str, int, int]) -> str:
    return tables[cell_id[0]].cell(cell_id[1], cell_id[2]).text


def _free_prompts(turns, ranked, cell_text, llm, table_settings, knowledge_budget, system_prompt) -> dict[str, list]:
    """The paper's settings: no knowledge, then the top-1 and top-3 cells of each table setting."""
    count = llm.count_tokens
    prompts: dict[str, list] = {"none": [response_messages(h, [], t.query, knowledge_budget=knowledge_budget,
                                                           count_tokens=count, system_prompt=system_prompt)
                                         for _, h, t in turns]}
    for k in (1, 3):
        for name in table_settings:
            prompts[f"top{k}/{name}"] = [
                response_messages(h, [cell_text[i] for i, _ in cells[:k]], t.query, knowledge_budget=knowledge_budget,
                                  count_tokens=count, system_prompt=system_prompt)
                for (_, h, t), cells in zip(turns, ranked[name])]
    return prompts


def _span_answers(turns, ranked, tables, passages, tracker, llm, table_settings, span_stage, examples,
                  knowledge_budget) -> dict[str, list[SpanChoice]]:
    """Per table setting, each turn's chosen span; a turn whose cells two settings share is scored once."""
    keys = {(j, tuple(i for i, _ in ranked[name][j][:span_stage.k])) for name in table_settings
            for j in range(len(turns))}
    keys = sorted(keys)
    cells = [span_cells(tables[ids[0][0]], [i[1:] for i in ids], passages, tracker.settings,
                        span_stage.passage_words) if ids else [] for _, ids in keys]
    choices = choose_spans(llm, [(h, t.query) for j, _ in keys for _, h, t in [turns[j]]], cells, examples,
                           span_stage, knowledge_budget=knowledge_budget)
    found = dict(zip(keys, choices, strict=True))
    return {name: [found[(j, tuple(i for i, _ in ranked[name][j][:span_stage.k]))] for j in range(len(turns))]
            for name in table_settings}


def _score(texts: Sequence[str], references: Sequence[str], failed: int) -> dict:
    return {**rouge_scores(texts, references), "exact": exact_match(texts, references), "n": len(texts),
            "failed": failed}


def evaluate(conversations: Sequence[Conversation], tables: Mapping[str, Table], passages: Mapping[str, str],
             retriever: DenseTableRetriever, tracker: CellStateTracker, llm: LLMBackend, *,
             pool: Sequence[str] | None = None, max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
             temperature: float = 0.0, knowledge_budget: int | None = DEFAULT_KNOWLEDGE_BUDGET,
             system_prompt: str | None = RESPONSE_SYSTEM_PROMPT, cache_dir: str | None = None,
             batch_size: int = 64, chunk: int = 16, fine_stages: Sequence[str] = ("free", "extractive"),
             table_settings: Sequence[str] = TABLE_SETTINGS, span_stage: SpanStage | None = None,
             examples: Sequence = ()) -> tuple[dict, list[dict]]:
    """Score every setting of :func:`setting_names` over ``conversations``; returns (results, per-turn records).

    ``fine_stages``: ``free`` (the LLM writes), ``spans`` (the LLM chooses a span, :mod:`eval.fine_stage`, with
    ``span_stage`` and the few-shot ``examples``), ``extractive`` (the top cell's value)."""
    started = time.perf_counter()
    pool = sorted(tables) if pool is None else list(pool)
    chosen = choose_tables(conversations, tables, pool, retriever, cache_dir, batch_size)
    turns = [(c, h, t) for c in conversations for h, t in dialogue_turns(c) if (t.answer or "").strip()]
    skipped = sum(len(c.turns) for c in conversations) - len(turns)

    needed = {u for picks in chosen.values() for u in picks.values() if u}
    tracker.index_tables([tables[u] for u in sorted(needed)], passages, batch_size=batch_size, cache_dir=cache_dir,
                         cache_per_table=True)
    cell_text = dict(zip(*tracker.cells([tables[u] for u in sorted(needed)], passages)[:2]))
    anchors = [tracker.history(h, t.query) for _, h, t in turns]
    span_stage = span_stage or SpanStage()
    top = max(3, span_stage.k) if "spans" in fine_stages else 3
    ranked = {name: tracker.rank_texts(anchors, [chosen[name][c.conv_id] or "" for c, _, _ in turns], top,
                                       batch_size) for name in table_settings}

    prompts = (_free_prompts(turns, ranked, cell_text, llm, table_settings, knowledge_budget, system_prompt)
               if "free" in fine_stages else {})
    order = list(prompts)
    flat = [p for name in order for p in prompts[name]]
    generated = generate_all(llm, flat, max_new_tokens=max_new_tokens, temperature=temperature, chunk=chunk)
    answers = {name: [g.text if g.ok else "" for g in generated[i * len(turns):(i + 1) * len(turns)]]
               for i, name in enumerate(order)}
    errors = {name: {j: g.error for j, g in enumerate(generated[i * len(turns):(i + 1) * len(turns)]) if not g.ok}
              for i, name in enumerate(order)}
    if "spans" in fine_stages:
        spans = _span_answers(turns, ranked, tables, passages, tracker, llm, table_settings, span_stage, examples,
                              knowledge_budget)
        for name in table_settings:
            answers[f"spans/{name}"] = [c.text for c in spans[name]]
            errors[f"spans/{name}"] = {j: c.error for j, c in enumerate(spans[name]) if not c.ok}
    if "extractive" in fine_stages:
        for name in table_settings:
            answers[f"extractive/{name}"] = [_value(tables, cells[0][0]) if cells else "" for cells in ranked[name]]
            errors[f"extractive/{name}"] = {}

    references = [t.answer for _, _, t in turns]
    results: dict = {name: _score(answers[name], references, len(errors[name])) for name in answers}
    results["failures"] = [{"setting": name, "turn_id": turns[j][2].turn_id, "error": e}
                           for name in answers for j, e in errors[name].items()]
    records = _records(turns, chosen, ranked, answers, errors, table_settings)
    table_found = {name: sum(chosen[name][c.conv_id] == c.table_id for c in conversations)
                   for name in ("bm25", "dtr")}
    results["_data"] = {
        "conversations": len(conversations), "turns": len(turns), "turns_without_reference": skipped,
        "pool_tables": len(pool), "first_turn_table_found": table_found, "fine_stages": list(fine_stages),
        "table_settings": list(table_settings), "span_stage": asdict(span_stage) if "spans" in fine_stages else None,
        "few_shot_examples": [list(e) for e in examples] if "spans" in fine_stages else None,
        "llm": llm.identity, "max_new_tokens": max_new_tokens, "temperature": temperature,
        "knowledge_budget": knowledge_budget, "system_prompt": system_prompt,
        "generations": len(generated), "distinct_prompts": len({json.dumps(p, sort_keys=True) for p in flat}),
        "cached_generations": sum(g.cached for g in generated), "failed_generations": sum(not g.ok for g in generated),
        "runtime_s": round(time.perf_counter() - started, 1)}
    return results, records


def _records(turns, chosen, ranked, answers, errors, table_settings) -> list[dict]:
    """One record per turn: its tables, ranked cells and every setting's answer (and error)."""
    return [{"conv_id": c.conv_id, "turn_id": t.turn_id, "query": t.query, "reference": t.answer,
             "tables": {name: chosen[name][c.conv_id] for name in table_settings},
             "cells": {name: [[list(i), s] for i, s in ranked[name][j][:3]] for name in table_settings},
             "answers": {name: answers[name][j] for name in answers},
             "errors": {name: errors[name][j] for name in answers if j in errors[name]},
             "extractive": {name: answers[f"extractive/{name}"][j] for name in table_settings
                            if f"extractive/{name}" in answers}}
            for j, (c, _, t) in enumerate(turns)]


COLUMNS = [f"{r}_{m}" for m in "prf" for r in ROUGE_TYPES] + ["exact"]
LABELS = {"rouge1": "R1", "rouge2": "R2", "rougeL": "RL"}


def print_results(results: dict) -> None:
    """One table: settings as rows; ROUGE-1/2/L precision, then recall, then F1; failed generations."""
    d = results["_data"]
    print(f"\nResponses: {d['turns']} turns of {d['conversations']} conversations; LLM {d['llm']}; "
          f"tables found on the first turn: bm25 {d['first_turn_table_found']['bm25']}, "
          f"dtr {d['first_turn_table_found']['dtr']} of {d['conversations']} (pool {d['pool_tables']})")
    head = [f"{LABELS[c.split('_')[0]]}-{c.split('_')[1].upper()}" if "_" in c else "EM" for c in COLUMNS]
    names = setting_names(d.get("fine_stages", FINE_STAGES), d.get("table_settings", TABLE_SETTINGS))
    width = max(len(n) for n in names) + 2
    print(" " * width + "".join(f"{h:>8}" for h in head) + f"{'failed':>8}")
    for name in names:
        row = results[name]
        print(f"{name:<{width}}" + "".join(f"{row[c]:>8.4f}" for c in COLUMNS) + f"{row['failed']:>8d}")
    print(f"failed generations: {d['failed_generations']} of {d['generations']} "
          f"({d['distinct_prompts']} distinct prompts, {d['cached_generations']} answered from the cache)")


@dataclass(kw_only=True)
class ResponseEvalArguments:
    """cTBLS responses: ROUGE against the reference answers, per knowledge and table setting."""

    dtr: str | None = option(None, "Dense Table Retriever checkpoint folder (OTT-QA)")
    tracker: str = option(help="cell state tracker checkpoint folder")
    llm: str | dict = option("smollm2", "LLM spec: 'smollm2', 'openai:MODEL', or a JSON mapping")
    cache: str = option(help="sqlite generation cache ('' for none)",
        default_factory=lambda: default_cache_dir("generations.sqlite"))
    data_dir: str = data_dir_option("ottqa/ or sqa/ (--dataset)", aliases=["--sqa-data"])
    tables: str | None = option(None, "OTT-QA tables.jsonl (default: DATA_DIR/ottqa/tables.jsonl)")
    questions: str | None = option(None, "OTT-QA questions file (default: DATA_DIR/ottqa/questions_dev.json)")
    passages: str | None = option(None, "linked page intros (default: DATA_DIR/ottqa/passages_dev.jsonl; '' for none; "
        "a missing file is an error)")
    dataset: str = option("ottqa", "ottqa (ROUGE of answers) or sqa (answer accuracy of cell sets)",
        choices=("ottqa", "sqa"))
    sqa_questions: str | None = option(None, "--dataset sqa: a questions TSV in SQA's format (default sqa/train.tsv)")
    split: str | None = option(None, "the split's conversations (default: test for OTT-QA, validation for SQA)",
        choices=("train", "val", "test", "all", "dev", "validation"))
    pool: str = option("split", "tables BM25 and the DTR search: the split's conversations' tables, or all of --tables",
        choices=("all", "split"))
    max_conversations: int | None = option(None, "only the first N conversations")
    max_new_tokens: int = option(DEFAULT_MAX_NEW_TOKENS, "answer length limit, tokens")
    temperature: float = option(0.0, "0 = greedy, deterministic")
    knowledge_budget: int = option(DEFAULT_KNOWLEDGE_BUDGET, "tokens of knowledge")
    system_prompt: str = option(RESPONSE_SYSTEM_PROMPT, "the LLM's system prompt")
    cache_dir: str = option(help="table and cell embedding cache ('' to disable)", default_factory=default_cache_dir)
    batch_size: int = option(64, "encoder batch size")
    chunk: int = option(16, "prompts per LLM call (progress and cache granularity)")
    fine_stage: list[str] = option(list(FINE_STAGES), "fine stages to score: free (the LLM writes), spans (the LLM "
        "chooses a span of the top cells by likelihood), extractive (the top cell's value)", choices=FINE_STAGES)
    table_setting: list[str] = option(list(TABLE_SETTINGS), "tables the cells come from", choices=TABLE_SETTINGS)
    span_k: int = option(SpanStage.k, "spans: top cells whose spans are candidates")
    span_scoring: str = option(SpanStage.scoring, "spans: total log-prob, per-token mean, or pmi (less the "
        "log-prob without the query)", choices=SCORINGS)
    span_shots: int = option(SpanStage.shots, "spans: few-shot examples from the training split (0-3)")
    span_passage_words: int = option(SpanStage.passage_words, "spans: words of each cell's linked pages")
    examples_split: str = option("train", "the split few-shot examples come from", choices=("train", "val", "dev"))
    span_margin: float | None = option(None, "sqa spans: also the cells of the chosen column within this log-prob")
    output: str | None = option(None, "JSON file for the results")
    predictions: str | None = option(None, "JSONL file for every turn's tables, cells and answers")

    def __post_init__(self) -> None:
        ottqa = Path(self.data_dir) / "ottqa"
        self.tables = self.tables or str(ottqa / "tables.jsonl")
        self.questions = self.questions or str(ottqa / "questions_dev.json")
        self.passages = str(ottqa / "passages_dev.jsonl") if self.passages is None else self.passages
        splits = {"ottqa": ("train", "val", "test", "all"), "sqa": ("train", "dev", "validation")}[self.dataset]
        self.split = self.split or splits[-1 if self.dataset == "sqa" else 2]
        if self.split not in splits:
            raise ValueError(f"--split {self.split} is not a split of {self.dataset}: {', '.join(splits)}"
                             + (" (SQA's test set is withheld)" if self.dataset == "sqa" else ""))
        if self.dataset == "ottqa" and not self.dtr:
            raise ValueError("--dtr is required for OTT-QA (the table each conversation's first query retrieves)")
        if not 0 <= self.span_shots <= 3:
            raise ValueError(f"--span-shots must be 0 to 3, got {self.span_shots}")
        if self.span_k < 1:
            raise ValueError(f"--span-k must be at least 1, got {self.span_k}")
        if self.examples_split == self.split:
            raise ValueError(f"--examples-split {self.examples_split} is the evaluated split: few-shot examples "
                             "must come from other turns")


def main(argv: list[str] | None = None) -> dict:
    a = parse_config(ResponseEvalArguments, argv, prog="python -m eval.response", description=__doc__)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    if a.dataset == "sqa":
        return main_sqa(a)
    tables = load_tables(a.tables)
    passages = load_passages(a.passages) if a.passages else {}
    report = BenchmarkReport()
    split = None if a.split == "all" else a.split
    questions = load_questions(a.questions)
    conversations = require_conversations(build_conversations(questions, tables, split, report), questions, split,
                                          a.questions, a.tables)
    in_split = sorted({c.table_id for c in conversations})
    if a.max_conversations is not None:
        conversations = conversations[:a.max_conversations]
    llm = load_backend(a.llm, cache=a.cache or None)
    stage = SpanStage(k=a.span_k, scoring=a.span_scoring, shots=a.span_shots, passage_words=a.span_passage_words)
    tracker = CellStateTracker.from_pretrained(a.tracker)
    examples = (training_examples(build_conversations(questions, tables, a.examples_split, BenchmarkReport()),
                                  tables, passages, tracker.settings, stage) if "spans" in a.fine_stage else [])
    results, records = evaluate(
        conversations, tables, passages, DenseTableRetriever.from_pretrained(a.dtr),
        tracker, llm, pool=in_split if a.pool == "split" else None,
        max_new_tokens=a.max_new_tokens, temperature=a.temperature, knowledge_budget=a.knowledge_budget,
        system_prompt=a.system_prompt or None, cache_dir=a.cache_dir or None, batch_size=a.batch_size,
        chunk=a.chunk, fine_stages=a.fine_stage, table_settings=a.table_setting, span_stage=stage,
        examples=examples)
    results["_data"].update({"split": a.split, "pool": a.pool, "max_conversations": a.max_conversations,
                             "dtr": a.dtr, "tracker": a.tracker, "questions": a.questions, **report.as_dict()})
    print_results(results)
    write_json(a.output, results)
    write_chart(response_chart, results, a.output)
    if a.predictions:
        write_text(a.predictions, "".join(json.dumps(r) + "\n" for r in records))
    write_config(a)
    return results


def cli() -> int:
    return run_cli(main)


if __name__ == "__main__":
    sys.exit(cli())
