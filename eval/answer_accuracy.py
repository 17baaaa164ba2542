"""SQA's answer accuracy of the extractive fine stage: the tracker ranks a table's cells, a rule picks the set.

    python -m eval.answer_accuracy --tracker runs/state_tracker_sqa --output runs/state_tracker_sqa/answers.json
    python -m eval.answer_accuracy --tracker runs/state_tracker_sqa --questions FILE.tsv --split all
    python -m eval.answer_accuracy --tracker runs/state_tracker_sqa --llm smollm2 --llm-sequences 30

The rule (retrieval/ctbls/cell_selector.py: the top cell's column within a margin of its score, or as many cells
as the answer's predicted shape says, retrieval/ctbls/answer_shape.py, a classifier fit on the train tables' turns)
is chosen on the ``--choose-on`` split (SQA dev tables) by answer accuracy over all questions, then reported on
``--split`` (validation) and never re-chosen there. A question is right when its predicted cells' texts equal the gold
answer texts as a set after SQA's normalisation (retrieval/ctbls/answer_sets.py); a sequence when all its
questions are. Reported: ALL (questions), SEQ (sequences) and by position, with two histories in the anchor:
``predicted`` (the earlier questions with the answers this system gave: what a deployed system has, and the
headline) and ``gold`` (with the reference answers, as eval.state_tracking ranks). Beside them, the published
figures of DynSP and TaPas on SQA's official test set (SOURCE.md), labelled as theirs: a different set of tables.
With a state re-ranker (``--state-rerank``: by default the tracker folder's ``state_rerank.json`` when it has
one; train/state_rerank.py) the same rows again over its re-ranking of the tracker's cells ("extractive + state
re-ranking"), reading the previous answer the history holds (the system's own, or the reference), with a rule
chosen on dev for it. With ``--llm``, the LLM given the top cells answers the first ``--llm-sequences`` sequences
(eval/answer_llm.py: its answer mapped back to the cells it names), scored beside the extractive selector on the
same sequences, with the ROUGE of its answer texts.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace

from eval.answer_llm import llm_answers
from eval.report import METRICS, print_table, run_cli, write_json
from retrieval.config import option, parse_config, write_config
from retrieval.ctbls.answer_sets import cells_named, same_answer
from retrieval.ctbls.answer_shape import AnswerShapeClassifier
from retrieval.ctbls.cell_selector import SelectionRule, candidate_rules, select_cells
from retrieval.ctbls.state_features import TurnState
from retrieval.ctbls.state_rerank import StateReranker, find_reranker, previous_cells
from retrieval.ctbls.state_tracker import CellStateTracker
from retrieval.data.conversation_sets import ConversationSet, load_conversation_set, report_split, selection_split
from retrieval.data.paths import data_dir_option, default_cache_dir
from retrieval.data.types import Conversation
from retrieval.llm import llm_spec, load_backend

PUBLISHED = {  # SQA's official (withheld) test set, as published: not our tables
    "DynSP (published, SQA test)": {"all": 0.447, "seq": 0.128, "turn1": 0.704, "turn2": 0.411, "turn3": 0.236},
    "TaPas (published, SQA test)": {"all": 0.672, "seq": 0.404},
}
COLUMNS = ["all", "seq", "turn1", "turn2", "turn3", "turn4+"]
STATE_RERANKED = " + state re-ranking"
Answers = dict[str, list]  # turn id -> the predicted cells (uid, row, col)


def cell_texts(data: ConversationSet, cells: list) -> list[str]:
    return [data.tables[uid].cell(r, c).text for uid, r, c in cells]


def rank_turns(tracker: CellStateTracker, data: ConversationSet, rules: list[SelectionRule], history: str,
               batch_size: int = 64, shapes: dict[str, str] | None = None,
               reranker: StateReranker | None = None) -> dict[SelectionRule, Answers]:
    """Each rule's answer cells for every turn, position by position. With ``history="predicted"`` a turn's
    anchor (and the previous rows a shape rule uses) holds the answers the same rule gave the earlier turns (one
    ranking per rule and turn); with ``"gold"`` the reference answers (one ranking per turn serves every rule).
    ``shapes``: each turn's predicted answer shape, for the shape rules. ``reranker``: the state re-ranking of
    the tracker's ranking, reading the same previous answer (the rule's own, or the reference), before the rule."""
    k = max(t.n_rows * t.n_cols for t in data.tables.values())
    answers: dict[SelectionRule, Answers] = {rule: {} for rule in rules}
    gold = {t.turn_id: [(c.table_id, r, col) for r, col in t.targets] for c in data.conversations for t in c.turns}
    mentions = mentioned_cells(data)
    groups = [[rule] for rule in rules] if history == "predicted" else [rules]
    for group in groups:
        for position in range(max(len(c.turns) for c in data.conversations)):
            convs = [c for c in data.conversations if len(c.turns) > position]
            said = answers[group[0]] if history == "predicted" else None
            anchors = [tracker.history(_previous(c, position, data, said), c.turns[position].query) for c in convs]
            ranked = tracker.rank_texts(anchors, [c.table_id for c in convs], k, batch_size)
            for conv, cells in zip(convs, ranked):
                turn = conv.turns[position]
                before = (gold if said is None else said).get(conv.turns[position - 1].turn_id) if position else None
                if reranker is not None:
                    state = TurnState(turn.query, position, previous_cells(before),
                                      conv.turns[position - 1].query if position else "")
                    cells = reranker.rerank(cells, data.tables[conv.table_id], state)
                rows = {r for _, r, _ in before} if before else None
                for rule in group:
                    answers[rule][turn.turn_id] = select_cells(cells, rule, (shapes or {}).get(turn.turn_id), rows,
                                                               mentions[turn.turn_id])
    return answers


def _previous(conv: Conversation, position: int, data: ConversationSet, said: Answers | None) -> list:
    """The earlier turns as (question, answer): the reference answer (``said`` None, as in training), or the text
    of the cells ``said`` gave it."""
    if said is None:
        return [(t.query, t.answer) for t in conv.turns[:position]]
    return [(t.query, ", ".join(cell_texts(data, said[t.turn_id]))) for t in conv.turns[:position]]


def mentioned_cells(data: ConversationSet) -> dict[str, list]:
    """Each turn's cells whose value its question names as a phrase (answer_sets.cells_named)."""
    cells = {uid: [((uid, r, c), cell.text) for r, row in enumerate(t.rows) for c, cell in enumerate(row)]
             for uid, t in data.tables.items()}
    return {t.turn_id: cells_named(t.query, cells[c.table_id]) for c in data.conversations for t in c.turns}


