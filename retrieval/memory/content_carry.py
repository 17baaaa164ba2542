"""What a follow-up's pronoun carries from the question before it: the participant "she" or "he" stands for, and
the topic "it" or "that" stands for, so that a follow-up is ranked by what it is about, not by its few own words.

    "When did Jess get back from Mexico City?", then "and when did she fly out?"
        -> "she" is Jess: her rows first (the ranking's speaker prior)
    "When was Priya's mom's knee surgery?", then "and when was it supposed to be originally?"
        -> "it" is the surgery: "mom knee surgery" join the ranking's query

This is the rule form of historical query expansion (keywords of earlier turns added to the query of a turn that
leans on them): only the latest earlier question counts, only a pronoun that refers back carries anything, and
"they" and "them" carry nothing (in a chat about two people they are as often the two of them). The earlier
question's time is the time carry's affair (:func:`~retrieval.memory.query_rewrite.carry_time_reference`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from retrieval.data.types import ContextTurn
from retrieval.memory.query_rewrite import turn_text
from retrieval.memory.question_parts import QuestionReading, blank_spans, question_sentence
from retrieval.memory.time_resolver import TimeExpression, TimeResolver, normalise

PERSON = re.compile(r"\b(?:he|she|him|her|his|hers)\b")
THING = re.compile(r"\b(?:it|its|that|this)\b")


def pronouns(question: str, now: datetime, found: Sequence[TimeExpression] | None = None) -> tuple[bool, bool]:
    """(refers to a person, refers to a thing) by a pronoun in the asking sentence of ``question``, outside its time
    phrases (``found``, when already read: "that" of "the session before that" and "this" of "this week" are the time
    carry's)."""
    norm = normalise(question)
    start, end = question_sentence(norm)
    found = TimeResolver(now).resolve(question) if found is None else found
    sentence = blank_spans(norm, [e.span for e in found], start, end)
    return bool(PERSON.search(sentence)), bool(THING.search(sentence))


def refers_back_by_pronoun(question: str, now: datetime, found: Sequence[TimeExpression] | None = None) -> bool:
    """Whether ``question`` leans on an earlier one by a pronoun ("when did she fly out?", "which vet is it with?")."""
    return any(pronouns(question, now, found))


def earlier_question(history: Sequence[ContextTurn]) -> str | None:
    """The latest earlier turn that is a question (what answers named, "on 21 March 2025", are not)."""
    return next((turn_text(t) for t in reversed(history) if turn_text(t).rstrip().endswith("?")), None)


_BARE_THING = re.compile(r"^\W*(?:it|that|this)\W*$", re.I)


def pronoun_event(part: str, history: Sequence[ContextTurn] | None) -> str:
    """One event of a follow-up that names it by a pronoun alone ("how many days after that did he start?": "that")
    is what the earlier question asked about: that question, asked again as a when-question is; any other ``part``
    as it is (its pronouns carried as any question's)."""
    if history and _BARE_THING.match(part):
        return earlier_question(history) or part
    return part


@dataclass
class ContentCarry:
    """What a follow-up takes from ``source``: the participant ``who`` its person pronoun stands for, the topic
    ``words`` its thing pronoun stands for, and why (``notes``)."""

    source: str
    who: str | None = None
    words: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def apply(self, reading: QuestionReading) -> None:
        """``reading`` with what was carried: the participant as its ranking's prior, the words in its topic."""
        if self.who is not None:
            reading.who, reading.who_role = self.who, "prior"
        if self.words:
            base = reading.topic if reading.topic is not None else reading.rest
            reading.topic = f"{base.rstrip(' ?.!')} {' '.join(self.words)}?".strip()
            reading.left = [*reading.left, *self.words]
            reading.what, reading.topic_from = "topic", reading.topic_from or "carried"


def carry_content(history: Sequence[ContextTurn], question: str, reading: QuestionReading, now: datetime,
                  read: Callable[[str], QuestionReading], speakers: Sequence[str] = (),
                  found: Sequence[TimeExpression] | None = None) -> ContentCarry | None:
    """What ``question`` (read as ``reading``, its time expressions ``found`` when already read) carries from the
    latest earlier question of ``history``, read by ``read`` as any question is
    (:meth:`~retrieval.memory.question.AskedQuestion.read`): see the module. None when it has no pronoun that
    refers back, or the earlier question names nothing to carry."""
    person, thing = pronouns(question, now, found)
    source = earlier_question(history) if person or thing else None
    if source is None:
        return None
    earlier = read(source)
    carry = ContentCarry(source)
    if person and reading.who is None and earlier.who is not None:
        carry.who = earlier.who
        carry.notes.append(f"read the person pronoun as {earlier.who} (named in {source!r})")
    if thing and earlier.left:
        have = {w.lower() for w in reading.left}
        carry.words = [w for w in earlier.left if w.lower() not in have]
        if carry.words:
            carry.notes.append(f"read 'it' / 'that' as {' '.join(carry.words)!r} (from {source!r})")
    return carry if carry.who is not None or carry.words else None
