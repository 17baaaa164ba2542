"""LoCoMo's temporal questions (category 2) answered, not only retrieved: answer accuracy against the gold dates.

    python -m eval.locomo_answers --output runs/locomo_answers.json                       # no LLM row
    python -m eval.locomo_answers --folds 5 --output runs/locomo_answers_folds.json       # the learned relevance too
    python -m eval.locomo_answers --llm '{"backend": "openai", "model": "smollm2", "base_url": "http://127.0.0.1:8082/v1"}'

Rows, from one run over the same questions:
- ``gold_evidence``: the answer resolved from the gold evidence turns (the first that states an event time, else
  a neighbour in its session that states one and shares the question's words, else the first turn's timestamp;
  the sentence that tells the asked event decides among a turn's phrases): resolution alone;
- ``end_to_end``: the temporal memory's answer (``TemporalMemory.when_evidence`` ranks the evidence with the
  memory's content ranking, ``answer_from_evidence`` answers from it: by default from the first ranked row that
  states an event time and shares a content word with the question, else from the top row, which may borrow a
  neighbour's time);
- ``relevance`` (with ``--folds K``): end to end with the evidence re-ranked by the learned relevance model of the
  fold that never saw the conversation (:mod:`eval.relevance_folds`), answered by the reading its best rows hold
  most (the ``support`` rule, :mod:`retrieval.memory.when_support`);
- ``relevance_top`` (with ``--folds K``): the same rows, answered from the model's best row alone (``top``);
- ``top_turn_timestamp``: the day of the top retrieved turn, what a memory without event time answers;
- ``llm`` (with ``--llm``): the LLM reads the top ``--llm-k`` retrieved turns with their dates and answers; its
  text is read by the evaluation's parser.

The gold answer is read by the evaluation's own parser (:mod:`eval.time_answers`, no code shared with the
resolver under test); answers it cannot read are counted and listed, never scored. Strict: the prediction's
interval, widened to the gold's granularity, equals the gold's (a length: the same length in the gold's unit);
lenient: they overlap and the prediction is no coarser. Reported overall, on the dev conversations (``--dev``,
where every rule and setting was chosen) and on the held-out rest, per answer form and per conversation.
"""

from __future__ import annotations

import logging
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta

import numpy as np

from eval.generation import generate_all
from eval.relevance_folds import fold_relevance, model_for, with_relevance
from eval.results import Headline, write_results
from eval.time_answers import GoldTime, parse_time_answer, score
from models.dual_encoder import load_encoder
from retrieval.atomic import write_json
from retrieval.config import option, parse_config, write_config
from retrieval.data.jsonio import INPUT_ERRORS, DataError, run_cli
from retrieval.data.locomo_qa import evidence_questions, read_samples, sample_id, sample_utterances
from retrieval.data.paths import LOCOMO_FILE, ZYPHRA_DIR, default_cache_dir
from retrieval.memory.conversation_table import ConversationTable
from retrieval.memory.event_time import event_counts
from retrieval.memory.planner import parse_margin
from retrieval.memory.relevance.confidence import WEAK_EVIDENCE, answer_is_doubted
from retrieval.memory.temporal_memory import TemporalMemory
from retrieval.memory.when_anchor import anchored_answer
from retrieval.memory.when_answer import (
    EVIDENCE_DEPTH,
    EVIDENCE_RULE,
    EVIDENCE_RULES,
    WHEN_MARGIN,
    WhenAnswer,
    answer_from_evidence,
    question_kind,
)
from retrieval.memory.when_between import answer_length_between, between_parts, length_between_events, split_evidence

logger = logging.getLogger("eval.locomo_answers")
DEV = ("conv-26", "conv-30", "conv-41")
METHODS = ("gold_evidence", "end_to_end", "relevance", "relevance_top", "top_turn_timestamp", "llm")
SYSTEM = ("You answer questions about a long conversation between two people, using dated excerpts from it. "
          "Each excerpt starts with the day it was said; words like \"yesterday\" or \"last week\" count from that "
          "day. Answer with the time only, as precise as the excerpts allow: a day (day, month name, year), a week, "
          "a month (month name and year), a year, or a length of time.")


@dataclass
class Prediction:
    answer: str | None
    start: date | None = None
    end: date | None = None
    duration: tuple | None = None
    warned: bool | None = None  # the answer says first that it may be wrong (None: no probability to say it)


