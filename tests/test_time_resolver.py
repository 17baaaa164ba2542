"""The time resolver: expressions -> intervals and session references, against an explicit now."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from retrieval.memory.time_resolver import TimeResolver, normalise
from retrieval.timex.numbers import words_to_digits

UTC = ZoneInfo("UTC")
NOW = datetime(2023, 10, 22, 11, 17, tzinfo=UTC)  # a Sunday


def resolved(text: str, now: datetime = NOW):
    return [e for e in TimeResolver(now).resolve(text) if not e.unresolved]


def days(text: str, now: datetime = NOW) -> list[tuple[str, str]]:
    """The single expression's intervals as (first day, day after the last) ISO dates."""
    (expr,) = resolved(text, now)
    return [(a.date().isoformat(), b.date().isoformat()) for a, b in expr.intervals]


@pytest.mark.parametrize("text, expected", [
    ("May eighth", "May 8th"),
    ("the first through third sessions", "the 1st through 3rd sessions"),
    ("one hundred sixty seven days ago", "167 days ago"),
    ("the nineteenth through twenty-first sessions", "the 19th through 21st sessions"),
    ("sessions one and three", "sessions 1 and 3"),
])
def test_number_words(text, expected):
    assert words_to_digits(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("What did we chat about on May 8th?", [("2023-05-08", "2023-05-09")]),
    ("Tell me what we discussed May eighth.", [("2023-05-08", "2023-05-09")]),
    ("What did we talk about on February 21, 2023?", [("2023-02-21", "2023-02-22")]),
    ("between May 8th and June 9th", [("2023-05-08", "2023-06-10")]),
    ("What was talked about from December 20th to January 3rd?", [("2022-12-20", "2023-01-04")]),
    ("What did we discuss in May?", [("2023-05-01", "2023-06-01")]),
    ("What did we discuss in November?", [("2022-11-01", "2022-12-01")]),  # the latest November before now
    ("What did we discuss last Friday?", [("2023-10-20", "2023-10-21")]),
    ("What did we discuss last Sunday?", [("2023-10-15", "2023-10-16")]),  # said on a Sunday: a week ago
    ("What did we chat about over the last 3 days?", [("2023-10-19", "2023-10-23")]),
    ("What did we chat about over this last week?", [("2023-10-15", "2023-10-23")]),
    ("What did we discuss 167 days ago?", [("2023-05-08", "2023-05-09")]),
    ("What did we discuss 5 months ago?", [("2023-05-01", "2023-06-01")]),
    ("What did we talk about last month?", [("2023-09-01", "2023-10-01")]),
    ("What did we talk about this month?", [("2023-10-01", "2023-11-01")]),
    ("What did we talk about today?", [("2023-10-22", "2023-10-23")]),
    ("what happened yesterday", [("2023-10-21", "2023-10-22")]),
    ("anything in 2022?", [("2022-01-01", "2023-01-01")]),
])
def test_calendar_expressions(text, expected):
    assert days(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("What did Kylie suggest on Janurary 17th?", "what did kylie suggest on january 17th?"),
    ("on the 3rd of Febuary, 2023", "on the 3rd of february, 2023"),
    ("Ocotber 5", "october 5"),
    ("in session 3", "in session 3"),  # not close to a month
    ("a trip to Augusta 3 times", "a trip to augusta 3 times"),  # starts with a month's name: a word of its own
    ("the Janurary sales", "the janurary sales"),  # no day number beside it
])
def test_misspelt_month_beside_a_day_is_corrected(text, expected):
    assert normalise(text) == expected


def test_misspelt_month_resolves_to_its_day():
    assert days("What did we discuss on Febuary 21st?") == [("2023-02-21", "2023-02-22")]


def test_a_named_day_carries_the_days_beside_it_and_a_bound_does_not():
    (on,) = resolved("What did we discuss on May 8th?")
    assert [(a.date().isoformat(), b.date().isoformat()) for a, b in on.nearby_intervals] == [
        ("2023-05-07", "2023-05-08"), ("2023-05-09", "2023-05-10")]
    (before,) = resolved("What did we discuss before May 8th?")
    assert before.nearby_intervals is None


