"""A plan that a later row says moved ("got pushed to April 1st", "Friday instead of the 15th") is answered with its
new day, its derivation naming the row that moved it; a row about another plan, one said after now, or a question
that asks for the plan itself leaves the plan's day."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from conftest import chat_memory

from retrieval.memory.plan_change import moved_time

UTC = timezone.utc
CHAT = [("2025-03-11T18:00:00+00:00", "Ann", "Got the results. Mom's surgery is scheduled for the 26th."),
        ("2025-03-11T18:02:00+00:00", "Ann", "And the keys are ready on the 15th, the landlord said."),
        ("2025-03-11T18:03:00+00:00", "Bob", "The dentist is on the 20th for me."),
        ("2025-03-13T18:00:00+00:00", "Ann", "Good news: keys on Friday instead of the 15th!"),
        ("2025-03-20T18:00:00+00:00", "Ann", "The hospital called, mom's surgery got pushed to April 1st."),
        ("2025-03-21T18:00:00+00:00", "Bob", "My haircut got moved to the 29th."),
        ("2025-03-30T18:00:00+00:00", "Ann", "Mom's surgery was moved to the 3rd of April, again.")]


@pytest.fixture
def memory(tmp_path, tiny_backbone):
    return chat_memory(tmp_path, tiny_backbone, CHAT)


@pytest.mark.parametrize(("text", "phrase", "day"), [
    ("mom's surgery got pushed to April 1st, the surgeon is away", "april 1st", "2025-04-01"),
    ("they double booked saturday the 29th. they moved us to sunday the 30th", "sunday the 30th", "2025-03-30"),
    ("the keys are ready this friday instead of the 15th", "this friday", "2025-03-14"),
    ("we postponed the party until the 5th", "until the 5th", "2025-04-05"),
])
def test_a_row_that_moves_a_plan_names_its_new_day_ahead(text, phrase, day):
    new, _, _ = moved_time(text, datetime(2025, 3, 11, 18, tzinfo=UTC))
    assert (new.phrase, new.start.date().isoformat()) == (phrase, day)


@pytest.mark.parametrize("text", ["Mum moved to rehab today.", "I moved to Boston in 2019.",
                                  "The surgery is on the 26th."])
def test_moving_house_or_a_plain_plan_is_no_move(text):
    assert moved_time(text, datetime(2025, 3, 11, 18, tzinfo=UTC)) is None


def test_the_answer_follows_the_plan_to_its_last_day(memory):
    result = memory.ask("When was mom's surgery?", now=datetime(2025, 4, 20, tzinfo=UTC))
    assert result.answer.answer == "3 April 2025" and result.answer.said.date().isoformat() == "2025-03-30"
    moves = [line for line in result.answer.derivation if line.startswith("the plan moved")]
    assert len(moves) == 2 and "row 4" in moves[0] and "row 6" in moves[1]


def test_as_of_an_earlier_now_only_the_moves_said_by_then_count(memory):
    result = memory.ask("When is mom's surgery?", now=datetime(2025, 3, 25, tzinfo=UTC))
    assert result.answer.answer == "1 April 2025"


def test_a_move_that_names_the_planned_day_links_without_shared_words(memory):
    result = memory.ask("When did Ann get the keys?", now=datetime(2025, 4, 20, tzinfo=UTC))
    assert result.answer.answer == "14 March 2025"


def test_another_plan_or_a_question_about_the_plan_itself_keeps_the_day(memory):
    dentist = memory.ask("When was Bob's dentist?", now=datetime(2025, 4, 20, tzinfo=UTC))
    assert dentist.answer.answer == "20 March 2025"
    original = memory.ask("When was mom's surgery originally supposed to be?", now=datetime(2025, 4, 20, tzinfo=UTC))
    assert original.answer.answer == "26 March 2025"
