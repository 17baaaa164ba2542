"""A user trial: a hand-written chat and the questions a person would put to it, each with its key written before
any run, asked of the file-based memory (``ctbls memory ask --log``) and of the living memory (``ctbls memory import``
then ``ask``), and scored.

    python -m eval.user_trial                                   # eval/trial/chat.jsonl, eval/trial/questions.jsonl
    python -m eval.user_trial --chat MY_CHAT.jsonl --questions MY_QUESTIONS.jsonl --output runs/trial.json

The chat is JSONL (``{"id", "speaker", "text", "timestamp"}`` a line, sessions by the 30-minute gap rule); each
question is ``{"id", "question", "now", "history", "key", "note"}``. A question with a history is asked as a chat
with the memory asks it (:mod:`retrieval.memory.follow_ups`): the history's questions first, then the question after
them and what their answers named, when it refers back. A key is one of:

- ``{"expect": "date", "start": D, "end": D}``: a when-question; the days of the event (inclusive);
- ``{"expect": "length", "days": N}``: a "how long between" question;
- ``{"expect": "turns", "turns": [ids]}``: the turns a good answer shows;
- ``{"expect": "none", "start": D, "end": D}``: a period in which nothing was said;
- ``{"expect": "counts", "period": "week" | "session", "turns": [ids]}``: a trend question ("how much did we talk
  about X, week by week?"), asked of the memory's table by the trend analysis (``--trend-threshold``) and scored by
  its counts per period (:mod:`eval.trial_trends`).

**Verdicts** (fixed before the first run):

- date and length: ``eval.time_answers.score`` against the key (the one LoCoMo's answers are scored with):
  strict is *right*; lenient only (the answer overlaps the days and is no coarser, or a length within half a day)
  is *partly*; anything else, or no date, is *wrong*;
- turns: *right* when every key turn is among the answer's rows and at least a quarter of the rows are key turns;
  *partly* when some key turn is there; *wrong* when none is;
- none: *right* when the answer has no rows, *wrong* when it offers rows;
- counts: *right* when every period's count is within 15 % of the key's, *partly* when half of the key's periods
  are, else *wrong* (:mod:`eval.trial_trends`).

A wrong answer whose result carries no warning (``TemporalResult.warnings``: words not read, nothing found, weak
evidence) is also counted as **wrong without saying so**; a right answer that carries one, as **right, with a
warning** (what the warnings cost).

Both memories re-rank with the relevance model (``--relevance``: by default the packaged one, trained on the open
data, never on a trial chat), whose answers say first when their evidence is more likely not evidence
(:mod:`retrieval.memory.relevance.confidence`); the file-based memory with the hand-tuned ranking is asked in the
same run as the baseline row. ``--relevance none`` asks both with the hand-tuned ranking only.
"""

from __future__ import annotations

import logging
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

from eval.results import Headline, shown_path, write_results
from eval.time_answers import GoldTime, score
from eval.trial_trends import TREND_THRESHOLDS, ask_trend, counts_verdict
from models.dual_encoder import load_encoder
from retrieval.atomic import write_json
from retrieval.config import option, parse_config, write_config
from retrieval.data.conversation_log import load_log
from retrieval.data.jsonio import INPUT_ERRORS, DataError, iter_jsonl, run_cli
from retrieval.memory.follow_ups import FollowUps
from retrieval.memory.live import import_log
from retrieval.memory.relevance.choices import AUTO, RELEVANCE_HELP
from retrieval.memory.relevance.rerank import Reranker, second_stage
from retrieval.memory.temporal_memory import TemporalMemory
from retrieval.memory.when_answer import EVIDENCE_RULE
from retrieval.trends.topic_labels import check_counts_key

logger = logging.getLogger(__name__)

TRIAL_DIR = Path(__file__).resolve().parent / "trial"
ENGINES = ("file", "living")
VERDICTS = ("right", "partly", "wrong")
KEYS = ("date", "length", "turns", "none", "counts")
HAND_TUNED = "file, hand-tuned"  # with --relevance: the file-based memory without the model, in the same run
TURN_PRECISION = 0.25  # a turns answer is right when at least this share of its rows are key turns


@dataclass
class TrialArguments:
    """Ask a hand-written chat its questions and score the answers against their keys."""

    chat: str = option(str(TRIAL_DIR / "chat.jsonl"), "the chat, JSONL")
    questions: str = option(str(TRIAL_DIR / "questions.jsonl"), "the questions with their keys, JSONL")
    engines: list[str] = option(list(ENGINES), "file: the log read as ask --log reads it; living: imported into a "
                                "new living memory as ctbls memory import does", choices=ENGINES)
    encoder: str | None = option(None, "dual encoder (default: packaged MiniLM)")
    relevance: str = option(AUTO, "both memories (the packaged model was trained on the open data, never on a "
        "trial chat): " + RELEVANCE_HELP)
    trend_threshold: str = option("auto", "how the trend questions (counts keys) decide which turns are about "
        "their topic: the trend analysis's --threshold", choices=TREND_THRESHOLDS)
    output: str | None = option(None, "write every question's answer and verdict as JSON here")
    results: str | None = option(None, "a results file for README's table (results/NAME.json: eval.results)")


