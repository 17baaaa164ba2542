"""SQA answers from the three fine stages, one run: SQA's answer accuracy, and ROUGE for the LLM paths.

    python -m eval.response --dataset sqa --tracker runs/state_tracker_sqa [--split validation]
        [--max-conversations N] [--fine-stage free spans extractive] [--span-k 10] [--span-margin M]

The machinery is eval.answer_accuracy's (w17a): its data (:mod:`retrieval.data.conversation_sets`), its answer
comparison and ALL / SEQ / by-position accuracy, its extractive selector with the rule chosen on the dev split,
and its free LLM path (eval/answer_llm.py: the LLM given the top-3 cells, its answer mapped back to the cells it
names). This module adds the third fine stage and runs all three on the same turns (the anchor is the tracker's
history with the earlier *gold* answers, as eval.response does):

- ``spans``: the LLM scores the values of the top-``k`` cells as answers (:mod:`eval.fine_stage`, after few-shot
  examples from the *train* split); the answer is the chosen cell, and with ``--span-margin`` also the cells of
  its column whose score is within the margin (:func:`~retrieval.ctbls.span_choice.choose_cells`).

Records carry every candidate's score, so a margin can be chosen on a dev run without scoring again.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

from eval.answer_accuracy import PUBLISHED, accuracy, cell_texts, choose_rule, rank_turns
from eval.answer_llm import llm_answers
from eval.fine_stage import SpanStage, choose_spans, exact_match, training_examples
from eval.generation import rouge_scores
from retrieval.ctbls.span_choice import choose_cells, span_cells
from retrieval.ctbls.state_tracker import CellStateTracker, dialogue_turns
from retrieval.data.conversation_sets import ConversationSet, load_conversation_set, selection_split

COLUMNS = ["all", "seq", "turn1", "turn2", "turn3", "turn4+"]
MARGINS = (None, 0.5, 1.0, 2.0, 4.0, 8.0)  # the grid every spans run reports, to choose --span-margin on dev


def span_answers(tracker: CellStateTracker, data: ConversationSet, llm, stage: SpanStage, examples: Sequence,
                 margin: float | None, batch_size: int = 64) -> tuple[dict[str, list], list[dict], dict]:
    """Each turn's cells by span choice among the top ``stage.k`` cells' values, per-turn records, and the ALL
    accuracy the same scores give at each margin of :data:`MARGINS` (to choose the margin on dev)."""
    stage = replace(stage, kinds=("cell",))
    turns = [(c, p, t) for c in data.conversations for p, t in dialogue_turns(c)]
    ranked = tracker.rank_texts([tracker.history(p, t.query) for _, p, t in turns], [c.table_id for c, *_ in turns],
                                stage.k, batch_size)
    cells = [span_cells(data.tables[c.table_id], [i[1:] for i, _ in r], {}, tracker.settings, stage.passage_words)
             for (c, _, _), r in zip(turns, ranked, strict=True)]
    choices = choose_spans(llm, [(p, t.query) for _, p, t in turns], cells, examples, stage, knowledge_budget=None,
                           desc="span choice (sqa)")
    answers, records = {}, []
    for (conv, _, turn), cs, choice in zip(turns, cells, choices, strict=True):
        answers[turn.turn_id] = [(conv.table_id, *cell) for cell in choose_cells(choice, cs, margin=margin,
                                                                                 scoring=stage.scoring)]
        records.append({"turn_id": turn.turn_id, "question": turn.query, "gold": data.answer_texts[turn.turn_id],
                        "ranked": [list(c.cell) for c in cs], "chosen": cell_texts(data, answers[turn.turn_id]),
                        "scores": [[s.text, round(a.total, 4)] for s, a in choice.scores], "error": choice.error})
    grid = {}
    for m in MARGINS:
        at = {t.turn_id: [(c.table_id, *cell) for cell in choose_cells(ch, cs, margin=m, scoring=stage.scoring)]
              for (c, _, t), cs, ch in zip(turns, cells, choices, strict=True)}
        grid[str(m)] = accuracy(data, at)["all"]
    return answers, records, grid


def evaluate_sqa(tracker: CellStateTracker, data: ConversationSet, dev: ConversationSet | None, llm, *,
                 fine_stages: Sequence[str], stage: SpanStage, examples: Sequence, margin: float | None,
                 batch_size: int = 64) -> tuple[dict, list[dict]]:
    """Answer accuracy (and ROUGE where an LLM answers) of each fine stage on ``data``; ``dev`` chooses the
    extractive rule. ``tracker`` must have indexed both."""
    rows, records = {}, []
    references = [", ".join(data.answer_texts[t.turn_id]) for c in data.conversations for t in c.turns]
    if "extractive" in fine_stages:
        rule, grid = choose_rule(tracker, dev, batch_size)
        rows["extractive"] = {**accuracy(data, rank_turns(tracker, data, [rule], "gold", batch_size)[rule]),
                              "rule": rule.name, "rule_chosen_on": dev.split, "rule_grid_all": grid}
    if "free" in fine_stages:
        said, summary = llm_answers(tracker, data, llm, top_k=3, batch_size=batch_size)
        rows["free"] = {**accuracy(data, said), **{k: v for k, v in summary.items() if k != "examples"}}
    if "spans" in fine_stages:
        said, records, grid = span_answers(tracker, data, llm, stage, examples, margin, batch_size)
        written = [", ".join(cell_texts(data, said[t.turn_id])) for c in data.conversations for t in c.turns]
        rows["spans"] = {**accuracy(data, said), **rouge_scores(written, references),
                         "exact": exact_match(written, references), "margin": margin, "k": stage.k,
                         "margin_grid_all": grid}
    return rows, records


def print_sqa(results: dict) -> None:
    """Each fine stage's ALL / SEQ / by position (percent), ROUGE-1 precision where the LLM answered; theirs below."""
    d = results["_data"]
    print(f"\nSQA answers, {d['split']}: {d['questions']} questions of {d['sequences']} sequences")
    print(f"{'':<12}" + "".join(f"{c:>8}" for c in COLUMNS) + f"{'R1-P':>8}")
    for name, row in results["answer_accuracy"].items():
        tail = f"{row['rouge1_p']:>8.4f}" if "rouge1_p" in row else ""
        print(f"{name:<12}" + "".join(f"{100 * row.get(c, 0.0):>8.1f}" for c in COLUMNS) + tail)
    if "margin_grid_all" in results["answer_accuracy"].get("spans", {}):
        grid = results["answer_accuracy"]["spans"]["margin_grid_all"]
        print("spans, ALL by --span-margin (choose on dev): "
              + ", ".join(f"{m} {100 * v:.1f}" for m, v in grid.items()))
    for name, row in PUBLISHED.items():
        print(f"  theirs: {name}: " + ", ".join(f"{c} {100 * v:.1f}" for c, v in row.items()))


