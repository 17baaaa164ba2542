"""The length between two events: the question's two parts, and the answer from each part's evidence."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from retrieval.data.conversation_log import Utterance
from retrieval.memory.answer_notes import plan_note
from retrieval.memory.conversation_table import utterance_frame
from retrieval.memory.when_between import answer_between, answer_length_between, asked_unit, between_parts

NOW = datetime(2023, 10, 1, tzinfo=timezone.utc)


@pytest.mark.parametrize("question, parts", [
    ("How many weeks passed between Ann adopting Rex and Fido?", ("Ann adopting Rex", "Ann adopting Fido")),
    ("How long was it between the race and the wedding?", ("the race", "the wedding")),
    ("How much time passed between her first and second tattoo?", ("her first tattoo", "second tattoo")),
    ("How long did Bob work at the bank before he quit?", ("Bob work at the bank", "he quit")),
    ("How long after the move did she start painting?", ("the move", "she start painting")),
    ("How long has Bob been painting?", None),
    ("how long was it from the start of demo to the counters going in", ("the start of demo", "the counters going in")),
    ("How many days from the offer until her first day?", ("the offer", "her first day")),
])
def test_between_parts(question, parts):
    assert between_parts(question) == parts


def frame_of(*texts_and_times):
    return utterance_frame([Utterance(i, 1 + i, "Ann", ts, text) for i, (text, ts) in enumerate(texts_and_times)])


def test_answer_between_two_events():
    f = frame_of(("I adopted Rex yesterday!", datetime(2023, 7, 2, 12, tzinfo=timezone.utc)),
                 ("Fido joined us today.", datetime(2023, 7, 23, 12, tzinfo=timezone.utc)))
    a = answer_between(f.iloc[:1], f.iloc[1:], asked_unit("How many weeks passed between ..."))
    assert (a.answer, a.duration) == ("3 weeks", (3, 3, "week"))
    assert "'yesterday'" in a.derivation[0] and "22.0 days" in a.derivation[-1]
    # no unit asked, two days: the exact count, and its size in weeks
    assert answer_between(f.iloc[:1], f.iloc[1:]).answer == "22 days (about 3 weeks)"
    assert answer_between(f.iloc[:1], f.iloc[1:]).duration == (22, 22, "day")
    assert answer_between(f.iloc[:1], f.iloc[:1]).answer is None  # one row cannot be both events


def test_a_stated_length_answers_first():
    f = frame_of(("I worked at the bank for 3 years before quitting.", datetime(2023, 7, 2, tzinfo=timezone.utc)),
                 ("I quit last week.", datetime(2023, 8, 2, tzinfo=timezone.utc)))
    a = answer_length_between("How long did Ann work at the bank before she quit?", f.iloc[:1], f.iloc[1:], NOW)
    assert (a.kind, a.answer, a.duration) == ("between", "3 years", (3, 3, "year"))


def test_a_length_the_first_events_row_states_of_something_else_does_not_answer_how_long_after():
    f = frame_of(("We adopted her on Sunday! She hid under the sofa for a day.", datetime(2025, 3, 12,
                                                                                         tzinfo=timezone.utc)),
                 ("The X-ray on Thursday showed nothing.", datetime(2025, 4, 22, tzinfo=timezone.utc)))
    a = answer_length_between("How long after we adopted her did she have the X-ray?", f.iloc[:1], f.iloc[1:], NOW)
    assert a.duration == (39, 39, "day")  # Sunday 9 March to Thursday 17 April, not "a day"
    b = answer_length_between("How many days passed between the adoption and the X-ray?", f.iloc[:1], f.iloc[1:],
                              NOW)
    assert b.duration == (39, 39, "day")


def test_each_event_is_answered_as_a_when_question_following_a_plan_that_moved():
    """Each event's time is the when-answer over the whole log: a plan a later row moves ends on its new day."""
    said = [datetime(2025, 2, 25, 20, tzinfo=timezone.utc), datetime(2025, 3, 11, 19, tzinfo=timezone.utc),
            datetime(2025, 3, 27, 21, tzinfo=timezone.utc)]
    f = frame_of(("Mom had the MRI yesterday, results in about a week.", said[0]),
                 ("Mom got her results. Surgery is scheduled for the 26th.", said[1]),
                 ("The hospital called, mom's surgery got pushed to April 1st.", said[2]))
    question = "How long was it between mom's MRI and her surgery?"
    a = answer_length_between(question, f.iloc[:1], f.iloc[1:2], datetime(2025, 4, 10, tzinfo=timezone.utc),
                              "top", f)
    assert a.duration == (36, 36, "day")  # 24 February to 1 April, not to the planned 26 March
    assert any("pushed to April 1st" in step or "April 2025" in step for step in a.derivation)
    # without the whole log the plan cannot be followed: the planned day
    b = answer_length_between(question, f.iloc[:1], f.iloc[1:2], datetime(2025, 4, 10, tzinfo=timezone.utc), "top")
    assert b.duration == (30, 30, "day")
    # an end read from a plan is said first, as a when-answer's is: plans move
    note = plan_note(b, datetime(2025, 4, 10, tzinfo=timezone.utc))
    assert note is not None and "26 March" in note and "one end of the length '30 days" in note
    assert plan_note(answer_between(f.iloc[:1], f.iloc[:1]), datetime(2025, 4, 10, tzinfo=timezone.utc)) is None


def test_one_row_that_times_each_event_in_its_own_clause_answers_both():
    said = datetime(2023, 7, 12, 12, tzinfo=timezone.utc)
    f = frame_of(("Rex came home on Sunday, and Fido joined us last Friday.", said))
    a = answer_length_between("How many days passed between adopting Rex and adopting Fido?", f, f, NOW, "top", f)
    assert a.answer is not None and a.duration == (2, 2, "day")  # Sunday 9 July, Friday 7 July
