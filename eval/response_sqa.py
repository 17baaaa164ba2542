"""SQA answers from the fine stage: sets of cells, scored with SQA's answer accuracy, and ROUGE for the LLM paths.

    python -m eval.response --dataset sqa --tracker runs/state_tracker_sqa [--split validation]
        [--max-conversations N] [--fine-stage free spans extractive] [--output runs/response_sqa.json]

Each turn of each sequence ranks its table's cells with the tracker (the anchor is the tracker's own
history: earlier questions with their *gold* answers, then the question, as in eval.response), then:

- ``extractive``: no LLM, the top cell;
- ``free``: the LLM writes an answer from the top-3 cells (the response prompt); its answer is mapped
  back to the top cells whose value it contains (whole words, case and spacing ignored);
- ``spans``: the LLM scores the values of the top-``k`` cells as answers (:mod:`eval.fine_stage`, after
  few-shot examples from the *train* split); the answer is the chosen cell and, with ``--span-margin``,
  the cells of its column that scored within the margin (:func:`~retrieval.ctbls.span_choice.choose_cells`).

Answer accuracy: a turn is right when its predicted set of cell texts equals the gold ``answer_text`` set
after normalisation (:func:`answer_key`); ALL over turns, SEQ over whole sequences, and by position
(0, 1, 2, 3+). ROUGE-1/2/L of the LLM paths' texts against the gold texts joined by ", ".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence

from eval.fine_stage import SpanStage, choose_spans, exact_match
from eval.response import rouge_scores
from retrieval.ctbls.pipeline import response_messages
from retrieval.ctbls.span_choice import choose_cells, span_cells
from retrieval.ctbls.spans import normalise
from retrieval.ctbls.state_tracker import CellStateTracker, dialogue_turns
from retrieval.data.sqa import SQAData
from retrieval.data.types import Table

POSITIONS = ("0", "1", "2", "3+")
# what separates words when a free answer is matched to cell values: all but word characters, %, -, and . or ,
# between digits ("1.5", "12,000")
_WORDS = re.compile(r"[^\w%.,-]+|(?<!\d)[.,]|[.,](?!\d)")
PUBLISHED = {"DynSP (Iyyer et al. 2017), official test set": {"ALL": 44.7, "SEQ": 12.8},
             "TaPas (Herzig et al. 2020), official test set": {"ALL": 67.2, "SEQ": 40.4}}


def answer_key(texts: Sequence[str]) -> frozenset[str]:
    """A set of answer texts, normalised as WikiTableQuestions' evaluator does in outline: Unicode NFKD without
    accents, lowercase, quotes and a final full stop dropped, spacing collapsed."""
    def one(text: str) -> str:
        text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
        text = re.sub(r"[‘’´`\"“”]", "", text.lower()).strip()
        return " ".join(re.sub(r"\.$", "", text).split())
    return frozenset(one(t) for t in texts)


def accuracy(predicted: Sequence[Sequence[str]], gold: Sequence[Sequence[str]], conv_ids: Sequence[str],
             positions: Sequence[int]) -> dict[str, float]:
    """SQA's answer accuracy (percent): ALL, SEQ (every turn of a sequence right) and by position."""
    right = [answer_key(p) == answer_key(g) for p, g in zip(predicted, gold, strict=True)]
    by_seq: dict[str, bool] = {}
    for conv, ok in zip(conv_ids, right, strict=True):
        by_seq[conv] = by_seq.get(conv, True) and ok
    out = {"ALL": 100 * sum(right) / len(right) if right else 0.0,
           "SEQ": 100 * sum(by_seq.values()) / len(by_seq) if by_seq else 0.0}
    for name in POSITIONS:
        hits = [ok for ok, p in zip(right, positions, strict=True) if (p >= 3 if name == "3+" else p == int(name))]
        out[f"position {name}"] = 100 * sum(hits) / len(hits) if hits else 0.0
        out[f"n position {name}"] = len(hits)
    return out