def predicted_shapes(classifier: AnswerShapeClassifier, data: ConversationSet) -> dict[str, str]:
    """Each turn's answer shape as the classifier predicts it from the question and its position."""
    turns = [(p, t) for c in data.conversations for p, t in enumerate(c.turns)]
    return dict(zip([t.turn_id for _, t in turns], classifier.predict([t.query for _, t in turns],
                                                                       [p for p, _ in turns])))


def accuracy(data: ConversationSet, answers: Answers) -> dict:
    """ALL, SEQ and by position ("turn1" .. "turn4+") of one rule's answers."""
    right = {t.turn_id: same_answer(cell_texts(data, answers[t.turn_id]), data.answer_texts[t.turn_id])
             for c in data.conversations for t in c.turns}
    by: dict[str, list[bool]] = {}
    for conv in data.conversations:
        for p, turn in enumerate(conv.turns):
            by.setdefault(f"turn{p + 1}" if p < 3 else "turn4+", []).append(right[turn.turn_id])
    seqs = [all(right[t.turn_id] for t in c.turns) for c in data.conversations]
    return {"all": sum(right.values()) / len(right), "seq": sum(seqs) / len(seqs),
            **{name: sum(v) / len(v) for name, v in sorted(by.items())}, "n": len(right), "sequences": len(seqs)}


