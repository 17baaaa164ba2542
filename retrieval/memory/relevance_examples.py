"""What the relevance model learns from: the open data's questions with the rows that answer them, each turned into
the candidates the memory really ranks for it (asked through the memory, the first stage recorded) and their labels.

    by_conversation = examples(locomo="../shared/data/locomo/locomo_open.json",
                               zyphra_dir="../shared/data/zyphra_temporal", encoder=load_encoder())

- LoCoMo's QA with evidence turns, categories 1-4. Category 5 is left out: its questions name the other speaker on
  purpose (the adversarial answer), so its evidence would teach the model that the speaker a question names does not
  matter. A when-question is asked as the memory answers it (its evidence ranking,
  :meth:`~retrieval.memory.temporal_memory.TemporalMemory.when_evidence`); any other through ``ask``.
- Zyphra's time+content questions, asked of their log (its own table: per-response times and the podcast session).
A conversation is the unit of a fold: Zyphra's log 26 is LoCoMo's conv-26, so both carry the key "26".
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

from models.encoder import Encoder
from retrieval.data.conversation_log import read_zyphra_log
from retrieval.data.jsonio import DataError
from retrieval.data.locomo_qa import evidence_questions, read_samples, sample_id, sample_utterances
from retrieval.data.zyphra_temporal import log_paths, read_questions
from retrieval.memory.conversation_table import ConversationTable
from retrieval.memory.relevance.example import Example
from retrieval.memory.relevance.features import candidate_features
from retrieval.memory.relevance.rerank import RankRecorder
from retrieval.memory.temporal_memory import TemporalMemory
from retrieval.memory.when_answer import question_kind

logger = logging.getLogger(__name__)
LOCOMO_CATEGORIES = (1, 2, 3, 4)


def conversation_key(name: str) -> str:
    """"conv-26" and "26" both name conversation "26"."""
    found = re.findall(r"\d+", str(name))
    return found[-1] if found else str(name)


def asked_examples(memory: TemporalMemory, recorder: RankRecorder, conversation: str, source: str,
                   questions: Iterable[tuple[str, Iterable[int]]]) -> tuple[list[Example], int]:
    """The examples of ``questions`` (text, evidence ids) asked of ``memory`` (built with ``recorder`` as its second
    stage), and how many asked for no ranking (a plan without content: nothing to learn)."""
    out, skipped = [], 0
    for question, evidence in questions:
        recorder.calls.clear()
        if question_kind(question):
            memory.when_evidence(question)
        else:
            memory.ask(question)
        if not recorder.calls:
            skipped += 1
            continue
        call = recorder.calls[0]
        ids, x = candidate_features(call.table, call.query, call.fused, call.prefer, call.asks_when)
        out.append(Example(conversation, source, question, ids, x, frozenset(int(i) for i in evidence), call.k,
                           call.margin is not None, call.asks_when))
    return out, skipped


def locomo_examples(path: str | Path, encoder: Encoder, cache_dir: str | None = None,
                    only: Sequence[str] | None = None, categories: Sequence[int] = LOCOMO_CATEGORIES
                    ) -> dict[str, list[Example]]:
    """Every LoCoMo sample's examples (or only those of the ``only`` conversation keys), by conversation key."""
    out: dict[str, list[Example]] = defaultdict(list)
    for i, sample in enumerate(read_samples(path)):
        key = conversation_key(sample_id(sample, i))
        if only is not None and key not in only:
            continue
        utterances = sample_utterances(sample, str(path), i)
        recorder = RankRecorder()
        memory = TemporalMemory(ConversationTable.from_utterances(utterances, encoder, cache_dir, turns=True),
                                relevance=recorder)
        for category in categories:
            qs = [(q.question, q.evidence) for q in evidence_questions(sample, utterances, categories=(category,))]
            got, skipped = asked_examples(memory, recorder, key, f"locomo/{category}", qs)
            out[key] += got
            logger.info("LoCoMo %s category %d: %d questions (%d without a ranking)", key, category, len(got), skipped)
    return dict(out)


def zyphra_examples(zyphra_dir: str | Path, encoder: Encoder, cache_dir: str | None = None,
                    only: Sequence[str] | None = None) -> dict[str, list[Example]]:
    """Every Zyphra log's time+content examples (or only those of the ``only`` conversation keys)."""
    paths = log_paths(zyphra_dir)
    logs = [log for log in paths if only is None or conversation_key(log) in only]
    if not logs:  # none of the conversations asked for is a Zyphra log
        return {}
    questions = [q for q in read_questions(zyphra_dir, set(logs)) if q.kind == "time+content"]
    out: dict[str, list[Example]] = {}
    for log in logs:
        recorder = RankRecorder()
        table = ConversationTable.from_utterances(read_zyphra_log(paths[log]), encoder, cache_dir, turns=True)
        memory = TemporalMemory(table, relevance=recorder)
        qs = [(q.question, q.relevant) for q in questions if q.log == log]
        out[conversation_key(log)], skipped = asked_examples(memory, recorder, conversation_key(log),
                                                             "zyphra/time+content", qs)
        logger.info("Zyphra log %s: %d time+content questions (%d without a ranking)", log, len(qs), skipped)
    return out


def available_conversations(locomo: str | Path | None = None, zyphra_dir: str | Path | None = None) -> list[str]:
    """The conversation keys the sources hold (read without embedding anything)."""
    keys = {conversation_key(sample_id(s, i)) for i, s in enumerate(read_samples(locomo))} if locomo else set()
    keys |= {conversation_key(log) for log in log_paths(zyphra_dir)} if zyphra_dir else set()
    return sorted(keys)


def examples(encoder: Encoder, locomo: str | Path | None = None, zyphra_dir: str | Path | None = None,
             cache_dir: str | None = None, only: Sequence[str] | None = None) -> dict[str, list[Example]]:
    """Both sources' examples by conversation key (either source may be None)."""
    if locomo is None and zyphra_dir is None:
        raise DataError("the relevance model needs LoCoMo (--locomo) or Zyphra's folder (--zyphra-dir) to learn from")
    merged: dict[str, list[Example]] = defaultdict(list)
    for part in (locomo_examples(locomo, encoder, cache_dir, only) if locomo else {},
                 zyphra_examples(zyphra_dir, encoder, cache_dir, only) if zyphra_dir else {}):
        for key, got in part.items():
            merged[key] += got
    if not merged:
        raise DataError("no question to learn from in the data given"
                        + (f" (conversations {list(only)})" if only else ""))
    return dict(merged)
