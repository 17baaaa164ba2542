"""Time expressions relative to an anchor that is itself an expression, and references back to an earlier turn.

Combinators (:data:`COMBINATORS`): a prefix pattern, then whatever expression the rules read right after it is the
anchor ("the session right before | the one on May 8", "two days after we met | on the 3rd", "the conversation
after | our third session"):
- sessions before / after an anchor: the sessions at positions (-n .. -1) or (1 .. n) relative to the anchor's
  sessions, counted in the table (:class:`~retrieval.memory.table_ops` op ``shift``);
- days or weeks before / after an anchor with calendar intervals: the anchor's first (before) or last (after) day
  moved by that many days.
Anaphora (:func:`anaphor`): "then", "that day", "that week", "that morning", "the session after that", "the next
session" name no time of their own; they are marked, and the rule rewrite
(:func:`~retrieval.memory.query_rewrite.carry_time_reference`) replaces them with the earlier turn's expression.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta

from retrieval.memory.time_calendar import Calendar
from retrieval.memory.time_patterns import SESS
from retrieval.memory.time_rules import TimeExpression, expr, rule

Combinator = Callable[[Calendar, re.Match, TimeExpression], TimeExpression | None]
_MET = r"we\s+(?:\w+\s+)?(?:talked|spoke|met|chatted|had\s+a\s+\w+)"
# what may stand between "before" / "after" and the anchor: "the one", "our chat", "we talked"
_FILLER = rf"(?:(?:the\s+1|the\s+ones|ours|our\s+{SESS}|the\s+{SESS}|{_MET})\s+)?"
_BEFORE_AFTER = r"(?P<dir>before|after|following|preceding|prior\s+to|leading\s+up\s+to)"


def session_shift(cal: Calendar, m: re.Match, anchor: TimeExpression) -> TimeExpression:
    n = int(m.group("n") or 1)
    before = m.group("dir") in ("before", "preceding", "prior to") or m.group("dir").startswith("leading")
    return expr("session_shift", anchor=anchor, session_shift=(-n, -1) if before else (1, n))


def day_shift(cal: Calendar, m: re.Match, anchor: TimeExpression) -> TimeExpression:
    if not anchor.intervals:
        return expr("day_shift", unresolved=f"{m.group(0).strip()!r} needs an anchor with dates; "
                                            f"{anchor.text!r} names sessions")
    n = 1 if m.group("n") in ("a", "the", None) else int(m.group("n"))
    n *= 7 if m.group("unit").startswith("week") else 1
    if m.group("dir") in ("before", "preceding", "prior to"):
        d = anchor.intervals[0][0].date() - timedelta(days=n)
    else:
        d = (anchor.intervals[-1][1] - timedelta(seconds=1)).date() + timedelta(days=n)
    return expr("day_shift", anchor=anchor, intervals=cal.days(d, d), nearby_intervals=cal.nearby(d))


COMBINATORS: list[tuple[re.Pattern[str], Combinator]] = [
    (re.compile(rf"\b(?:(?:in|over|during|from)\s+)?(?:the|our)\s+(?:(?P<n>\d+)\s+)?{SESS}\s+"
                r"(?:(?:that|which)\s+(?:came|happened|took\s+place)\s+)?(?:right\s+|just\s+|immediately\s+|"
                rf"directly\s+)?{_BEFORE_AFTER}\s+{_FILLER}"), session_shift),
    (re.compile(rf"\b(?P<n>\d+|a|the)\s+(?P<unit>days?|weeks?)\s+{_BEFORE_AFTER}\s+{_FILLER}"), day_shift),
]


@rule(rf"\b(?:the\s+)?(?:{SESS}|1)\s+(?P<after>after)\s+that(?:\s+1)?\b", rf"\bthe\s+(?P<next>next)\s+{SESS}\b",
      r"\b(?:that|the\s+same)\s+(?P<unit>day|week|month|morning|afternoon|evening|night|time|session|conversation|"
      r"chat|discussion|period)\b", r"\b(?P<then>then)\b")
def anaphor(cal: Calendar, m: re.Match) -> TimeExpression:
    """A reference back to a time named in an earlier turn: unresolved on its own, replaced by the rewrite."""
    groups = m.groupdict()
    kind = "after" if groups.get("after") or groups.get("next") else groups.get("unit") or "then"
    return expr("anaphor", anaphor=kind, unresolved=f"{m.group(0).strip()!r} refers to a time named in an earlier "
                                                      "turn, and no earlier turn names one")