def read_questions(path: str | Path) -> list[dict]:
    out = []
    for lineno, q in iter_jsonl(path):
        key = q.get("key") or {}
        if not isinstance(q.get("question"), str) or key.get("expect") not in KEYS:
            raise DataError(f"{path}:{lineno}: a question needs 'question' and a 'key' whose 'expect' is one of "
                            f"{', '.join(KEYS)}")
        if key["expect"] == "turns" and not isinstance(key.get("turns"), list):
            raise DataError(f"{path}:{lineno}: a turns key needs 'turns', a list of the chat's turn ids")
        if key["expect"] == "counts":
            check_counts_key(key, f"{path}:{lineno}")
        out.append(q)
    if not out:
        raise DataError(f"{path}: no questions")
    return out


def turn_positions(utterances, questions: list[dict], where: str | Path) -> dict[str, int]:
    """The chat's turn ids -> their rows; a DataError naming the turns that ``questions``' keys name and the chat
    does not have (``where``: the questions' file)."""
    positions = {u.turn_id: i for i, u in enumerate(utterances)}
    named = {t for q in questions if q["key"]["expect"] in ("turns", "counts") for t in q["key"]["turns"]}
    unknown = sorted(named - set(positions))
    if unknown:
        raise DataError(f"{where}: keys name turns the chat does not have: {unknown[:10]}")
    return positions


def day(text: str) -> date:
    return date.fromisoformat(text)


def verdict(key: dict, result, positions: dict[str, int]) -> tuple[str, dict]:
    """(right / partly / wrong, what was compared) for one answer against its key."""
    expect = key["expect"]
    if expect in ("date", "length"):
        a = result.answer
        start = a.start.date() if a is not None and a.start is not None else None
        end = a.end.date() if a is not None and a.end is not None else None
        if expect == "date":
            gold = GoldTime("date", "day", day(key["start"]), day(key["end"]) + timedelta(days=1))
        else:
            gold = GoldTime("duration", "duration", duration=(float(key["days"]), float(key["days"]), "day"))
        strict, lenient = score(gold, start, end, a.duration if a is not None else None)
        seen = {"answer": a.answer if a is not None else None, "start": str(start), "end": str(end),
                "duration": list(a.duration) if a is not None and a.duration else None}
        return ("right" if strict else "partly" if lenient else "wrong"), seen
    rows = result.ids
    if expect == "none":
        return ("right" if not rows else "wrong"), {"rows": len(rows)}
    wanted = {positions[t] for t in key["turns"]}
    seen = {"rows": rows[:20], "n_rows": len(rows), "key_rows": sorted(wanted), "found": sorted(wanted & set(rows))}
    return turns_verdict(wanted, rows), seen


def turns_verdict(wanted: set[int], rows: Sequence[int]) -> str:
    """A turns answer: right when ``rows`` hold every wanted turn and at least :data:`TURN_PRECISION` of them are
    wanted, partly when they hold some, else wrong."""
    hit = wanted & set(rows)
    if hit == wanted and len(hit) >= TURN_PRECISION * len(rows):
        return "right"
    return "partly" if hit else "wrong"


def open_engine(engine: str, chat: str, encoder, scratch: Path, second: Reranker | None = None,
                rule: str = EVIDENCE_RULE) -> TemporalMemory:
    if engine == "file":
        return TemporalMemory.from_file(chat, encoder=encoder, cache_dir=None, relevance=second, evidence_rule=rule)
    memory = TemporalMemory.open(scratch / "living", encoder=encoder, create=True, relevance=second,
                                 evidence_rule=rule)
    import_log(memory, load_log(chat), progress=False, where=Path(chat).name)
    return memory


def ask_after_history(memory: TemporalMemory, q: dict):
    """Ask ``q`` as a chat with the memory would (:mod:`retrieval.memory.follow_ups`): its history's questions
    first, each read after the ones before it, then ``q`` after them and what their answers named."""
    now = q.get("now")
    read_now = datetime.fromisoformat(now) if now else datetime.now(timezone.utc)  # for "does it refer back"
    follow_ups = FollowUps()
    for earlier in q.get("history") or []:
        follow_ups.record(earlier, memory.ask(earlier, history=follow_ups.before(earlier, read_now) or None, now=now))
    return memory.ask(q["question"], history=follow_ups.before(q["question"], read_now) or None, now=now)


def ask_all(memory: TemporalMemory, questions: list[dict], positions: dict[str, int],
            trend_threshold: str = "auto") -> list[dict]:
    out = []
    for q in questions:
        counts = q["key"]["expect"] == "counts"
        try:
            result = ask_trend(memory, q, trend_threshold) if counts else ask_after_history(memory, q)
        except ValueError as e:  # refused: said so
            out.append({"id": q.get("id"), "verdict": "wrong", "silent": False, "refused": str(e)})
            continue
        if counts:
            v, seen = counts_verdict(q["key"], result, positions, memory.table.frame)
        else:
            v, seen = verdict(q["key"], result, positions)
        warnings = result.warnings
        out.append({"id": q.get("id"), "question": q["question"], "expect": q["key"]["expect"], "verdict": v,
                    "silent": v == "wrong" and not warnings, "warned_right": v == "right" and bool(warnings),
                    "warnings": warnings, **seen})
    return out


