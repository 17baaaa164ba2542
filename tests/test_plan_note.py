"""A when-answer read from a plan ("the dentist is on the 14th") about a day now past says so first: plans move;
a report of what happened, or a plan still to come, says nothing of the kind."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from conftest import chat_memory

from retrieval.memory.answer_notes import NO_ANSWER_NOTE, PLAN_NOTE

CHAT = [("2025-04-02T18:00:00+00:00", "Ann", "The dentist is on the 14th, I finally booked it."),
        ("2025-04-02T18:01:00+00:00", "Bob", "Good luck. I went bowling yesterday with Carl."),
        ("2025-04-03T18:00:00+00:00", "Ann", "Rainy week, nothing much happened.")]


@pytest.fixture
def memory(tmp_path, tiny_backbone):
    return chat_memory(tmp_path, tiny_backbone, CHAT)


def plan_notes(result) -> list[str]:
    return [w for w in result.warnings if w.startswith(PLAN_NOTE)]


def test_a_past_day_read_from_a_plan_says_so_first(memory):
    result = memory.ask("When was Ann's dentist appointment?", now=datetime(2025, 4, 20, tzinfo=timezone.utc))
    assert result.answer.answer == "14 April 2025" and result.answer.said.date().isoformat() == "2025-04-02"
    (note,) = plan_notes(result)
    assert "planned on 02 April 2025" in note and result.plan.notes[0] == note


def test_a_plan_still_to_come_or_a_report_says_nothing(memory):
    ahead = memory.ask("When is Ann's dentist appointment?", now=datetime(2025, 4, 10, tzinfo=timezone.utc))
    assert ahead.answer.answer == "14 April 2025" and not plan_notes(ahead)
    report = memory.ask("When did Bob go bowling?", now=datetime(2025, 4, 20, tzinfo=timezone.utc))
    assert report.answer.answer == "1 April 2025" and not plan_notes(report)


def test_a_question_that_asks_when_and_gets_no_answer_says_why_first(memory):
    result = memory.ask("How long did Ann have the rain?", now=datetime(2025, 4, 20, tzinfo=timezone.utc))
    assert result.answer is not None and result.answer.answer is None
    assert result.warnings and result.warnings[0].startswith(NO_ANSWER_NOTE)
    assert "how_long" in result.warnings[0] and "no time of its own" in result.warnings[0]
    answered = memory.ask("When was Ann's dentist appointment?", now=datetime(2025, 4, 20, tzinfo=timezone.utc))
    assert not any(w.startswith(NO_ANSWER_NOTE) for w in answered.warnings)
