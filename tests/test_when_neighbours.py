"""A when-answer whose evidence row states no time borrows one from a neighbour in its session sharing the
question's words; never from another session, a neighbour that shares nothing, or one out of the window."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from retrieval.data.conversation_log import Utterance
from retrieval.memory.conversation_table import utterance_frame
from retrieval.memory.when_answer import answer_from_evidence
from retrieval.memory.when_neighbours import content_stems, stated_neighbour

SAID = datetime(2024, 3, 14, 18, tzinfo=timezone.utc)  # a Thursday
NOW = datetime(2024, 6, 1, tzinfo=timezone.utc)


def conversation(*turns: tuple[int, str]):
    """(session, text) turns, speakers alternating, a minute apart (a new session a week later)."""
    return utterance_frame([Utterance(i, s, "Ann" if i % 2 == 0 else "Bob",
                                      SAID + timedelta(days=7 * (s - 1), minutes=i), text)
                            for i, (s, text) in enumerate(turns)])


TRIP = [(1, "We drove up to the lake for a fishing trip last weekend."),
        (1, "Sounds lovely! How was it?"),
        (1, "Wonderful: we caught three trout and grilled them by the water.")]


def test_content_stems_drop_names_stop_words_and_words_of_asking():
    assert content_stems("When did Ann go on her fishing trip?", ["Ann", "Bob"]) == {"fish", "trip"}
    assert content_stems("Did you tell Bob?", ["Ann", "Bob"]) == set()
    # a sentence adverb says how the speaker sees it, and its stem is another word's ("finally": "final")
    assert content_stems("when did the grand final finally get played?") == {"grand", "final", "play"}
    assert content_stems("they finally operated") == {"oper"}


def test_a_turn_without_a_time_borrows_its_neighbours():
    frame = conversation(*TRIP)
    a = answer_from_evidence("when", frame.iloc[[2]], NOW, frame=frame, question="When did Ann go on a fishing trip?")
    assert a.answer == "the weekend before 14 March 2024" and a.source == "neighbour_event_time"
    assert "row 2 states no time of its own: row 0, 2 turn(s) before it" in a.derivation[0]
    assert "'fish'" in a.derivation[0]


def test_without_the_question_or_the_table_nothing_is_borrowed():
    frame = conversation(*TRIP)
    assert answer_from_evidence("when", frame.iloc[[2]], NOW, frame=frame).source == "timestamp"
    assert answer_from_evidence("when", frame.iloc[[2]], NOW, question="When was the fishing trip?").source == \
        "timestamp"


def test_a_neighbour_sharing_no_word_is_not_taken():
    frame = conversation((1, "I start a new job next month."), (1, "We caught three trout by the water."))
    a = answer_from_evidence("when", frame.iloc[[1]], NOW, frame=frame, question="When did Bob catch trout?")
    assert a.source == "timestamp" and a.answer == "14 March 2024"


def test_another_session_is_never_a_neighbour():
    frame = conversation((1, "We went on a fishing trip yesterday."), (2, "The fishing trip was wonderful."))
    assert stated_neighbour(frame, frame.iloc[1], "When was the fishing trip?") is None


def test_the_window_bounds_the_search_and_the_nearest_wins():
    turns = [(1, "My fishing trip was three weeks ago."), (1, "Oh?"), (1, "Yes."), (1, "Nice."),
             (1, "The fishing trip was fun."), (1, "Next month I go on another fishing trip.")]
    frame = conversation(*turns)
    row = frame.iloc[4]
    got = stated_neighbour(frame, row, "When was the fishing trip?", window=4)
    assert got is not None and got[0].name == 5 and got[1] == 1  # one turn after beats four before
    frame = conversation(*turns[:5])
    assert stated_neighbour(frame, frame.iloc[4], "When was the fishing trip?", window=3) is None
    assert stated_neighbour(frame, frame.iloc[4], "When was the fishing trip?", window=4)[0].name == 0
    with pytest.raises(ValueError, match="at least 0"):
        stated_neighbour(frame, row, "When?", window=-1)


def test_a_row_that_states_a_time_keeps_its_own():
    frame = conversation((1, "I went fishing on a trip last weekend."), (1, "The fishing trip was yesterday."))
    a = answer_from_evidence("when", frame.iloc[[1]], NOW, frame=frame, question="When was the fishing trip?")
    assert a.source == "event_time" and a.answer == "13 March 2024"


# ---- which phrase of an utterance answers (retrieval.memory.when_clause) ----------------------------------
def test_a_time_in_a_sentence_about_another_event_gives_way_to_the_day_it_was_said():
    frame = conversation((1, "I'm repainting my bakery's front window. I'm also opening a second bakery next "
                             "month, which is exciting."))
    a = answer_from_evidence("when", frame, NOW, frame=frame, question="When did Ann start repainting the bakery's "
                                                                      "front window?")
    assert a.source == "timestamp" and a.answer == "14 March 2024"
    assert "in a sentence about something else" in a.derivation[0]
    b = answer_from_evidence("when", frame, NOW, frame=frame, question="When is Ann opening a second bakery?")
    assert b.source == "event_time" and b.answer == "April 2024"


def test_a_time_whose_sentence_brings_a_word_of_the_question_stands():
    frame = conversation((1, "This scarf is from my winter range. I knitted a limited run last week, so proud!"))
    a = answer_from_evidence("when", frame, NOW, frame=frame, question="When did Ann knit a limited range of scarves?")
    assert a.source == "event_time" and a.answer == "the week before 14 March 2024"


def test_a_frame_sentence_keeps_its_time_and_the_telling_sentence_may_name_its_own():
    frame = conversation((1, "Guess what I did this week? I adopted a kitten!"))
    a = answer_from_evidence("when", frame, NOW, frame=frame, question="When did Ann adopt a kitten?")
    assert a.source == "event_time" and a.answer == "the week of 11 March 2024"
    frame = conversation((1, "We moved house yesterday. And two days ago I sold my old car."))
    a = answer_from_evidence("when", frame, NOW, frame=frame, question="When did Ann sell her car?")
    assert a.source == "clause_event_time" and a.answer == "12 March 2024"


def test_today_in_the_sentence_telling_the_event_is_its_day():
    frame = conversation((1, "I had the interview for the bakery job last week. Today the bakery offered me the "
                             "job!"))
    a = answer_from_evidence("when", frame, NOW, frame=frame, question="When did the bakery offer Ann the job?")
    assert a.answer == "14 March 2024" and a.source == "clause_event_time"


def test_a_sentence_that_times_two_events_is_read_clause_by_clause():
    frame = conversation((1, "Best bits for me: the tram ride on Tuesday and the fado bar on Wednesday night."))
    a = answer_from_evidence("when", frame, NOW, frame=frame, question="Which night did we go to the fado bar?")
    assert a.source == "clause_event_time" and a.answer == "13 March 2024"
    a = answer_from_evidence("when", frame, NOW, frame=frame, question="When did we ride the tram?")
    assert a.answer == "12 March 2024"  # the row's first time: the tram's own clause


def test_two_sentences_sharing_as_many_words_leave_the_rows_own_time():
    frame = conversation((1, "I heard back from the bakery today. They want me in for the tasting on 3/19 at 10."))
    a = answer_from_evidence("when", frame, NOW, frame=frame, question="When was Ann's tasting at the bakery?")
    assert a.answer == "19 March 2024" and a.source == "event_time"  # not "today", the frame's day


def test_the_whole_weekend_is_the_weekend():
    frame = conversation((1, "Got the keys Friday! Then spent the whole weekend painting the bedroom."))
    a = answer_from_evidence("when", frame, NOW, frame=frame, question="When did they paint the bedroom?")
    assert a.answer == "the weekend before 14 March 2024" and a.source == "clause_event_time"


def test_a_turn_that_refers_back_takes_the_time_named_before_it_whatever_its_words():
    frame = conversation((1, "The party is sunday the 17th."),
                         (1, "I'm bringing mam to howth for lunch that day."),
                         (1, "Lovely. My hen is in Kilkenny on saturday the 16th, back for mam's dinner."))
    a = answer_from_evidence("when", frame.iloc[[1]], NOW, frame=frame, question="When did Ann bring mam to Howth?")
    assert a.answer == "17 March 2024" and "row 1 refers back to a time: row 0, 1 turn(s) before it" in a.derivation[0]
    # "then" only orders what happened: the neighbour that shares the question's words still answers
    told = conversation((1, "My hen is on saturday the 16th, back for mam's dinner."), (1, "Then we all went home."))
    assert answer_from_evidence("when", told.iloc[[1]], NOW, frame=told, question="When was mam's dinner?").answer \
        == "16 March 2024"