def choose_rule(tracker: CellStateTracker, dev: ConversationSet, batch_size: int,
                shapes: dict[str, str] | None = None, reranker: StateReranker | None = None
                ) -> tuple[SelectionRule, dict]:
    """The rule of :func:`candidate_rules` (the shape rules too, given ``shapes``) with the best ALL on ``dev``
    (gold history; ties: the earlier rule), over the tracker's ranking or its state re-ranking (``reranker``)."""
    rules = candidate_rules(shapes is not None)
    answers = rank_turns(tracker, dev, rules, "gold", batch_size, shapes, reranker)
    scores = {rule.name: accuracy(dev, answers[rule])["all"] for rule in rules}
    best = max(rules, key=lambda r: scores[r.name])  # max keeps the first of equals
    return best, scores


def show_sequence(data: ConversationSet, conv: Conversation, answers: Answers) -> None:
    """One sequence turn by turn: the question, the cells chosen (from the predicted history), the gold answer."""
    table = data.tables[conv.table_id]
    print(f"\n--- sequence {conv.conv_id}, table {table.uid} ({table.title}; columns: {' | '.join(table.header)})")
    for turn in conv.turns:
        said = cell_texts(data, answers[turn.turn_id])
        mark = "right" if same_answer(said, data.answer_texts[turn.turn_id]) else "wrong"
        print(f"Q: {turn.query}\n   answer ({mark}): {said}\n   gold: {data.answer_texts[turn.turn_id]}")


@dataclass
class AnswerAccuracyArguments:
    """SQA answer accuracy of the tracker's ranking with an extractive cell selector."""

    tracker: str = option(help="trained tracker folder (train/state_tracker.py --dataset sqa)")
    data_dir: str = data_dir_option("sqa/")
    questions: str | None = option(None, "a questions TSV in SQA's format (default: DATA_DIR/sqa/train.tsv)")
    choose_on: str = option(selection_split("sqa"), "the split the rule is chosen on", choices=("train", "dev"))
    split: str = option(report_split("sqa"), "the split reported", choices=("train", "dev", "validation", "all"))
    batch_size: int = option(64, "encoder batch size")
    cache_dir: str = option(help="cell embedding cache ('' to disable)", default_factory=default_cache_dir)
    seed: int = option(0, "seed of the answer-shape classifier")
    show_sequences: int = option(0, "print the first N sequences of the split answered turn by turn")
    llm: str | dict = option("none", "also the LLM fine stage: 'smollm2', 'openai:MODEL', a JSON mapping, or none")
    llm_sequences: int = option(30, "the LLM answers the first N sequences of the split (CPU time)")
    llm_top_k: int = option(3, "top cells the LLM is shown")
    cache: str = option(help="sqlite generation cache ('' for none)",
        default_factory=lambda: default_cache_dir("generations.sqlite"))
    state_rerank: str = option("auto", "the state re-ranker (train/state_rerank.py) before the selector: 'auto' "
        "(the tracker folder's state_rerank.json when it has one), 'none', or a file; its rows beside the tracker's")
    output: str | None = option(None, "JSON file for the results")

    def __post_init__(self) -> None:
        if self.split == self.choose_on:
            raise ValueError(f"--split {self.split}: the rule is chosen there (--choose-on); report another split")


def _indexed(tracker: CellStateTracker, data: ConversationSet, a: AnswerAccuracyArguments) -> ConversationSet:
    tracker.index_tables(data.tables.values(), batch_size=a.batch_size, cache_dir=a.cache_dir or None,
                         show_progress_bar=True)
    return data


def _llm_rows(a: AnswerAccuracyArguments, tracker: CellStateTracker, data: ConversationSet, extractive: Answers,
              rows: dict) -> dict:
    """The LLM's answers on the first ``llm_sequences`` sequences, beside the extractive selector's on the same
    ones (both with the gold history); adds their rows to ``rows`` and returns the LLM's summary (ROUGE, ...)."""
    part = replace(data, conversations=data.conversations[: a.llm_sequences])
    llm = load_backend(a.llm, cache=a.cache or None)
    said, summary = llm_answers(tracker, part, llm, a.llm_top_k, batch_size=a.batch_size)
    n = len(part.conversations)
    rows[f"extractive, gold history, first {n} sequences"] = accuracy(part, extractive)
    rows[f"LLM ({summary_name(llm)}) given the top {a.llm_top_k} cells, first {n} sequences"] = accuracy(part, said)
    return {**summary, "sequences": n, "llm": summary_name(llm)}