def tally(answers: list[dict], questions: list[dict]) -> dict:
    kinds = {q.get("id"): q["key"]["expect"] for q in questions}
    by_kind: dict[str, Counter] = defaultdict(Counter)
    for a in answers:
        by_kind[kinds[a["id"]]][a["verdict"]] += 1
        by_kind["all"][a["verdict"]] += 1
        by_kind["all"]["silent wrong"] += a["silent"]
        by_kind["all"]["warned right"] += a.get("warned_right", False)
    n = len(answers)
    return {"n": n, "right_share": round(100 * by_kind["all"]["right"] / n, 1),
            **{k: dict(c) for k, c in by_kind.items()}}


def run(args: TrialArguments) -> dict:
    encoder = load_encoder(args.encoder)
    questions = read_questions(args.questions)
    utterances = load_log(args.chat)
    positions = turn_positions(utterances, questions, args.questions)
    second, rule = second_stage(args.relevance, EVIDENCE_RULE, encoder.identity)
    report = {"chat": args.chat, "relevance": args.relevance if second is not None else None,
              "questions": args.questions, "turns": len(utterances),
              "sessions": len({u.session for u in utterances}), "engines": {}}
    with tempfile.TemporaryDirectory(prefix="ctbls-trial-") as scratch:
        for engine in args.engines:
            memory = open_engine(engine, args.chat, encoder, Path(scratch), second, rule)
            answers = ask_all(memory, questions, positions, args.trend_threshold)
            memory.close()
            report["engines"][engine] = {"summary": tally(answers, questions), "answers": answers}
        if second is not None:  # the hand-tuned ranking beside it, in the same run
            memory = open_engine("file", args.chat, encoder, Path(scratch))
            answers = ask_all(memory, questions, positions, args.trend_threshold)
            memory.close()
            report["engines"][HAND_TUNED] = {"summary": tally(answers, questions), "answers": answers}
    return report


def print_report(report: dict) -> None:
    print(f"{report['chat']}: {report['turns']} turns in {report['sessions']} sessions; "
          f"{len(next(iter(report['engines'].values()))['answers'])} questions")
    for engine, r in report["engines"].items():
        s = r["summary"]
        parts = "; ".join(f"{k} " + ", ".join(f"{s[k].get(v, 0)} {v}" for v in VERDICTS) for k in KEYS if k in s)
        print(f"  {engine:<7} right {s['all'].get('right', 0)}/{s['n']} ({s['right_share']}%), partly "
              f"{s['all'].get('partly', 0)}, wrong {s['all'].get('wrong', 0)} (of which without saying so "
              f"{s['all'].get('silent wrong', 0)}; right with a warning {s['all'].get('warned right', 0)})  "
              f"[{parts}]")
        for a in r["answers"]:
            if a.get("expect") == "counts":
                print(f"    {a['id']} trend of {a['topic']!r} by {a['period_read']}: {a['verdict']}, periods within "
                      f"15 % {a['periods_within']}%, counted {a['counted']} for {a['key_turns']} "
                      f"({a['counted_not_key']} not about it), recall {a['recall']}")


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_config(TrialArguments, argv, prog="python -m eval.user_trial", description=__doc__)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    try:
        report = run(args)
    except INPUT_ERRORS as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print_report(report)
    if args.output:
        write_json(args.output, report, indent=2, default=str)
        write_config(args)
    write_results(args.results, "python -m eval.user_trial", argv, args, lambda: headline(report),
                  [args.chat, args.questions])
    return 0


def headline(report: dict) -> list[Headline]:
    """README's rows: the share answered right, and the wrong answers that carried no warning, of the living memory
    (the file-based memory beside it)."""
    engines = report["engines"]
    ours = engines.get("living") or next(iter(engines.values()))
    names = {"file": "file-based memory", HAND_TUNED: "hand-tuned ranking (no relevance model)"}
    others = {names.get(e, e): r["summary"] for e, r in engines.items() if r is not ours}
    task = f"User trial: {shown_path(Path(report['chat']).parent)} ({ours['summary']['n']} questions)"
    if report.get("relevance"):
        task += ", relevance model"
    goal = "our goal: 90 % right, none silent wrong"
    counts = (("silent wrong", "wrong without saying so"), ("warned right", "right, with a warning"))
    return [Headline(task, "right (%)", ours["summary"]["right_share"],
                     {e: s["right_share"] for e, s in others.items()}, goal, 1, 1),
            *[Headline(task, label, ours["summary"]["all"].get(m, 0),
                       {e: s["all"].get(m, 0) for e, s in others.items()}, goal, 1, 0) for m, label in counts]]


if __name__ == "__main__":
    sys.exit(run_cli(main))