def test_earlier_this_morning_is_today_before_the_latest_session_with_soft_hours():
    (e,) = resolved("What did we discuss earlier this morning?")
    assert e.kind == "earlier_today" and e.before_latest_session and e.hours == (0, 12)
    assert e.intervals[0][0] == datetime(2023, 10, 22, tzinfo=UTC)


@pytest.mark.parametrize("text, positions, ids", [
    ("What did we discuss 20 sessions ago?", (-20, -20), None),
    ("Tell me what we talked about 3 discussions ago.", (-3, -3), None),
    ("What did we talk about last discussion?", (-1, -1), None),
    ("Tell me what we discussed last time.", (-1, -1), None),
    ("What did we discuss the session before last?", (-2, -2), None),
    ("What did we talk about, not the last discussion, but the one before that?", (-2, -2), None),
    ("What did we discuss in our first session?", (1, 1), None),
    ("What did we chat about from the first through third sessions?", (1, 3), None),
    ("What did we discuss over sessions 1 through 3?", None, (1, 3)),
    ("In session 2, what is the name of the puppy?", None, (2, 2)),
])
def test_session_expressions(text, positions, ids):
    (e,) = resolved(text)
    assert e.session_positions == positions and e.session_ids == ids


@pytest.mark.parametrize("text, ids", [
    ("What hobby did she mention in response number 26?", (26, 26)),
    ("What did I say in messages 10 to 12?", (10, 12)),
    ("Summarise message #5.", (5, 5)),
])
def test_response_references(text, ids):
    (e,) = resolved(text)
    assert e.kind == "response" and e.response_ids == ids


def test_third_conversation_in_may_is_an_ordinal_inside_a_month():
    kinds = sorted(e.kind for e in resolved("the third conversation in May"))
    assert kinds == ["month", "session"]


def test_no_time_reference_and_modal_may():
    assert resolved("Can you summarize what we discussed?") == []
    assert resolved("May I ask what we discussed?") == []


def test_unresolvable_phrase_is_reported_not_guessed():
    exprs = TimeResolver(NOW).resolve("What did we discuss 3 blue moons ago?")
    assert [e.kind for e in exprs] == ["unresolved"] and "ago" in exprs[0].unresolved
    # a phrase built from parts the grammar has is read, though no rule names it: 17 x 2 weeks back, that week
    (fortnights,) = TimeResolver(NOW).resolve("What did we discuss 17 fortnights ago?")
    assert fortnights.intervals[0][0].date().isoformat() == "2023-02-20" and fortnights.grain == "week"
    (future,) = TimeResolver(NOW).resolve("what will we discuss next Friday?")
    assert future.unresolved


def test_time_zone_is_explicit():
    paris = ZoneInfo("Europe/Paris")
    (e,) = resolved("on May 8th", datetime(2023, 10, 22, 9, tzinfo=paris))
    assert e.intervals[0][0] == datetime(2023, 5, 8, tzinfo=paris)
    with pytest.raises(ValueError, match="time-zone aware"):
        TimeResolver(datetime(2023, 10, 22))


def test_to_dict_is_json_ready():
    import json

    (e,) = resolved("between May 8th and June 9th")
    assert json.loads(json.dumps(e.to_dict()))["intervals"][0][0].startswith("2023-05-08")


@pytest.mark.parametrize("text, expected", [
    ("between June 5 and June 1", [("2023-06-01", "2023-06-06")]),
    ("between June 5, 2023 and June 1, 2023", [("2023-06-01", "2023-06-06")]),
    ("between June and March", [("2023-03-01", "2023-07-01")]),
])
def test_a_reversed_range_is_the_range_between_its_ends_noted(text, expected):
    (e,) = resolved(text)
    assert days(text) == expected and "later end first" in e.note
    assert "later end first" in e.to_dict()["note"]