def from_answer(a: WhenAnswer) -> Prediction:
    return Prediction(a.answer, a.start and a.start.date(), a.end and a.end.date(), a.duration, answer_is_doubted(a))


def from_gold_time(text: str, t: GoldTime | None) -> Prediction:
    """An LLM's answer, read by the same parser as the gold."""
    if t is None:
        return Prediction(text)
    return Prediction(text, t.start, t.end, t.duration)


def llm_prompt(question: str, rows) -> list[dict]:
    """The chat a hosted model would get: the top turns with their dates, most relevant first, then the question."""
    lines = [f"[{r['timestamp']:%A} {r['timestamp'].day} {r['timestamp']:%B %Y}] {r['speaker']}: {r['text']}"
             for _, r in rows.iterrows()]
    user = "Excerpts, most relevant first:\n" + "\n".join(lines) + f"\n\nQuestion: {question}\nAnswer:"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def conversation_records(sid: str, sample: dict, where: str, i: int, encoder, cache_dir, rule: str,
                         llm_k: int, margin: float | None, depth: int | None = EVIDENCE_DEPTH, wrap=None,
                         relevance: dict | None = None) -> tuple[list[dict], list[dict], dict]:
    """(records of parsed questions, parse failures, ingest counts) of one conversation; each record holds the
    predictions of every method but the LLM's, and the LLM's prompt. ``wrap``: as :func:`evaluate`'s."""
    utterances = sample_utterances(sample, where, i)
    memory = TemporalMemory(ConversationTable.from_utterances(utterances, encoder, cache_dir, turns=True),
                            evidence_rule=rule)
    if wrap is not None:
        memory = wrap(memory, sid)
    learned = with_relevance(memory, model_for(relevance, sid)) if relevance else None
    frame, now = memory.table.frame, memory.table.end.to_pydatetime()
    records, failures = [], []
    for qa in evidence_questions(sample, utterances, categories=(2,)):
        gold = parse_time_answer(qa.answer)
        if gold is None:
            failures.append({"sample": sid, "question": qa.question, "answer": qa.answer})
            continue
        kind = question_kind(qa.question) or "when"
        gold_rows = frame.loc[list(qa.evidence)]
        ranked = memory.when_evidence(qa.question, now, margin=None)
        kept = ranked if margin is None else memory.when_evidence(qa.question, now, margin=margin)
        e2e = anchored_answer(answer_from_evidence(kind, kept, now, rule, frame, depth, qa.question),
                              lambda q: memory.when_evidence(q, now, margin=margin), now, rule, frame)
        gold_answer = answer_from_evidence(kind, gold_rows, now, "stated", frame, question=qa.question)
        parts = between_parts(qa.question) if kind == "between" else None
        if parts:  # a length between two events: each ranked on its own (gold: the first evidence turn, the rest)
            gold_answer = answer_length_between(qa.question, *split_evidence(gold_rows), now, "stated", frame)
            e2e = length_between_events(qa.question, None, lambda part: memory.when_evidence(part, now, margin=margin),
                                        now, rule, frame) or e2e  # as the memory answers it
        top = ranked.iloc[0]["timestamp"].date() if len(ranked) else None
        preds = {"gold_evidence": from_answer(gold_answer),
                 "end_to_end": from_answer(e2e),
                 **({m: from_answer(a) for m, a in learned_answers(learned, qa.question, kind, now, depth,
                                                                    margin).items()}
                    if learned is not None else {}),
                 "top_turn_timestamp": Prediction(top and f"{top.day} {top:%B %Y}", top,
                                                  top and top + timedelta(days=1))}
        records.append({"sample": sid, "question": qa.question, "gold": qa.answer, "form": gold.form,
                        "kind": question_kind(qa.question), "gold_time": gold, "preds": preds,
                        "evidence": list(qa.evidence), "retrieved": [int(x) for x in kept.index[:3]],
                        "derivation": e2e.derivation, "prompt": llm_prompt(qa.question, ranked.head(llm_k))})
    return records, failures, event_counts(frame)


