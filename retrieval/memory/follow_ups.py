"""What a conversation with the memory carries from one question to the next: the earlier questions and what their
answers named (the date of a when-answer, the day of the first row a ranking returned), so that "that conversation",
"then" or "the session before that" is read against the answer the person saw, not only against the words they
typed. A question with no reference back stands on its own.

    follow_ups = FollowUps()
    result = memory.ask(question, history=follow_ups.before(question, now), now=now)
    follow_ups.record(question, result)

The chat loop (:func:`retrieval.memory.live.chat`) and the user trial (:mod:`eval.user_trial`) carry questions the
same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from retrieval.memory.content_carry import refers_back_by_pronoun
from retrieval.memory.query_rewrite import refers_back
from retrieval.memory.time_resolver import TimeResolver

HISTORY_TURNS = 4  # earlier questions and what their answers named, that a question is read after


def named_by(result) -> str | None:
    """What an answer named, as a turn the time carry reads: "on <date>" of a when-answer, else "in the conversation
    on <day>" of the first row of a ranking (the row shown first); None when it named no time."""
    if result.answer is not None and result.answer.answer:
        return f"on {result.answer.answer}"
    if result.execution.scores and len(result.rows):
        return f"in the conversation on {result.rows.iloc[0]['date']}"
    return None


@dataclass
class FollowUps:
    """The earlier questions of one conversation with the memory and what their answers named (the last
    ``keep`` turns)."""

    turns: list[str] = field(default_factory=list)
    keep: int = HISTORY_TURNS
    named: list[str] = field(default_factory=list)  # the turns of ``turns`` that are what an answer named

    def before(self, question: str, now: datetime) -> list[str]:
        """The turns ``question`` is read after: all kept ones when it refers back to a time; the earlier questions
        alone when it refers back by a pronoun (:mod:`retrieval.memory.content_carry`: "which vet is it with?" is
        about the booster asked of, not the dates its answer named); none when it stands alone."""
        if not self.turns:
            return []
        found = TimeResolver(now).resolve(question)  # read once for both
        if refers_back(question, now, found):
            return list(self.turns)
        if refers_back_by_pronoun(question, now, found):  # what the questions named, not their answers' times
            return [t for t in self.turns if t not in self.named]
        return []

    def record(self, question: str, result) -> None:
        """Keep ``question`` and what its answer (a :class:`~retrieval.memory.temporal_result.TemporalResult`)
        named."""
        named = named_by(result)
        self.turns = (self.turns + [question] + ([named] if named else []))[-self.keep:]
        self.named = [t for t in [*self.named, *([named] if named else [])] if t in self.turns]
