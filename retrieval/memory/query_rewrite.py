"""Rewriting an ambiguous last turn ("Can you summarize what we discussed?") into a standalone question.

Three handlings, as compared in Alonso et al. (2024): the original query alone; the context (earlier turns)
joined to the query; and a rewritten query. Two rewriters: :func:`carry_time_reference` copies the time
expression of the latest earlier turn that has one into the query (no LLM); :class:`LLMRewriter` asks an
LLM and falls back to the rule rewrite when the LLM fails or drops the time reference.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from retrieval.data.types import ContextTurn
from retrieval.memory.question_parts import question_sentence
from retrieval.memory.time_resolver import TimeExpression, TimeResolver, normalise
from retrieval.timex.lexicon import PARTS_OF_DAY

logger = logging.getLogger(__name__)


@dataclass
class Rewrite:
    text: str
    method: str
    notes: list[str] = field(default_factory=list)


def turn_text(turn: ContextTurn) -> str:
    """A history turn's text: a plain string, or a ``{"speaker", "text"}`` dict."""
    return turn["text"] if isinstance(turn, dict) else str(turn)


def context_query(history: Sequence[ContextTurn], query: str) -> str:
    """The earlier turns and the query joined into one text (the paper's "context + query")."""
    return " ".join([*(turn_text(t) for t in history), query])


def _referent(anaphor: str, found: Sequence[TimeExpression]) -> str:
    """What a reference back means, given the earlier turn's expressions: "that week" of a day is the week of that
    day, "that morning" its morning, "the session after that" the session after the one then; the rest (then,
    that day, that time) is the expression itself."""
    carried = ", ".join(e.text for e in found)
    one_day = len(found) == 1 and found[0].intervals and len(found[0].intervals) == 1 and (
        found[0].intervals[0][1] - found[0].intervals[0][0]).days <= 1
    bare = re.sub(r"^(?:on|in|during|over|at|from)\s+", "", found[0].text)
    if anaphor == "after":
        return f"the session after the 1 {carried}" if found[0].intervals else f"the session after {carried}"
    if anaphor == "week" and one_day:
        return f"the week of {bare}"
    if anaphor in PARTS_OF_DAY and one_day:
        return f"the {anaphor} of {bare}"
    return carried


def carry_time_reference(history: Sequence[ContextTurn], query: str, now: datetime) -> Rewrite:
    """The query with the time expressions of the latest earlier turn that has any, when it has none itself: in
    place of its references back ("then", "that week", "the session after that"), else added at its end."""
    resolver = TimeResolver(now)
    own = resolver.resolve(query)
    if any(not e.unresolved for e in own):
        return Rewrite(query, "unchanged", ["the query has its own time reference"])
    for turn in reversed(history):
        found = [e for e in resolver.resolve(turn_text(turn)) if not e.unresolved]
        if found:
            norm = normalise(query)
            start, end = question_sentence(norm)
            anaphora = [e for e in own if e.anaphor and start <= e.span[0] < end]
            if anaphora:
                text, notes = norm[start:end], []
                for e in sorted(anaphora, key=lambda x: -x.span[0]):
                    meant = _referent(e.anaphor, found)
                    text = text[:e.span[0] - start] + meant + text[e.span[1] - start:]
                    notes.append(f"read {e.text!r} as {meant!r} from an earlier turn")
                return Rewrite(text.strip(), "carry", notes[::-1])
            asked = norm[start:end].strip().rstrip("?.! ")
            carried = ", ".join(e.text for e in found)
            # a comma keeps the carried phrase from fusing with the query's last words ("conversations, 3 days ago")
            return Rewrite(f"{asked}, {carried}?", "carry", [f"carried {carried!r} from an earlier turn"])
    return Rewrite(query, "unchanged", ["no earlier turn has a time reference"])


REWRITE_PROMPT = """Rewrite the user's last message as one standalone question. Keep every date, day, month or \
session that the earlier messages refer to. Answer with the question only.

Conversation:
{dialogue}
Last message: {query}
Standalone question:"""


class LLMRewriter:
    """An LLM rewrite of the last turn; the rule rewrite when the call fails or loses the time reference."""

    def __init__(self, backend, max_new_tokens: int = 48):
        self.backend, self.max_new_tokens = backend, max_new_tokens

    def prompts(self, history: Sequence[ContextTurn], query: str) -> list[dict[str, str]]:
        lines = [f"{t.get('speaker', 'User')}: {t['text']}" if isinstance(t, dict) else f"User: {t}" for t in history]
        return [{"role": "user", "content": REWRITE_PROMPT.format(dialogue="\n".join(lines), query=query)}]

    def rewrite_many(self, items: Sequence[tuple[Sequence[ContextTurn], str]], now: datetime) -> list[Rewrite]:
        """Rewrite a batch of (history, query) pairs with one batched LLM call."""
        results = self.backend.generate([self.prompts(h, q) for h, q in items],
                                        max_new_tokens=self.max_new_tokens, temperature=0.0)
        out = []
        resolver = TimeResolver(now)
        for (history, query), result in zip(items, results):
            text = re.sub(r"\s+", " ", result.text).strip().strip('"') if result.ok else ""
            if not text:
                reason = f"LLM rewrite failed ({result.error or 'empty answer'})"
            elif not any(not e.unresolved for e in resolver.resolve(text)):
                reason = f"LLM rewrite {text!r} carries no time reference"
            else:
                out.append(Rewrite(text, "llm"))
                continue
            logger.info("%s; using the rule rewrite", reason)
            fallback = carry_time_reference(history, query, now)
            out.append(Rewrite(fallback.text, "llm->carry", [reason, *fallback.notes]))
        return out

    def rewrite(self, history: Sequence[ContextTurn], query: str, now: datetime) -> Rewrite:
        return self.rewrite_many([(history, query)], now)[0]