def learned_answers(memory: TemporalMemory, question: str, kind: str, now, depth: int | None,
                    margin: float | None) -> dict[str, WhenAnswer]:
    """The end-to-end answers of a memory whose second stage is a relevance model: ``relevance`` by its own evidence
    rule, ``relevance_top`` from its best row alone, both from the same ranked rows."""
    parts = between_parts(question) if kind == "between" else None
    if parts:  # a length between two events: each event's time by either rule
        rows_a, rows_b = (memory.when_evidence(p, now, margin=margin) for p in parts)
        return {m: answer_length_between(question, rows_a, rows_b, now, rule, memory.table.frame)
                for m, rule in (("relevance", memory.evidence_rule), ("relevance_top", "top"))}
    kept, frame = memory.when_evidence(question, now, margin=margin), memory.table.frame
    return {m: anchored_answer(answer_from_evidence(kind, kept, now, rule, frame, depth, question),
                               lambda q: memory.when_evidence(q, now, margin=margin), now, rule, frame)
            for m, rule in (("relevance", memory.evidence_rule), ("relevance_top", "top"))}


def add_llm(records: list[dict], backend, max_new_tokens: int) -> int:
    """The LLM's answer for every record (in place); returns the number of failed calls."""
    results = generate_all(backend, [r["prompt"] for r in records], max_new_tokens=max_new_tokens, temperature=0.0)
    for r, res in zip(records, results):
        text = res.text.strip() if res.ok else ""
        r["preds"]["llm"] = from_gold_time(text, parse_time_answer(text) if text else None)
        r["llm_error"] = None if res.ok else res.error
    return sum(not res.ok for res in results)


def scored(records: list[dict]) -> None:
    for r in records:
        r["scores"] = {m: score(r["gold_time"], p.start, p.end, p.duration) for m, p in r["preds"].items()}


def table(records: list[dict]) -> dict:
    """{method: {"n", "strict", "lenient"}} in percent."""
    out = {}
    for m in METHODS:
        s = [r["scores"][m] for r in records if m in r["scores"]]
        if s:
            out[m] = {"n": len(s), "strict": round(100 * float(np.mean([a for a, _ in s])), 1),
                      "lenient": round(100 * float(np.mean([b for _, b in s])), 1)}
            warned = [(r["scores"][m][0], r["preds"][m].warned) for r in records if m in r["scores"]]
            if any(w is not None for _, w in warned):  # what the warnings said, strict
                out[m] |= {"wrong": sum(not a for a, _ in warned), "wrong_warned": sum(not a and bool(w)
                           for a, w in warned), "right_warned": sum(bool(a) and bool(w) for a, w in warned)}
    return out


def summarise(records: list[dict], dev: Sequence[str]) -> dict:
    groups: dict[str, dict[str, list]] = {"by_form": defaultdict(list), "by_conversation": defaultdict(list)}
    for r in records:
        groups["by_form"][r["form"]].append(r)
        groups["by_conversation"][r["sample"]].append(r)
    held = [r for r in records if r["sample"] not in dev]
    # Questions whose gold is a length, by what they ask: one event's length (how long, how long ago: a turn states
    # the length or its start) or the length between two events (two dated turns).
    lengths = defaultdict(list)
    for r in records:
        if r["form"] == "duration":
            lengths[r["kind"] if r["kind"] in ("how_long", "ago", "between") else "other"].append(r)
    return {"overall": table(records), "dev": table([r for r in records if r["sample"] in dev]),
            "held_out": table(held), "held_out_by_form": {f: table([r for r in v if r["sample"] not in dev])
                                                          for f, v in sorted(groups["by_form"].items())},
            "lengths_by_kind": {k: table(v) for k, v in sorted(lengths.items())},
            "held_out_lengths_by_kind": {k: table([r for r in v if r["sample"] not in dev])
                                         for k, v in sorted(lengths.items())},
            **{g: {k: table(v) for k, v in sorted(d.items())} for g, d in groups.items()}}