def main_sqa(a) -> dict:
    """``python -m eval.response --dataset sqa``: ``a`` is :class:`eval.response.ResponseEvalArguments`."""
    from eval.report import write_json
    from retrieval.atomic import write_text
    from retrieval.config import write_config
    from retrieval.llm import load_backend

    tracker = CellStateTracker.from_pretrained(a.tracker)
    data = load_conversation_set("sqa", a.split, a.data_dir, a.sqa_questions)
    if a.max_conversations is not None:
        keep = data.conversations[:a.max_conversations]
        data = replace(data, conversations=keep, tables={c.table_id: data.tables[c.table_id] for c in keep})
    dev = load_conversation_set("sqa", selection_split("sqa"), a.data_dir) if "extractive" in a.fine_stage else None
    tables = {**(dev.tables if dev else {}), **data.tables}
    tracker.index_tables(tables.values(), batch_size=a.batch_size, cache_dir=a.cache_dir or None,
                         cache_per_table=True)
    stage = SpanStage(k=a.span_k, scoring=a.span_scoring, shots=a.span_shots, passage_words=a.span_passage_words)
    llm = load_backend(a.llm, cache=a.cache or None) if set(a.fine_stage) - {"extractive"} else None
    examples = []
    if "spans" in a.fine_stage and stage.shots:
        train = load_conversation_set("sqa", a.examples_split, a.data_dir)
        examples = training_examples(train.conversations, train.tables, {}, tracker.settings, stage,
                                     kinds=("cell",), per_kind=stage.shots)
    rows, records = evaluate_sqa(tracker, data, dev, llm, fine_stages=a.fine_stage, stage=stage, examples=examples,
                                 margin=a.span_margin, batch_size=a.batch_size)
    results = {"answer_accuracy": rows, "published": PUBLISHED, "_data": {
        "dataset": "sqa", "split": a.split, "questions": sum(len(c.turns) for c in data.conversations),
        "sequences": len(data.conversations), "tables": len(data.tables), "tracker": a.tracker,
        "llm": getattr(llm, "identity", None), "span_stage": stage.__dict__, "span_margin": a.span_margin,
        "few_shot_examples": [list(e) for e in examples], **data.report}}
    print_sqa(results)
    write_json(a.output, results)
    if a.predictions:
        write_text(a.predictions, "".join(json.dumps(r) + "\n" for r in records))
    write_config(a)
    return results