@pytest.mark.parametrize("text", ["from December 20th to January 3rd", "between June 1 and June 5",
                                  "from September to February"])
def test_a_range_across_the_new_year_is_not_reversed(text):
    (e,) = resolved(text)
    assert e.note is None and e.intervals[0][1] - e.intervals[0][0] < timedelta(days=190)


def test_a_bound_that_leaves_no_time_up_to_today_is_unresolved():
    (after_today,) = TimeResolver(NOW).resolve("What did we discuss after October 22?")  # said on October 22
    assert after_today.unresolved and "leaves no time up to today" in after_today.unresolved
    (since_later,) = TimeResolver(NOW).resolve("since June 5, 2030")
    assert since_later.unresolved


def test_an_open_start_is_readable_in_a_zone_whose_1900_offset_is_local_mean_time():
    import pandas as pd

    paris = ZoneInfo("Europe/Paris")
    (before,) = resolved("What did we discuss before March 31?", datetime(2024, 3, 31, 3, tzinfo=paris))
    start, end = before.intervals[0]
    assert pd.Timestamp(start.isoformat()) < pd.Timestamp(end.isoformat())  # "+00:09:21" would not parse
    assert end == datetime(2024, 3, 31, tzinfo=paris)


@pytest.mark.parametrize("text, expected", [
    ("on Friday the 9th of June", [("2023-06-09", "2023-06-10")]),  # a weekday beside a date checks it
    ("on June 9th, a Friday", [("2023-06-09", "2023-06-10")]),
    ("the second Monday of June", [("2023-06-12", "2023-06-13")]),
    ("the last Friday of August", [("2023-08-25", "2023-08-26")]),
    ("the final Sunday in April", [("2023-04-30", "2023-05-01")]),
    ("in the first half of March", [("2023-03-01", "2023-03-16")]),
    ("in the second half of February", [("2023-02-16", "2023-03-01")]),
    ("in late May", [("2023-05-21", "2023-06-01")]),
    ("in mid-July", [("2023-07-11", "2023-07-21")]),
    ("in the last week of July", [("2023-07-25", "2023-08-01")]),  # its last seven days (the memory's conventions)
    ("the week of June 14th", [("2023-06-12", "2023-06-19")]),
    ("the week of the 12th", [("2023-10-09", "2023-10-16")]),
    ("the week before last", [("2023-10-02", "2023-10-09")]),
    ("since Friday", [("2023-10-20", "2023-10-23")]),
    ("since Sunday", [("2023-10-15", "2023-10-23")]),  # said on a Sunday: the Sunday before
    ("since May", [("2023-05-01", "2023-10-23")]),  # a month whose name is also a word, read after "since"
    ("back in '98", [("1998-01-01", "1999-01-01")]),  # a year written with two digits after an apostrophe
    ("from September 3rd until now", [("2023-09-03", "2023-10-23")]),
    ("on Halloween", [("2022-10-31", "2022-11-01")]),  # the latest one up to today
    ("on Thanksgiving", [("2022-11-24", "2022-11-25")]),  # the fourth Thursday of November
    ("over the holidays", [("2022-12-24", "2023-01-02")]),
    ("over the summer", [("2023-06-01", "2023-09-01")]),
    ("last winter", [("2022-12-01", "2023-03-01")]),
    ("2 days after we met on October 13th", [("2023-10-15", "2023-10-16")]),
    ("the day before our chat on October 13th", [("2023-10-12", "2023-10-13")]),
    ("from the session on July 15 up to the one on August 25", [("2023-07-15", "2023-08-26")]),
])
def test_composite_expressions(text, expected):
    assert days(text) == expected


def test_a_weekday_that_does_not_match_its_date_is_noted_not_a_second_day():
    (expr,) = resolved("What did we discuss on Saturday, June 9th?")
    assert [(a.date().isoformat()) for a, _ in expr.intervals] == ["2023-06-09"]
    assert "Saturday does not match 2023-06-09" in expr.note