def evaluate(data: str, encoder, cache_dir: str | None = None, only: Sequence[str] | None = None,
             dev: Sequence[str] = DEV, backend=None, llm_k: int = 5, max_new_tokens: int = 24,
             rule: str = EVIDENCE_RULE, margin: float | None = WHEN_MARGIN,
             depth: int | None = EVIDENCE_DEPTH, wrap=None, relevance: dict | None = None) -> dict:
    """The report over ``data``'s samples (``only`` them when given); ``wrap`` (memory, sample id) -> memory: the
    memory each conversation's questions are asked of (``eval.memory_engines``), default its table; ``relevance``:
    conversation key -> the relevance model that never saw it (``--folds``: the ``relevance`` row)."""
    samples = read_samples(data)
    known = [sample_id(s, i) for i, s in enumerate(samples)]
    unknown = sorted(set(only or ()) - set(known))
    if unknown:
        raise DataError(f"{data}: no samples {unknown} (it has {known})")
    records, failures, ingest = [], [], {}
    for i, sample in enumerate(samples):
        sid = known[i]
        if only and sid not in only:
            continue
        recs, fails, ingest[sid] = conversation_records(sid, sample, str(data), i, encoder, cache_dir,
                                                        rule, llm_k, margin, depth, wrap, relevance)
        records += recs
        failures += fails
        logger.info("%s: %d questions scored, %d gold answers unread", sid, len(recs), len(fails))
    if not records:
        raise DataError(f"{data}: no category-2 question with a gold answer the parser reads")
    llm_failed = add_llm(records, backend, max_new_tokens) if backend is not None else None
    scored(records)
    return {"data": str(data), "encoder": encoder.identity, "dev": list(dev), "evidence_rule": rule,
            "evidence_margin": margin, "evidence_depth": depth,
            "folds": len({id(m) for m in relevance.values()}) if relevance else None,
            "llm": backend.identity if backend is not None else None, "llm_failed": llm_failed,
            "n_scored": len(records),
            "gold_unread": failures, "ingest": ingest, "results": summarise(records, dev),
            "questions": [question_json(r) for r in records]}


def question_json(r: dict) -> dict:
    return {k: r[k] for k in ("sample", "question", "gold", "form", "kind", "evidence", "retrieved", "derivation")} | {
        "answers": {m: p.answer for m, p in r["preds"].items()},
        "strict": {m: s[0] for m, s in r["scores"].items()}, "lenient": {m: s[1] for m, s in r["scores"].items()}}


def print_table(title: str, rows: dict[str, dict]) -> None:
    print(f"\n{title}")
    print(f"{'':<22}" + "".join(f"{m:>22}" for m in METHODS))
    for name, row in rows.items():
        cells = [f"{row[m]['strict']:.1f} / {row[m]['lenient']:.1f} ({row[m]['n']})" if m in row else "-"
                 for m in METHODS]
        print(f"{name:<22}" + "".join(f"{c:>22}" for c in cells))


def print_report(report: dict) -> None:
    res = report["results"]
    print(f"LoCoMo category 2: {report['n_scored']} questions scored, {len(report['gold_unread'])} gold answers the "
          f"parser does not read (listed in the JSON); dev {', '.join(report['dev'])}; strict / lenient % (n)")
    print_table("all", {"overall": res["overall"], "dev": res["dev"], "held-out": res["held_out"]})
    print_table("per answer form (all conversations)", res["by_form"])
    print_table("per answer form (held-out)", res["held_out_by_form"])
    print_table("length answers by what the question asks (all conversations)", res["lengths_by_kind"])
    print_table("length answers by what the question asks (held-out)", res["held_out_lengths_by_kind"])
    print_table("per conversation", res["by_conversation"])
    for part in ("overall", "dev", "held_out"):
        row = res[part].get("relevance", {})
        if "wrong_warned" in row:
            print(f"relevance, {part}: the warnings (weak evidence, P < {WEAK_EVIDENCE}; conflicting evidence) on "
                  f"{row['wrong_warned']} of {row['wrong']} wrong answers and {row['right_warned']} of "
                  f"{row['n'] - row['wrong']} right ones")
    held = [f for f in report["gold_unread"] if f["sample"] not in report["dev"]]
    for f in report["gold_unread"]:  # held-out questions are counted, not shown: whoever reads this tunes on dev
        if f["sample"] in report["dev"]:
            print(f"  unread gold: {f['sample']}: {f['question']!r} -> {f['answer']!r}")
    if held:
        print(f"  unread gold on the held-out conversations: {len(held)} (listed in the JSON)")
    print("ingest (event times per conversation): " + "; ".join(
        f"{k} {v['with_event_time']}/{v['rows']} rows, {v['unresolved_no_event_time']} with a time word no rule "
        f"reads, {v['vague_only']} vague" for k, v in report["ingest"].items()))


def parse_depth(text: str) -> int | None:
    """``--evidence-depth``: a number of rows (at least 1), or 'none' for all."""
    if str(text).strip().lower() in ("none", ""):
        return None
    n = int(text)
    if n < 1:
        raise ValueError(f"the evidence depth must be at least 1 or 'none', got {text!r}")
    return n


