"""A question read once: its normalised text, its time expressions (with their intervals and the readings chosen),
those carried from earlier turns, who / when / what it asks, and whether it asks when.

    q = AskedQuestion.read("Can you summarise what we discussed?", now, ["Ann", "Bob"],
                           history=["I see in my calendar we talked on May 8th."])
    q.expressions        # its own, with "on may 8th" carried from the earlier turn
    planner.plan(q)      # the planner, the when-answer and the rewrite all use this one reading

Earlier turns are read as expressions, not as text: a reference back ("then", "that week", "that morning", "the
session after that") takes the earlier turn's expression, composed where the reference asks for it (the week of
that day, the morning of that day, the session after the one then), and a question with no time of its own takes
the earlier turn's expressions as they are (:func:`~retrieval.memory.query_rewrite.carry_time_reference`). The
rewritten text is only shown (:attr:`AskedQuestion.text`); nothing is read from it again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from retrieval.data.types import ContextTurn
from retrieval.memory.content_carry import carry_content
from retrieval.memory.query_rewrite import Rewrite, carry_time_reference, context_query
from retrieval.memory.question_parts import QuestionReading, read_question
from retrieval.memory.time_resolver import TimeExpression, TimeResolver, normalise, question_lean
from retrieval.memory.when_answer import question_kind


@dataclass
class AskedQuestion:
    """One question as the memory reads it (see the module's docstring). ``own``: the question's time expressions
    (spans in ``normalised``); ``carried``: those taken from earlier turns; ``replaced``: the references back they
    stand in for."""

    asked: str
    normalised: str
    now: datetime
    own: list[TimeExpression]
    reading: QuestionReading
    kind: str | None
    carried: list[TimeExpression] = field(default_factory=list)
    replaced: list[TimeExpression] = field(default_factory=list)
    rewrite: Rewrite | None = None

    @property
    def text(self) -> str:
        """The question as planned: the rewrite's text when earlier turns shaped it, else as asked."""
        return self.rewrite.text if self.rewrite is not None and self.rewrite.method != "unchanged" else self.asked

    @property
    def expressions(self) -> list[TimeExpression]:
        """The expressions the plan uses: the question's own, less the references back that earlier turns'
        expressions stand in for, and those."""
        return [e for e in self.own if not any(e is r for r in self.replaced)] + self.carried

    @classmethod
    def read(cls, question: str, now: datetime, speakers: Sequence[str] = (),
             history: Sequence[ContextTurn] | None = None, rewrite: str = "carry") -> AskedQuestion:
        """Read ``question`` against ``now``; with ``history`` (earlier turns), ``rewrite`` says how they shape it:
        "carry" (their time expressions, :func:`~retrieval.memory.query_rewrite.carry_time_reference`), "context"
        (the turns joined to the question and read as one text) or "none"."""
        if history and rewrite == "context":
            return cls.read(context_query(history, question), now, speakers)._with(
                rewrite=Rewrite(context_query(history, question), "context"))
        resolver = TimeResolver(now, lean=question_lean(question))
        norm = normalise(question)
        own = resolver.resolve(question)
        # a time after now is what the question asks about ("the competition next month"), not when, and so is a
        # frequency ("every couple of months"): their words stay in the content the question names
        timed = [e for e in own if not ((e.unresolved or "").endswith("lies after now") or e.kind == "frequency")]
        q = cls(question, norm, now, own, read_question(norm, timed, speakers, question),
                question_kind(question))
        if history and rewrite == "carry":
            q.rewrite = carry_time_reference(history, question, now, own=own, beside=q.kind is None)
            q.carried, q.replaced = q.rewrite.carried, q.rewrite.replaced
            def read_earlier(text: str) -> QuestionReading:
                return cls.read(text, now, speakers).reading

            content = carry_content(history, question, q.reading, now, read_earlier, speakers, own)
            if content is not None:  # what its pronouns stand for (retrieval.memory.content_carry)
                content.apply(q.reading)
                kept = q.rewrite.notes if q.rewrite.method != "unchanged" else []
                q.rewrite = Rewrite(q.rewrite.text, "carry", [*kept, *content.notes], q.rewrite.carried,
                                    q.rewrite.replaced)
        return q

    def _with(self, **changes) -> AskedQuestion:
        for k, v in changes.items():
            setattr(self, k, v)
        return self