def cells_named(answer: str, table: Table, cells: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The cells among ``cells`` whose value the free answer contains as whole words (case, spacing ignored)."""
    text = " " + normalise(_WORDS.sub(" ", answer)) + " "
    named = []
    for row, col in cells:
        value = normalise(_WORDS.sub(" ", table.cell(row, col).text))
        if value and f" {value} " in text:
            named.append((row, col))
    return named


def evaluate_sqa(data: SQAData, tracker: CellStateTracker, llm, *, fine_stages: Sequence[str],
                 span_stage: SpanStage, examples: Sequence, margin: float | None, generate,
                 knowledge_budget: int | None, system_prompt: str | None, cache_dir: str | None = None,
                 batch_size: int = 64) -> tuple[dict, list[dict]]:
    """Answer every turn of ``data`` with each fine stage; ``generate(prompts) -> [GenerationResult]``."""
    tables = data.tables
    turns = [(c, h, t) for c in data.conversations for h, t in dialogue_turns(c)]
    tracker.index_tables([tables[u] for u in sorted({c.table_id for c in data.conversations})], {},
                         batch_size=batch_size, cache_dir=cache_dir, cache_per_table=True)
    top = max(3, span_stage.k)
    ranked = tracker.rank_texts([tracker.history(h, t.query) for _, h, t in turns], [c.table_id for c, _, _ in turns],
                                top, batch_size)
    ranked = [[i[1:] for i, _ in r] for r in ranked]
    cells = [span_cells(tables[c.table_id], r, {}, tracker.settings, span_stage.passage_words)
             for (c, _, _), r in zip(turns, ranked, strict=True)]
    predicted: dict[str, list[list[tuple[int, int]]]] = {}
    texts: dict[str, list[str]] = {}
    if "extractive" in fine_stages:
        predicted["extractive"] = [r[:1] for r in ranked]
    if "free" in fine_stages:
        prompts = [response_messages(h, [x.text for x in cs[:3]], t.query, knowledge_budget=knowledge_budget,
                                     count_tokens=llm.count_tokens, system_prompt=system_prompt)
                   for (_, h, t), cs in zip(turns, cells, strict=True)]
        texts["free"] = [g.text if g.ok else "" for g in generate(prompts)]
        predicted["free"] = [cells_named(a, tables[c.table_id], r[:3])
                             for a, (c, _, _), r in zip(texts["free"], turns, ranked, strict=True)]
    if "spans" in fine_stages:
        stage = SpanStage(**{**span_stage.__dict__, "kinds": ("cell",)})
        choices = choose_spans(llm, [(h, t.query) for _, h, t in turns], cells, examples, stage,
                               knowledge_budget=knowledge_budget, desc="span choice (sqa)")
        predicted["spans"] = [choose_cells(ch, cs[:stage.k], margin=margin, scoring=stage.scoring)
                              for ch, cs in zip(choices, cells, strict=True)]
        # every candidate's score, so a margin can be chosen on a dev run without scoring again
        texts["span_scores"] = [[[s.text, round(a.total, 4), a.tokens] for s, a in ch.scores] for ch in choices]
    results, records = _scores(data, turns, predicted, texts)
    for record, r in zip(records, ranked, strict=True):
        record["ranked"] = [list(x) for x in r]
    return results, records


def _scores(data: SQAData, turns, predicted: Mapping[str, list], texts: Mapping[str, list]) -> tuple[dict, list]:
    gold = [data.answer_texts[t.turn_id] for _, _, t in turns]
    conv_ids = [c.conv_id for c, _, _ in turns]
    positions = [len(h) for _, h, _ in turns]
    values = {name: [[tables_value(data, c.table_id, x) for x in p] for p, (c, _, _) in zip(preds, turns)]
              for name, preds in predicted.items()}
    results: dict = {}
    for name, vals in values.items():
        results[name] = accuracy(vals, gold, conv_ids, positions)
        if name != "extractive":
            written = texts["free"] if name == "free" else [", ".join(v) for v in vals]
            references = [", ".join(g) for g in gold]
            results[name].update(rouge_scores(written, references))
            results[name]["exact"] = exact_match(written, references)
    results["_data"] = {"turns": len(turns), "sequences": len(set(conv_ids)), "tables": len(data.tables),
                        "published": PUBLISHED, "reader": dict(data.report)}
    records = [{"turn_id": t.turn_id, "question": t.query, "gold": g,
                "predicted": {name: values[name][j] for name in values},
                "written": {name: texts[name][j] for name in texts}}
               for j, ((_, _, t), g) in enumerate(zip(turns, gold, strict=True))]
    return results, records


def tables_value(data: SQAData, uid: str, cell: tuple[int, int]) -> str:
    return data.tables[uid].cell(*cell).text


def print_sqa(results: dict) -> None:
    """One table: each fine stage's ALL / SEQ / by position, then ROUGE-1 precision where the LLM wrote."""
    d = results["_data"]
    print(f"\nSQA answers: {d['turns']} turns of {d['sequences']} sequences over {d['tables']} tables")
    cols = ["ALL", "SEQ", *(f"position {p}" for p in POSITIONS)]
    print(f"{'':<14}" + "".join(f"{c.replace('position ', 'pos '):>9}" for c in cols) + f"{'R1-P':>9}{'EM':>9}")
    for name in (n for n in ("extractive", "free", "spans") if n in results):
        r = results[name]
        tail = f"{r['rouge1_p']:>9.4f}{r['exact']:>9.4f}" if "rouge1_p" in r else ""
        print(f"{name:<14}" + "".join(f"{r[c]:>9.1f}" for c in cols) + tail)
    for who, figures in PUBLISHED.items():
        print(f"  theirs: {who}: ALL {figures['ALL']} / SEQ {figures['SEQ']}")


def main_sqa(a) -> dict:
    """``python -m eval.response --dataset sqa``: ``a`` is :class:`eval.response.ResponseEvalArguments`."""
    import json

    from eval.fine_stage import training_examples
    from eval.report import write_json
    from eval.response import generate_all
    from retrieval.atomic import write_text
    from retrieval.config import write_config
    from retrieval.data.sqa import load_sqa
    from retrieval.llm import load_backend

    data = load_sqa(a.sqa_dir, split=a.split, questions=a.sqa_questions)
    if a.max_conversations is not None:
        data.conversations = data.conversations[:a.max_conversations]
        data.tables = {c.table_id: data.tables[c.table_id] for c in data.conversations}
    tracker = CellStateTracker.from_pretrained(a.tracker)
    stage = SpanStage(k=a.span_k, scoring=a.span_scoring, shots=a.span_shots, passage_words=a.span_passage_words)
    llm = load_backend(a.llm, cache=a.cache or None) if set(a.fine_stage) - {"extractive"} else None
    examples = []
    if "spans" in a.fine_stage and stage.shots:
        train = load_sqa(a.sqa_dir, split=a.examples_split)
        examples = training_examples(train.conversations, train.tables, {}, tracker.settings, stage,
                                     kinds=("cell",), per_kind=stage.shots)
    results, records = evaluate_sqa(
        data, tracker, llm, fine_stages=a.fine_stage, span_stage=stage, examples=examples, margin=a.span_margin,
        generate=lambda prompts: generate_all(llm, prompts, max_new_tokens=a.max_new_tokens,
                                              temperature=a.temperature, chunk=a.chunk),
        knowledge_budget=a.knowledge_budget, system_prompt=a.system_prompt or None,
        cache_dir=a.cache_dir or None, batch_size=a.batch_size)
    results["_data"].update({"dataset": "sqa", "split": a.split, "tracker": a.tracker, "llm": llm and llm.identity,
                             "span_stage": stage.__dict__, "span_margin": a.span_margin,
                             "few_shot_examples": [list(e) for e in examples]})
    print_sqa(results)
    write_json(a.output, results)
    if a.predictions:
        write_text(a.predictions, "".join(json.dumps(r) + "\n" for r in records))
    write_config(a)
    return results
