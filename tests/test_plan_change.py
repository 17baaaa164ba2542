"""A plan that a later row says moved ("got pushed to April 1st", "Friday instead of the 15th") is answered with its
new day, its derivation naming the row that moved it; a row about another plan, one said after now, or a question
that asks for the plan itself leaves the plan's day."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from conftest import chat_memory

from retrieval.memory.event_time import event_time_of
from retrieval.memory.plan_change import moved_plan, moved_time
from retrieval.memory.when_answer import REPORT_SOURCE, answer_from_evidence
from retrieval.memory.when_support import PROBABILITY

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


REPORTS = [("2025-03-20T09:00:00+00:00", "Ben", "Noodle's getting her teeth done on the 27th."),
           ("2025-03-21T09:00:00+00:00", "Ben", "The plumber comes Thursday the 27th."),
           ("2025-03-21T09:05:00+00:00", "Ann", "The nbn guy is coming on the 25th."),
           ("2025-03-21T09:10:00+00:00", "Ann", "Back from Lisbon on the 27th."),
           ("2025-03-29T09:00:00+00:00", "Ben", "Noodle had her teeth out on Friday, poor thing."),
           ("2025-03-29T09:05:00+00:00", "Ann", "Landed last night, so tired."),
           ("2025-03-29T09:10:00+00:00", "Ann", "The nbn guy never showed tuesday. Rebooked for monday."),
           ("2025-04-02T08:00:00+00:00", "Ann", "The nbn guy turned up yesterday, a day late. Finally internet."),
           ("2025-04-02T09:00:00+00:00", "Ben", "The plumber came on Thursday as planned.")]


@pytest.fixture
def reported(tmp_path, tiny_backbone):
    return chat_memory(tmp_path, tiny_backbone, REPORTS)


def plan_after(memory, row: int, question: str, now: datetime):
    """Where the plan of ``row`` ended up by ``now``: (the row that said so, its day, the derivation, whether that
    row reports the event), or None."""
    frame = memory.table.frame
    found = moved_plan(frame.loc[row], event_time_of(frame.loc[row]), frame, question, now)
    return None if found is None else (found[0].name, found[1].start.date().isoformat(), found[2], found[3])


def test_a_later_report_of_the_event_overtakes_the_plan(reported):
    now = datetime(2025, 4, 20, tzinfo=UTC)
    row, day, how, report = plan_after(reported, 0, "When did Noodle finally get her teeth out?", now)
    assert (row, day, report) == (4, "2025-03-28", True)  # "on Friday", said on the 29th: not the planned 27th
    assert how[-1].startswith("a later report: row 4") and "['noodl', 'teeth']" in how[-1]
    teeth = reported.ask("When did Noodle get her teeth out?", now=now).answer
    assert teeth.answer == "28 March 2025"
    # "rebooked for monday" moves the plan (it names the planned day it replaces), then a report ends it
    row, day, how, report = plan_after(reported, 2, "When did the nbn guy finally come?", now)
    assert (row, day, report) == (7, "2025-04-01", True) and how[0].startswith("the plan moved: row 6")
    assert how[1].startswith("a later report: row 7")


def test_a_report_of_the_planned_day_or_with_no_word_of_the_question_keeps_the_plan(reported):
    now = datetime(2025, 4, 20, tzinfo=UTC)
    assert plan_after(reported, 1, "When did the plumber come?", now) is None  # "came on Thursday as planned"
    assert plan_after(reported, 3, "When did Ann get back from Lisbon?", now) is None  # "landed": no word of it
    # as of a now before any report, the plan stands
    assert plan_after(reported, 0, "When did Noodle get her teeth out?", datetime(2025, 3, 28, tzinfo=UTC)) is None


def test_an_answer_read_from_a_report_carries_the_reports_own_probability(reported):
    """The relevance model's probability of the row the answer was read from: a report it ranked low, or not at all,
    makes the answer say its evidence is weak, not borrow the plan's."""
    frame, now = reported.table.frame, datetime(2025, 4, 20, tzinfo=UTC)
    question = "When did Noodle get her teeth out?"
    ranked = frame.loc[[0, 4]].assign(**{PROBABILITY: [0.9, 0.05]})
    answer = answer_from_evidence("when", ranked, now, "top", frame, question=question)
    assert (answer.answer, answer.source, answer.probability) == ("28 March 2025", REPORT_SOURCE, 0.05)
    alone = answer_from_evidence("when", ranked.loc[[0]], now, "top", frame, question=question)
    assert (alone.answer, alone.probability) == ("28 March 2025", 0.0)  # a report the model did not rank
    unscored = answer_from_evidence("when", frame.loc[[0]], now, "top", frame, question=question)
    assert unscored.probability is None  # no relevance model: nothing to say
