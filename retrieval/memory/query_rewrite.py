"""Rewriting an ambiguous last turn ("Can you summarize what we discussed?") into a standalone question.

Three handlings, as compared in Alonso et al. (2024): the original query alone; the context (earlier turns)
joined to the query; and a rewritten query. Two rewriters: :func:`carry_time_reference` carries the time
expressions of the latest earlier turn that has any into the query (no LLM): as expressions, which the planner
uses as they are (:class:`~retrieval.memory.question.AskedQuestion`), and as text, which is only shown;
:class:`LLMRewriter` asks an LLM and falls back to the rule rewrite when the LLM fails or drops the time
reference.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from retrieval.data.types import ContextTurn
from retrieval.llm.base import LLMBackend
from retrieval.memory.question_parts import question_sentence
from retrieval.memory.time_resolver import TimeExpression, TimeResolver, compose, normalise
from retrieval.timex import values as V
from retrieval.timex.lexicon import PARTS_OF_DAY
from retrieval.timex.rules.clock import part
from retrieval.timex.rules.parts import intersect

logger = logging.getLogger(__name__)


@dataclass
class Rewrite:
    """The query as rewritten (``text``, shown), how (``method``), and, for a carry, the earlier turn's expressions
    it takes (``carried``) and the references back they stand in for (``replaced``)."""

    text: str
    method: str
    notes: list[str] = field(default_factory=list)
    carried: list[TimeExpression] = field(default_factory=list)
    replaced: list[TimeExpression] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"text": self.text, "method": self.method, "notes": self.notes,
                **({"carried": [e.text for e in self.carried]} if self.carried else {})}


def turn_text(turn: ContextTurn) -> str:
    """A history turn's text: a plain string, or a ``{"speaker", "text"}`` dict."""
    return turn["text"] if isinstance(turn, dict) else str(turn)


def context_query(history: Sequence[ContextTurn], query: str) -> str:
    """The earlier turns and the query joined into one text (the paper's "context + query")."""
    return " ".join([*(turn_text(t) for t in history), query])


def _one_day(found: Sequence[TimeExpression]) -> bool:
    intervals = found[0].intervals if len(found) == 1 else None
    return intervals is not None and len(intervals) == 1 and (intervals[0][1] - intervals[0][0]).days <= 1


BEFORE_THAT = re.compile(r"\bbefore\s+that\b")


def before_that(e: TimeExpression) -> bool:
    """"The session before that", "the one before that": read alone as the second-to-last session (as Zyphra's
    questions use it), after an earlier turn that names a time as the session before the one it named."""
    return e.kind == "relative_session" and bool(BEFORE_THAT.search(e.text))


def reference_kind(e: TimeExpression) -> str | None:
    """How ``e`` refers back to an earlier turn's time: its anaphor ("then", "week", "after", ...), "before" for
    :func:`before_that`, or None."""
    return e.anaphor or ("before" if before_that(e) else None)


def _referent(anaphor: str | None, found: Sequence[TimeExpression]) -> str:
    """What a reference back means, in words (shown in the rewritten text): "that week" of a day is the week of that
    day, "that morning" its morning, "the session after that" the session after the one then; the rest (then,
    that day, that time) is the expression itself."""
    carried = ", ".join(e.text for e in found)
    bare = re.sub(r"^(?:on|in|during|over|at|from)\s+", "", found[0].text)
    if anaphor in ("after", "before"):
        return (f"the session {anaphor} the 1 {carried}" if found[0].intervals else
                f"the session {anaphor} {carried}")
    if anaphor == "week" and _one_day(found):
        return f"the week of {bare}"
    if anaphor in PARTS_OF_DAY and _one_day(found):
        return f"the {anaphor} of {bare}"
    return carried


def _referent_expressions(e: TimeExpression, found: list[TimeExpression], now: datetime) -> list[TimeExpression]:
    """What a reference back means, as expressions: the session after the one then, the week or the morning of that
    day (composed from the earlier expression's value and placed anew), else the earlier expressions."""
    kind = reference_kind(e)
    text = _referent(kind, found)
    if kind in ("after", "before"):
        shift = (1, 1) if kind == "after" else (-1, -1)
        return [TimeExpression(text, e.span, "session_shift", session_shift=shift, anchor=found[0])]
    value = found[0].value
    if _one_day(found) and isinstance(value, V.Time) and e.anaphor == "week":
        return [compose(V.Part(base=value, part="week", kind="week"), now, text, e.span)]
    if _one_day(found) and isinstance(value, V.Time) and e.anaphor in PARTS_OF_DAY:
        composed = intersect(part(e.anaphor), value)
        if composed is not None:
            return [compose(composed, now, text, e.span)]
    return list(found)


def refers_back(query: str, now: datetime, found: Sequence[TimeExpression] | None = None) -> bool:
    """Whether ``query`` (its time expressions ``found``, when already read) holds a reference back to an earlier
    turn's time ("then", "that day", "the session before that"): a chat reads such a question after the earlier
    ones, and a question without one on its own."""
    return any(reference_kind(e) for e in (TimeResolver(now).resolve(query) if found is None else found))


def carry_time_reference(history: Sequence[ContextTurn], query: str, now: datetime,
                         own: Sequence[TimeExpression] | None = None, beside: bool = True) -> Rewrite:
    """The time expressions of the latest earlier turn that has any, for a query with none of its own: in place of
    its references back ("then", "that week", "the session after that"), else beside it (unless not ``beside``: a
    question that asks when takes no time it did not refer to). ``own``: the query's expressions when already read.
    The rewrite's ``carried`` are the expressions; its text shows them."""
    resolver = TimeResolver(now)
    own = resolver.resolve(query) if own is None else own
    if any(not e.unresolved and not before_that(e) for e in own):
        return Rewrite(query, "unchanged", ["the query has its own time reference"])
    for turn in reversed(history):
        found = [e for e in resolver.resolve(turn_text(turn)) if not e.unresolved]
        if not found:
            continue
        norm = normalise(query)
        start, end = question_sentence(norm)
        anaphora = [e for e in own if reference_kind(e) and start <= e.span[0] < end]
        if anaphora:
            text, notes, carried = norm[start:end], [], []
            for e in sorted(anaphora, key=lambda x: -x.span[0]):
                meant = _referent(reference_kind(e), found)
                text = text[:e.span[0] - start] + meant + text[e.span[1] - start:]
                notes.append(f"read {e.text!r} as {meant!r} from an earlier turn")
                carried += _referent_expressions(e, found, now)
            return Rewrite(text.strip(), "carry", notes[::-1], carried, anaphora)
        if not beside:
            return Rewrite(query, "unchanged", ["a question that asks when takes no earlier time it does not refer "
                                                "to"])
        asked = norm[start:end].strip().rstrip("?.! ")
        phrases = ", ".join(e.text for e in found)
        # a comma keeps the carried phrase from fusing with the query's last words ("conversations, 3 days ago")
        return Rewrite(f"{asked}, {phrases}?", "carry", [f"carried {phrases!r} from an earlier turn"], found)
    return Rewrite(query, "unchanged", ["no earlier turn has a time reference"])


REWRITE_PROMPT = """Rewrite the user's last message as one standalone question. Keep every date, day, month or \
session that the earlier messages refer to. Answer with the question only.

Conversation:
{dialogue}
Last message: {query}
Standalone question:"""


class LLMRewriter:
    """An LLM rewrite of the last turn; the rule rewrite when the call fails or loses the time reference."""

    def __init__(self, backend: LLMBackend, max_new_tokens: int = 48):
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
