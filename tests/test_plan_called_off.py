"""A plan moved in words other than the question's: a plan called off ("the semi tomorrow is off") takes the day said
in the turns right after it ("league says sunday march 2"), and a move that speaks of the plan's own event ("city
bumped the inspection. now it's monday the 17th") moves it though the question names it otherwise. A day off work,
a flight cancelled in another clause, a move of another event (sharing only a weekday) or of another plan (sharing
only "got") leave the plan's day; a report that also names the planned day ("since sunday") confirms it."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from conftest import chat_memory

from retrieval.memory.event_time import event_time_of, mention_events
from retrieval.memory.plan_change import called_off, moved_plan
from retrieval.memory.plan_delay import plan_delay
from retrieval.memory.when_answer import answer_from_evidence, evidence_time, question_kind
from retrieval.memory.when_clause import clause_at

UTC = timezone.utc
NOW = datetime(2025, 4, 20, tzinfo=UTC)
CHAT = [("2025-02-12T20:00:00+00:00", "Dan", "cup semi is sunday the 23rd at fairview park, 11am"),
        ("2025-02-22T11:10:00+00:00", "Dan", "in other news the semi tomorrow is off, pitch is a swamp"),
        ("2025-02-22T11:11:00+00:00", "Sue", "noooo. when's it now"),
        ("2025-02-22T11:12:00+00:00", "Dan", "league says sunday march 2, same time"),
        ("2025-03-02T16:49:00+00:00", "Mo", "the city finally called. electrical inspection is on the 14th"),
        ("2025-03-03T10:00:00+00:00", "Sue", "I have the day off tomorrow, then the dentist is on saturday"),
        ("2025-03-05T10:00:00+00:00", "Sue", "the book club moved to saturday the 15th"),
        ("2025-03-12T19:58:00+00:00", "Mo", "bad news, city bumped the inspection. now it's monday the 17th"),
        ("2025-03-13T09:00:00+00:00", "Sue", "our flight home today got cancelled, they put us on the friday one"),
        ("2025-03-13T09:01:00+00:00", "Dan", "oh no. the party's on the 30th btw"),
        ("2025-03-30T21:13:00+01:00", "Sue", "kev's mam is coming up from mayo this day next week"),
        ("2025-04-10T19:40:00+01:00", "Sue", "kev's mam went home this morning. she reorganised it since sunday"),
        ("2025-04-13T14:25:00+01:00", "Mo", "counters went in friday!! finally. looks great"),
        ("2025-04-13T14:28:00+01:00", "Mo", "the sink gets hooked up tuesday and then we're done with the counters")]


@pytest.fixture
def memory(tmp_path, tiny_backbone):
    return chat_memory(tmp_path, tiny_backbone, CHAT)


def test_a_plan_called_off_takes_the_day_said_right_after(memory):
    answer = memory.ask("When did Dan's cup semi end up being played?", now=NOW).answer
    assert answer.answer == "2 March 2025"
    assert any("called off" in line and "row 3" in line for line in answer.derivation)


def test_a_move_that_speaks_of_the_plan_moves_it(memory):
    answer = memory.ask("When did the kitchen have the electrical check?", now=NOW).answer
    assert answer.answer == "17 March 2025"
    assert any("with the plan's words" in line and "inspect" in line for line in answer.derivation)


def test_a_day_off_and_another_event_moved_on_the_same_weekday_leave_the_plan(memory):
    answer = memory.ask("When was Sue's dentist?", now=NOW).answer
    assert answer.answer == "8 March 2025"


def test_a_flight_cancelled_in_another_clause_does_not_call_off_the_new_one(memory):
    frame = memory.table.frame
    flight, semi = frame.loc[8], frame.loc[1]
    friday = next(t for _, t in mention_events(flight["text"], flight["timestamp"].to_pydatetime())[1]
                  if getattr(t, "phrase", "").endswith("friday"))
    assert called_off(flight, friday, frame) == {}
    tomorrow = event_time_of(semi)
    assert list(called_off(semi, tomorrow, frame)) == [3]  # "league says sunday march 2", two turns on


def test_a_clause_is_the_part_of_its_sentence_between_commas_and_joining_words():
    text = "our flight home today got cancelled, they put us on the friday one. fine"
    assert clause_at(text, text.index("friday")).rstrip(".") == "they put us on the friday one"
    assert clause_at(text, 4) == "our flight home today got cancelled"


def test_a_report_that_also_names_the_planned_day_confirms_the_plan(memory):
    """"went home this morning ... since sunday": another event's day beside the planned one, which it names."""
    frame = memory.table.frame
    plan = frame.loc[10]
    question = "When did Kev's mam come up from Mayo?"
    assert moved_plan(plan, event_time_of(plan), frame, question, NOW) is None
    assert memory.ask(question, now=NOW).answer.answer == "6 April 2025"


def test_how_late_a_plan_came_is_the_days_from_its_planned_day_to_its_last(memory):
    answer = memory.ask("How many days did Dan's cup semi get pushed back?", now=NOW).answer
    assert (answer.answer, answer.duration) == ("7 days", (7, 7, "day"))
    assert answer.derivation[-1] == "7 days from the planned 23 February 2025 to 2 March 2025"
    assert question_kind("how many days late was the install in the end?") == "how_long"


def test_a_plan_nothing_moved_gives_no_delay(memory):
    frame = memory.table.frame

    def read(row):
        return evidence_time(row, frame, "How many days late was Sue's dentist?")

    assert plan_delay(frame.loc[[5]], read, frame, "How many days late was Sue's dentist?", NOW) is None  # never moved
    assert plan_delay(frame.loc[[0]], read, frame, "How long was the cup semi?", NOW) is None  # no delay asked
    semi = plan_delay(frame.loc[[0]], read, frame, "How many days was the semi pushed back?", NOW)
    assert semi is not None and semi.days == 7 and semi.said.name == 0


def test_a_question_about_what_became_of_a_plan_leaves_out_plans_nothing_moved(memory):
    frame = memory.table.frame
    ranked = frame.loc[[13, 12]]  # the plan ("tuesday", to come) ranked above the report ("friday", past)
    finally_ = answer_from_evidence("when", ranked, NOW, "top", frame, question="When did the counters finally go in?")
    assert finally_.answer == "11 April 2025"
    plain = answer_from_evidence("when", ranked, NOW, "top", frame, question="When do the counters get finished?")
    assert plain.answer == "15 April 2025"  # asked plainly, the best row's plan answers
    alone = answer_from_evidence("when", ranked.loc[[13]], NOW, "top", frame, question="When did it finally happen?")
    assert alone.answer == "15 April 2025"  # nothing else to answer from: the plan stays


def test_a_plan_called_off_in_capitals_is_called_off(tmp_path, tiny_backbone):
    chat = [("2025-02-12T20:00:00+00:00", "Dan", "cup final is sunday the 23rd"),
            ("2025-02-22T11:10:00+00:00", "Dan", "Final tomorrow is OFF, pitch flooded"),
            ("2025-02-22T11:12:00+00:00", "Dan", "new date is sunday march 2")]
    memory = chat_memory(tmp_path, tiny_backbone, chat)
    frame = memory.table.frame
    moved = moved_plan(frame.loc[0], event_time_of(frame.loc[0]), frame, "When was the cup final played?", NOW)
    assert moved is not None and moved[1].start.date().isoformat() == "2025-03-02"
