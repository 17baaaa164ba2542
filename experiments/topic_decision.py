"""Does a question name a topic? The rule planner's decision (:func:`retrieval.memory.question_parts.read_question`)
measured against what each set of questions is known to ask:

    python -m experiments.topic_decision --output runs/topic_decision.json

- Zyphra's time questions and the last turns of its ambiguous ones: no topic (every row of a period);
- Zyphra's time+content questions and LoCoMo's questions (every category): a topic;
- the phrasing bank (:mod:`experiments.temporal_bank`), development and held-out logs apart: no topic.
Beside it, the decision before the request grammar: content words left after the English stop words and the
conversation words of ``DISCOURSE_WORDS`` alone. Only counts are printed for Zyphra and LoCoMo (no misses are
shown, so that no rule is written from them); the bank's misses are listed for the development logs.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from experiments.temporal_bank import DEV_LOGS
from retrieval.atomic import write_json
from retrieval.config import option, parse_config
from retrieval.data.conversation_log import read_locomo_conversation, read_locomo_samples, read_zyphra_log
from retrieval.data.jsonio import INPUT_ERRORS
from retrieval.data.paths import LOCOMO_FILE, ZYPHRA_DIR
from retrieval.data.zyphra_temporal import log_paths, read_questions
from retrieval.memory.question_parts import (
    DISCOURSE_WORDS,
    blank_spans,
    question_content,
    question_sentence,
    read_question,
)
from retrieval.memory.time_resolver import TimeResolver, normalise
from retrieval.search.english import ENGLISH_STOP_WORDS, english_stemmer


@dataclass
class TopicDecisionConfig:
    """Accuracy of the planner's "does this question name a topic" on questions whose answer is known."""

    zyphra_dir: str = option(str(ZYPHRA_DIR), "Zyphra's folder (ConversationData/, TestData/)", aliases=["--data-dir"])
    locomo: str = option(str(LOCOMO_FILE), "LoCoMo JSON (locomo_open.json)")
    bank_dir: str = option("eval/bank", "the phrasing bank (TestData/ in Zyphra's layout)")
    output: str | None = option(None, "write the results as JSON here")


def _old_stems() -> frozenset[str]:
    words = [w for w in ENGLISH_STOP_WORDS if "'" not in w] + DISCOURSE_WORDS
    return frozenset(english_stemmer().stemWords(words)) | frozenset(words)


def decide(question: str, resolver: TimeResolver, speakers: Sequence[str], old: frozenset[str]) -> tuple[bool, bool]:
    """(topic now, topic by the stop words and DISCOURSE_WORDS alone)."""
    norm = normalise(question)
    expressions = resolver.resolve(question)
    now = read_question(norm, expressions, speakers).what == "topic"
    start, end = question_sentence(norm)
    text = blank_spans(norm, [e.span for e in expressions], start, end)
    return now, bool(question_content(text, speakers, generic=old, stem=True)[1])


def evaluate(config: TopicDecisionConfig) -> dict:
    old = _old_stems()
    tally: dict[str, dict] = defaultdict(lambda: {"n": 0, "right": 0, "right_before": 0, "misses": []})

    def add(name: str, question: str, resolver, speakers, expect: bool) -> None:
        now, before = decide(question, resolver, speakers, old)
        row = tally[name]
        row["n"] += 1
        row["right"] += now == expect
        row["right_before"] += before == expect
        if now != expect and name.startswith("bank/dev") and len(row["misses"]) < 20:
            row["misses"].append(question)

    for source, base in (("zyphra", config.zyphra_dir), ("bank", config.bank_dir)):
        paths = log_paths(config.zyphra_dir)
        for log, path in paths.items():
            utterances = read_zyphra_log(path)
            resolver = TimeResolver(utterances[-1].timestamp)
            speakers = sorted({u.speaker for u in utterances})
            for q in read_questions(base, {log}):
                expect = q.kind == "time+content"
                name = (f"zyphra/{q.kind}" if source == "zyphra"
                        else f"bank/{'dev' if log in DEV_LOGS else 'held-out'}")
                add(name, q.question, resolver, speakers, expect)
    for sample in read_locomo_samples(config.locomo):
        utterances = read_locomo_conversation(sample["conversation"], where=sample.get("sample_id", "locomo"))
        resolver = TimeResolver(max(u.timestamp for u in utterances))
        speakers = [sample["conversation"]["speaker_a"], sample["conversation"]["speaker_b"]]
        for qa in sample["qa"]:
            add("locomo", str(qa["question"]), resolver, speakers, True)
    return {name: {"n": r["n"], "accuracy": round(100 * r["right"] / r["n"], 2),
                   "accuracy_before": round(100 * r["right_before"] / r["n"], 2), "misses": r["misses"]}
            for name, r in sorted(tally.items())}


def main(argv: Sequence[str] | None = None) -> int:
    config = parse_config(TopicDecisionConfig, argv, prog="python -m experiments.topic_decision", description=__doc__)
    try:
        report = evaluate(config)
    except INPUT_ERRORS as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"{'questions':<24}{'expected':>10}{'n':>7}{'accuracy':>10}{'before':>9}")
    for name, row in report.items():
        expected = "topic" if name in ("locomo", "zyphra/time+content") else "no topic"
        print(f"{name:<24}{expected:>10}{row['n']:>7}{row['accuracy']:>10.1f}{row['accuracy_before']:>9.1f}")
    for name, row in report.items():
        for q in row["misses"]:
            print(f"  miss ({name}): {q}")
    if config.output:
        write_json(config.output, report, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
