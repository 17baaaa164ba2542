"""retrieval.memory.follow_ups: a follow-up is read after the earlier questions and what their answers named."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from conftest import chat_memory

from retrieval.memory.follow_ups import FollowUps, named_by

NOW = datetime(2024, 4, 1, 12, tzinfo=timezone.utc)
CHAT = [("2024-03-04T18:00:00+00:00", "Ann", "My sister's wedding is in June, we booked the venue."),
        ("2024-03-04T18:01:00+00:00", "Bob", "Great. I also fixed the bike's brakes today."),
        ("2024-03-11T18:00:00+00:00", "Ann", "Pottery class was fun, I made a bowl."),
        ("2024-03-11T18:01:00+00:00", "Bob", "The new dishwasher arrived as well."),
        ("2024-03-18T18:00:00+00:00", "Ann", "Rainy week, nothing much happened."),
        ("2024-03-18T18:01:00+00:00", "Bob", "Same here, work was busy.")]


@pytest.fixture
def memory(tmp_path, tiny_backbone):
    return chat_memory(tmp_path, tiny_backbone, CHAT)


def test_that_conversation_is_the_day_the_previous_answer_showed_first(memory):
    follow_ups = FollowUps()
    first = memory.ask("What did Ann say about the pottery bowl?", now=NOW)
    follow_ups.record("What did Ann say about the pottery bowl?", first)
    shown = first.rows.iloc[0]["date"]
    assert follow_ups.turns[-1] == f"in the conversation on {shown}" == named_by(first)
    question = "What else came up in that conversation?"
    history = follow_ups.before(question, NOW)
    assert history == follow_ups.turns
    result = memory.ask(question, history=history, now=NOW)
    assert set(result.rows["date"]) == {shown} and not result.warnings


def test_a_question_without_a_reference_back_stands_alone(memory):
    follow_ups = FollowUps()
    follow_ups.record("What did we discuss on March 4th?", memory.ask("What did we discuss on March 4th?", now=NOW))
    assert follow_ups.before("What did Bob say about the dishwasher?", NOW) == []
    assert follow_ups.before("And the session after that?", NOW) != []


def test_only_the_last_turns_are_kept(memory):
    follow_ups = FollowUps(keep=2)
    for question in ("What did we discuss on March 4th?", "When did the dishwasher arrive?", "What about the bike?"):
        follow_ups.record(question, memory.ask(question, now=NOW))
    assert len(follow_ups.turns) == 2 and follow_ups.turns[0] == "What about the bike?"


def test_a_pronoun_carries_what_the_earlier_question_named_not_its_answers_dates(memory):
    follow_ups = FollowUps()
    first = "When did Bob fix the bike's brakes?"
    follow_ups.record(first, memory.ask(first, now=NOW))
    assert follow_ups.named and follow_ups.named[0].startswith("on ")
    question = "and what did he say about it?"
    history = follow_ups.before(question, NOW)
    assert history == [first]  # the question, not the date its answer named
    result = memory.ask(question, history=history, now=NOW)
    reading = result.plan.reading
    assert reading["who"] == "Bob" and reading["who_role"] == "prior"
    assert {"bike", "brakes"} <= set(reading["left"]) and "bike" in reading["topic"]
    assert result.rewrite is not None and any("'it'" in n for n in result.rewrite.notes)
    assert len(result.rows) == len(memory.table)  # no period carried: the whole log, ranked