def summary_name(llm: object) -> str:
    return str(getattr(llm, "name", None) or type(llm).__name__)


def extractive_rows(tracker: CellStateTracker, dev: ConversationSet, data: ConversationSet,
                    shapes: tuple[dict, dict], reranker: StateReranker | None, load: Callable,
                    batch_size: int = 64) -> tuple[dict, dict, list[dict[str, Answers]]]:
    """The extractive selector over the tracker's ranking, and over its state re-ranking when there is a
    ``reranker``: each with its own rule chosen on ``dev``, then answering ``data`` with the predicted and the gold
    history. ``load(set)`` indexes a set's tables (the tracker holds one set's cells at a time: dev's for the
    choice, then ``data``'s). Returns the accuracy rows, the rules chosen, and each ranking's answers by history."""
    rankings = [("", None)] + [(STATE_RERANKED, reranker)] * (reranker is not None)
    load(dev)
    chosen = {}
    for suffix, rr in rankings:
        rule, grid = choose_rule(tracker, dev, batch_size, shapes[0], rr)
        chosen[suffix or "tracker"] = {"rule": rule, "name": rule.name, "chosen_on": dev.split, "grid_all": grid}
        print(f"rule chosen on {dev.split}{suffix} (ALL {grid[rule.name]:.3f}): {rule.name}")
    load(data)
    rows, answered = {}, []
    for suffix, rr in rankings:
        rule = chosen[suffix or "tracker"].pop("rule")
        chosen[suffix or "tracker"]["chosen"] = asdict(rule)
        answers = {h: rank_turns(tracker, data, [rule], h, batch_size, shapes[1], rr)[rule]
                   for h in ("predicted", "gold")}
        rows.update({f"extractive{suffix}, {h} history": accuracy(data, said) for h, said in answers.items()})
        answered.append(answers)
    return rows, chosen, answered


def main(argv: list[str] | None = None) -> dict:
    a = parse_config(AnswerAccuracyArguments, argv, prog="python -m eval.answer_accuracy", description=__doc__)
    tracker = CellStateTracker.from_pretrained(a.tracker)

    train = load_conversation_set("sqa", "train", a.data_dir, a.questions)
    classifier = AnswerShapeClassifier(a.seed).fit(train.conversations, train.tables)
    dev = load_conversation_set("sqa", a.choose_on, a.data_dir, a.questions)
    data = load_conversation_set("sqa", None if a.split == "all" else a.split, a.data_dir, a.questions)
    shapes = (predicted_shapes(classifier, dev), predicted_shapes(classifier, data))
    reranker = find_reranker(a.state_rerank, a.tracker)
    rows, chosen, answered = extractive_rows(tracker, dev, data, shapes, reranker,
                                             lambda d: _indexed(tracker, d, a), a.batch_size)
    for conv in data.conversations[: a.show_sequences]:  # the last ranking's (re-ranked, when there is a re-ranker)
        show_sequence(data, conv, answered[-1]["predicted"])
    llm_summary = _llm_rows(a, tracker, data, answered[0]["gold"], rows) if llm_spec(a.llm) else None
    results = {"answer_accuracy": {**rows, **PUBLISHED}, "_rule": chosen["tracker"],
               "_rule_state_rerank": chosen.get(STATE_RERANKED),
               "_data": {"split": a.split, "tracker": a.tracker, "questions": rows[next(iter(rows))]["n"],
                         "sequences": rows[next(iter(rows))]["sequences"], "tables": len(data.tables),
                         "state_rerank": (reranker.report or {}).get("chosen", "fitted") if reranker else None,
                         **data.report},
               **({"_llm": llm_summary} if llm_summary else {})}
    print_table(results["answer_accuracy"], COLUMNS, f"SQA answer accuracy, {a.split} ({results['_data']['questions']}"
                f" questions, {results['_data']['sequences']} sequences); published rows: the official test set",
                METRICS)
    print(json.dumps(results["_data"]))
    write_json(a.output, results)
    write_config(a)
    return results


def cli() -> int:
    return run_cli(main)


if __name__ == "__main__":
    sys.exit(cli())
