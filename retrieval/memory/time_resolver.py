"""Time expressions in a question, resolved against an explicit "now" into intervals and session references.

Absolute dates ("May 8th", "February 21, 2023", "2023-05-08") go to dateparser. The relative language
that dateparser misses or reads as points ("last Tuesday", "over the past 3 days", "5 months ago",
"20 sessions ago", "earlier this morning", "in May") goes through a small deterministic rule layer
(:mod:`retrieval.memory.time_rules`, over the vocabulary of :mod:`retrieval.memory.time_patterns`).
Every calendar reference becomes a half-open interval ``[start, end)`` of whole days or months in
``now``'s time zone; session references become positions (1-based, negative from the end) or session
ids. Phrases that look temporal but match no rule are returned as unresolved, never guessed.

Conventions (chosen from how people use the phrases, and stated so a plan can be read):
- a date or month without a year is the latest one not after now;
- "last Friday" / "on Friday" is the latest Friday before today, or, when we did not talk that day,
  the latest Friday before today that we did talk;
- "over the last N days" is today and the N days before it; "the last/past week" is the last 7 days;
- "N days/months/years ago" is that calendar day/month/year; "last month" the previous calendar month;
  when no conversation fell on that calendar day, "N days ago" reads as elapsed time instead: between
  N and N + 1 whole days before now (someone who talked late on the 13th may call it "38 days ago" on
  the 22nd of the next month at 11:00);
- "N sessions ago" counts back from now: 1 session ago is the latest session;
- "earlier today/this morning" is today before the latest session (the one the user just had),
  and morning/afternoon/evening are soft hour ranges (dropped if they would leave nothing).
"""

from __future__ import annotations

from datetime import datetime

from retrieval.memory import time_compose, time_holidays  # noqa: F401  (they register their rules)
from retrieval.memory.time_anchors import COMBINATORS
from retrieval.memory.time_calendar import Calendar
from retrieval.memory.time_patterns import CUES, normalise
from retrieval.memory.time_rules import RULES, TimeExpression

__all__ = ["TimeExpression", "TimeResolver", "normalise"]


class TimeResolver:
    """Finds and resolves the time expressions of a text against ``now`` (tz-aware): first the combinators of
    :mod:`retrieval.memory.time_anchors` (an expression relative to an anchor expression), then the rules
    (:mod:`retrieval.memory.time_rules` and the modules that register with it), tried in order."""

    def __init__(self, now: datetime, rules: list | None = None):
        if now.tzinfo is None:
            raise ValueError("now must be time-zone aware; localise it with the log's time zone")
        self.now = now
        self.calendar = Calendar(now)
        self.rules = RULES if rules is None else rules  # an utterance's event time: retrieval.memory.event_time

    def _rules(self, norm: str, taken: list[bool]) -> list[TimeExpression]:
        found: list[TimeExpression] = []
        for pattern, handler in self.rules:
            for m in pattern.finditer(norm):
                s, e = m.span()
                if any(taken[s:e]) or s == e:
                    continue
                expr = handler(self.calendar, m)
                if expr is None:
                    continue
                expr.text, expr.span = norm[s:e].strip(), (s, e)
                found.append(expr)
                taken[s:e] = [True] * (e - s)
        return found

    def _anchored(self, norm: str, taken: list[bool]) -> list[TimeExpression]:
        """Combinator readings: a prefix, and the expression the rules read right after it as its anchor."""
        found = []
        for pattern, combine in COMBINATORS:
            for m in pattern.finditer(norm):
                if any(taken[m.start():m.end()]):
                    continue
                rest = norm[m.end():]
                at_start = [x for x in self._rules(rest, [False] * len(rest)) if x.span[0] == 0]
                anchor = max(at_start, key=lambda x: x.span[1], default=None)
                if anchor is None or anchor.unresolved:
                    continue
                expr = combine(self.calendar, m, anchor)
                if expr is None:
                    continue
                s, e = m.start(), m.end() + anchor.span[1]
                expr.text, expr.span = norm[s:e].strip(), (s, e)
                found.append(expr)
                taken[s:e] = [True] * (e - s)
        return found

    def resolve(self, text: str) -> list[TimeExpression]:
        """Every time expression in ``text``, in order; unresolvable temporal phrases have ``unresolved`` set."""
        norm = normalise(text)
        taken = [False] * len(norm)
        found = self._anchored(norm, taken)
        found += self._rules(norm, taken)
        for m in CUES.finditer(norm):
            if not any(taken[m.start():m.end()]):
                found.append(TimeExpression(m.group(0), m.span(), "unresolved",
                                            unresolved=f"no rule resolves the time word {m.group(0)!r}"))
        return sorted(found, key=lambda x: x.span)