@dataclass
class LocomoAnswersArguments:
    """LoCoMo's temporal questions: answer accuracy (strict and lenient) against the gold dates."""

    locomo: str = option(str(LOCOMO_FILE), "LoCoMo JSON (locomo_open.json)")
    encoder: str | None = option(None, "dual encoder checkpoint folder or backbone (default: packaged MiniLM)")
    cache_dir: str = option(help="embedding cache ('' for none)", default_factory=lambda: default_cache_dir("temporal"))
    samples: list[str] | None = option(None, "sample ids to evaluate (default: all)")
    dev: list[str] = option(list(DEV), "the conversations rules and settings were chosen on (the rest: held-out)")
    evidence_rule: str = option(EVIDENCE_RULE, "which ranked row answers (retrieval.memory.when_answer.pick_evidence):"
                                " stated_shared, the default; stated (the first that states a time) or top (the first)"
                                ", the rules README compares it with", choices=EVIDENCE_RULES)
    evidence_margin: float | None = option(WHEN_MARGIN, "evidence rows kept within this share of the fused scores' "
        "spread of the best ('none': all 10)", parse=parse_margin)
    evidence_depth: int | None = option(EVIDENCE_DEPTH, "ranked rows the evidence rule looks at ('none': all)",
                                        parse=parse_depth)
    llm: str | dict | None = option(None, "LLM spec for the LLM row (e.g. a llama.cpp server: '{\"backend\": "
        "\"openai\", \"model\": \"smollm2\", \"base_url\": \"http://127.0.0.1:8082/v1\"}'); none: no LLM row")
    llm_k: int = option(5, "retrieved turns the LLM reads")
    max_new_tokens: int = option(24, "tokens the LLM may write")
    llm_cache: str = option("", "sqlite cache of LLM answers ('' for none)")
    output: str | None = option(None, "write the results (and every question's answers) as JSON here")
    results: str | None = option(None, "a results file for README's table (results/NAME.json: eval.results)")
    folds: int | None = option(None, "also answer with the learned relevance model, scored by this many "
        "leave-conversations-out folds over every open conversation (eval.relevance_folds)")
    zyphra_dir: str = option(str(ZYPHRA_DIR), "Zyphra's folder: its time+content questions are training data for "
        "--folds ('' for LoCoMo only)")


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_config(LocomoAnswersArguments, argv, prog="python -m eval.locomo_answers", description=__doc__)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        backend = None
        if args.llm not in (None, "", "none"):
            from retrieval.llm import load_backend

            backend = load_backend(args.llm, cache=args.llm_cache or None)
        encoder = load_encoder(args.encoder)
        relevance = fold_relevance(args.folds, encoder, args.locomo, args.zyphra_dir or None,
                                   args.cache_dir or None) if args.folds else None
        report = evaluate(args.locomo, encoder, args.cache_dir or None, args.samples, args.dev,
                          backend, args.llm_k, args.max_new_tokens, args.evidence_rule,
                          args.evidence_margin, args.evidence_depth, relevance=relevance)
    except INPUT_ERRORS as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print_report(report)
    if args.output:
        write_json(args.output, report, indent=2, default=str)
        write_config(args)
    write_results(args.results, "python -m eval.locomo_answers", argv, args, lambda: headline(report), [args.locomo])
    return 0


def headline(report: dict) -> list[Headline]:
    """README's rows: strict accuracy end to end and from the gold evidence, over every conversation and over the
    held-out ones, beside the top retrieved turn's own timestamp (a memory without event time)."""
    res, out = report["results"], []
    for part, name in (("overall", "all"), ("held_out", "held-out")):
        rows = res[part]
        if "end_to_end" not in rows:  # no questions in this part
            continue
        task = f"LoCoMo when-answers, {name} conversations ({rows['end_to_end']['n']} questions), strict interval"
        base = {"top turn's timestamp": rows["top_turn_timestamp"]["strict"]}
        out.append(Headline(task, "end to end (%)", rows["end_to_end"]["strict"], base,
                            "LLM-judged answers (another metric): Zep 79.8, Mem0 55.5" if part == "overall" else "",
                            1, 1))
        if "relevance" in rows:
            best_row = {"the model's best row alone": rows["relevance_top"]["strict"]} if "relevance_top" in rows \
                else {}
            out.append(Headline(task, f"end to end, learned relevance, {report['folds']} folds (%)",
                                rows["relevance"]["strict"], base | best_row, "", 1, 1))
        out.append(Headline(task, "from gold evidence (%)", rows["gold_evidence"]["strict"], {}, "", 1, 1))
    return out


if __name__ == "__main__":
    sys.exit(run_cli(main))