def test_a_part_of_a_dated_day_is_the_day_with_soft_hours():
    (expr,) = resolved("the evening of June 2")
    assert expr.hours == (17, 24) and expr.intervals[0][0].date().isoformat() == "2023-06-02"
    (expr,) = resolved("on June 2nd in the morning")
    assert expr.hours == (0, 12)


@pytest.mark.parametrize("text, shift, anchor", [
    ("the session right before the one on May 8", (-1, -1), "on may 8"),
    ("the conversation after our 3rd session", (1, 1), "our 3rd session"),
    ("the three sessions before the one on August 17", (-3, -1), "on august 17"),
    ("our chat that came after the one on June 9th", (1, 1), "on june 9th"),
])
def test_sessions_relative_to_an_anchor_expression(text, shift, anchor):
    (expr,) = resolved(text)
    assert expr.session_shift == shift and expr.anchor.text == anchor


def test_references_back_are_marked_and_unresolved_alone():
    for text, kind in [("And what did Nina say then?", "then"), ("Go over that week for me.", "week"),
                       ("And the conversation after that?", "after"), ("Catch me up on that morning.", "morning")]:
        (expr,) = TimeResolver(NOW).resolve(text)
        assert expr.anaphor == kind and expr.unresolved
    # the session before that (Zyphra's "not the last discussion, but the one before that") keeps its reading
    assert resolved("not the last discussion, but the one before that")[0].session_positions == (-2, -2)


def test_bare_unit_nouns_are_not_time_references():
    assert TimeResolver(NOW).resolve("How many sessions did we have?") == []
    (expr,) = TimeResolver(NOW).resolve("What did we discuss a few weeks back?")
    assert expr.unresolved


@pytest.mark.parametrize("text, expected", [
    ("what did we say on the Tuesday after Easter?", [("2023-04-11", "2023-04-12")]),  # Easter 2023: 9 April
    ("what did we talk about the weekend of April 29th?", [("2023-04-29", "2023-05-01")]),
    ("the 2nd Friday before May 12", [("2023-04-28", "2023-04-29")]),  # May 12 is a Friday: the 5th, then the 28th
    ("what did we discuss around 3 pm yesterday?", [("2023-10-21", "2023-10-22")]),  # the day, soft hours
])
def test_compositions_no_rule_names(text, expected):
    """Phrases built from parts the grammar has, though no rule lists them."""
    assert days(text) == expected


def test_an_ordinal_counted_from_the_end_and_a_clock_time_as_soft_hours():
    (e,) = resolved("what did we discuss in our second-to-last conversation?")
    assert e.session_positions == (-2, -2)
    (e,) = resolved("what did we say around 3 pm yesterday?")
    assert e.hours == (14, 17)


def test_a_question_about_a_plan_reads_its_names_forward():
    from retrieval.memory.question import AskedQuestion
    from retrieval.memory.time_resolver import question_lean

    assert question_lean("when are priya and marcus going to her parents for easter?") == "future"
    assert question_lean("what will we do on Friday?") == "future"
    assert question_lean("what did we say about easter?") == "past"
    assert question_lean("what did we talk about on st. patrick's day?") == "past"  # a possessive is no "is"
    # a plan as it stood then, a purpose, the preposition of "in response to": none leans a question forward
    assert question_lean("On May 8th, what did Ann say she was going to keep doing in response to Bo's question?") \
        == "past"
    assert question_lean("On June 16th Maria said she was trying what type of yoga to stay fit?") == "past"
    assert question_lean("what is she going to do on Friday?") == "future"
    now = datetime(2025, 4, 16, 9, tzinfo=ZoneInfo("America/New_York"))
    ahead = AskedQuestion.read("when are we going to her parents for easter?", now)
    assert ahead.expressions[0].unresolved.endswith("lies after now")  # Easter Sunday 2025, not 2024's
    back = AskedQuestion.read("what did we say at easter?", now)
    assert back.expressions[0].intervals[0][0].year == 2024
