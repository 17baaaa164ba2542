"""Event time at ingest: an utterance's own time expressions resolved against its timestamp."""

from __future__ import annotations

from datetime import date, datetime, timezone
from zoneinfo import ZoneInfo

import pandas as pd
import pytest

from retrieval.data.conversation_log import Utterance
from retrieval.memory.conversation_table import COLUMNS, utterance_frame
from retrieval.memory.event_time import EVENT_COLUMNS, event_counts, read_event_time
from retrieval.memory.time_resolver import TimeResolver

THU = datetime(2023, 5, 25, 13, 14, tzinfo=timezone.utc)  # a Thursday
MON = datetime(2023, 7, 17, 14, 31, tzinfo=timezone.utc)  # a Monday


def reading(text: str, said: datetime = THU):
    t = read_event_time(text, said).time
    return None if t is None else (t.start.date(), t.end.date(), t.granularity)


@pytest.mark.parametrize("text, said, expected", [
    ("I went to a support group yesterday", THU, (date(2023, 5, 24), date(2023, 5, 25), "day")),
    ("I ran a race two days ago", THU, (date(2023, 5, 23), date(2023, 5, 24), "day")),
    ("I ran a charity race last Saturday", THU, (date(2023, 5, 20), date(2023, 5, 21), "day")),
    ("I joined a new group last Tues.", THU, (date(2023, 5, 23), date(2023, 5, 24), "day")),
    ("See you this Friday!", THU, (date(2023, 5, 26), date(2023, 5, 27), "day")),  # forward, not last week's
    ("The opening is tomorrow.", THU, (date(2023, 5, 26), date(2023, 5, 27), "day")),
    ("My school event last week was awesome", THU, (date(2023, 5, 18), date(2023, 5, 25), "week")),
    ("We met the week before and talked", THU, (date(2023, 5, 18), date(2023, 5, 25), "week")),
    ("I got a puppy 2 weeks ago", THU, (date(2023, 5, 11), date(2023, 5, 18), "week")),
    ("Guess what I did this week?", THU, (date(2023, 5, 22), date(2023, 5, 29), "week")),
    ("Last weekend I joined a mentorship program", MON, (date(2023, 7, 15), date(2023, 7, 17), "weekend")),
    ("We went camping two weekends ago", MON, (date(2023, 7, 8), date(2023, 7, 10), "weekend")),
    ("We're going camping next month.", THU, (date(2023, 6, 1), date(2023, 7, 1), "month")),
    ("I lost my job this month", THU, (date(2023, 5, 1), date(2023, 6, 1), "month")),
    ("That was in 2022, a great year", THU, (date(2022, 1, 1), date(2023, 1, 1), "year")),
    ("I read it last year", THU, (date(2022, 1, 1), date(2023, 1, 1), "year")),
    ("A friend made it for my 18th birthday ten years ago.", THU, (date(2013, 1, 1), date(2014, 1, 1), "year")),
    ("We had a blast on our trip last summer", datetime(2023, 8, 11, tzinfo=timezone.utc),
     (date(2022, 6, 1), date(2022, 9, 1), "season")),
    ("I've known these friends for 4 years", THU, (date(2019, 1, 1), date(2020, 1, 1), "year")),
    ("Got the tattoo a few years ago", THU, (date(2018, 1, 1), date(2022, 1, 1), "fuzzy")),
])
def test_utterance_expressions(text, said, expected):
    assert reading(text, said) == expected


# Phrasings of our own (general English, none from LoCoMo), said on Wednesday 14 June 2023.
WED = datetime(2023, 6, 14, 15, tzinfo=timezone.utc)


@pytest.mark.parametrize("text, expected", [
    ("We went camping the weekend before last.", (date(2023, 6, 3), date(2023, 6, 5), "weekend")),
    ("I ran a marathon two Saturdays ago.", (date(2023, 6, 3), date(2023, 6, 4), "day")),
    ("The race was on the 5th.", (date(2023, 6, 5), date(2023, 6, 6), "day")),
    ("The party was on the 20th!", (date(2023, 5, 20), date(2023, 5, 21), "day")),  # the latest 20th
    ("We hiked there in the spring of 2021", (date(2021, 3, 1), date(2021, 6, 1), "season")),
    ("That was summer 2019, I think.", (date(2019, 6, 1), date(2019, 9, 1), "season")),
    ("I moved in early June.", (date(2023, 6, 1), date(2023, 6, 11), "span")),
    ("I saw her a couple of weeks back.", (date(2023, 5, 24), date(2023, 6, 7), "fuzzy")),
    ("I've been painting for the past few months.", (date(2023, 1, 1), date(2023, 6, 14), "fuzzy")),
    ("I took pottery classes over the summer.", (date(2023, 6, 1), date(2023, 9, 1), "season")),
    ("We went hiking last spring.", (date(2023, 3, 1), date(2023, 6, 1), "season")),
    ("I signed up earlier this year.", (date(2023, 1, 1), date(2023, 6, 14), "year")),
    ("We finally met earlier this month.", (date(2023, 6, 1), date(2023, 6, 14), "month")),
    ("I baked bread yesterday morning.", (date(2023, 6, 13), date(2023, 6, 14), "day")),
    ("We saw a play last evening.", (date(2023, 6, 13), date(2023, 6, 14), "day")),
    ("I sold my bike a fortnight ago.", (date(2023, 5, 31), date(2023, 6, 7), "week")),  # as "2 weeks ago"
    ("We're moving next March.", (date(2024, 3, 1), date(2024, 4, 1), "month")),
    ("The wedding is next July.", (date(2023, 7, 1), date(2023, 8, 1), "month")),
    ("I went fishing over the weekend.", (date(2023, 6, 10), date(2023, 6, 12), "weekend")),  # a Wednesday
])
def test_phrasings_of_our_own(text, expected):
    assert reading(text, WED) == expected


@pytest.mark.parametrize("text, duration", [
    ("I've been doing it for three weeks.", (3, 3, "week")),
    ("I stayed there for 2 days.", (2, 2, "day")),
    ("I've been vegan for a couple of years.", (2, 3, "year")),
    ("We have dated for the last few months", (2, 5, "month")),
    ("We stayed for 2 days last week", (2, 2, "day")),
    ("Married 5 years already! Time flies.", (5, 5, "year")),
    ("I have been working at the bakery for a decade.", (10, 10, "year")),
    ("It's been 5 years since I moved here.", (5, 5, "year")),
    ("It has been about three weeks since the surgery.", (3, 3, "week")),
    ("I've been learning Spanish since January.", (5, 5, "month")),  # since: the last January, whatever the tense
    ("We've lived here since last autumn.", (9, 9, "month")),
    ("I've been sore since Monday.", (2, 2, "day")),
    # a fraction of a unit is kept (it was cut to the whole units: "two and a half years" read 2, "half a year" 0)
    ("I've been with my partner for two and a half years.", (2.5, 2.5, "year")),
    ("I've been learning guitar for half a year now.", (0.5, 0.5, "year")),
    ("We've been training for a month and a half.", (1.5, 1.5, "month")),
])
def test_lengths_of_our_own(text, duration):
    assert read_event_time(text, WED).time.duration == duration


@pytest.mark.parametrize("text, year", [
    ("We moved there back in '98.", 1998),  # a two-digit year after an apostrophe, as "in 1998"
    ("Remember the block in Game 7 of the '16 Finals?", None),  # alone, a name's part, as a bare year is
    ("I've been practising art since 2016.", 2016),  # a year at the end of a sentence, its full stop after it
    ("We moved to Boston in 2015.", 2015),
    ("It was 2019. Everything changed.", None),  # a bare year is latent: not an event time on its own
])
def test_a_year_before_a_full_stop_is_read(text, year):
    got = read_event_time(text, WED).time
    assert (got and got.start.year) == year


@pytest.mark.parametrize("text", ["I've been waiting 20 minutes.", "Three years in a row we won the cup.",
                                  "We haven't been in touch in a few weeks."])
def test_words_near_a_length_that_do_not_make_it_one(text):
    got = read_event_time(text, WED).time
    assert got is None or got.kind not in ("duration", "fuzzy_length")


def test_a_fractional_length_starts_in_the_next_finer_unit():
    got = read_event_time("I've been with my partner for two and a half years.", WED).time
    assert got.granularity == "month" and (WED.year - got.start.year) * 12 + WED.month - got.start.month == 30
    assert read_event_time("I could only stay for half a day.", WED).time is None


def test_a_length_gives_way_to_the_when():
    """"We stayed for 2 days last week": the event was last week, and lasted 2 days."""
    assert reading("We stayed for 2 days last week", WED) == (date(2023, 6, 7), date(2023, 6, 14), "week")
    assert read_event_time("I'm 2 days ago", WED).time.duration is None  # "N days ago" is no length


def test_lengths_and_vague_phrases():
    r = read_event_time("Seven years now, and I finally found my muse", THU)
    assert r.time.duration == (7, 7, "year") and r.time.start.year == 2016
    fuzzy = read_event_time("Got the tattoo a few years ago", THU)
    assert fuzzy.time.duration == (2, 5, "year") and "not a precise date" in fuzzy.note
    for text in ("I took a class recently", "It was a while ago", "I saw it the other day",
                 "I opened my shop not so long ago", "I'll travel a lot in the next few weeks"):
        r = read_event_time(text, THU)
        assert r.time is None and r.vague and "vague" in r.note  # no interval, never a precise date


def test_over_the_weekend_by_the_day_it_was_said():
    """Early in the week the weekend just gone; on the weekend, that one; on a Friday, the coming one."""
    assert reading("We painted the fence over the weekend.", MON)[:2] == (date(2023, 7, 15), date(2023, 7, 17))
    sunday, friday = datetime(2023, 7, 16, 9, tzinfo=timezone.utc), datetime(2023, 7, 21, 9, tzinfo=timezone.utc)
    assert reading("We paint the fence over the weekend.", sunday)[:2] == (date(2023, 7, 15), date(2023, 7, 17))
    assert reading("We'll paint the fence over the weekend.", friday)[:2] == (date(2023, 7, 22), date(2023, 7, 24))


def test_earlier_this_month_on_its_first_day_is_unresolved():
    r = read_event_time("I started a diet earlier this month.", datetime(2023, 6, 1, 9, tzinfo=timezone.utc))
    assert r.time is None and "names no earlier day" in r.note


def test_next_as_an_order_is_no_time_and_vague_lengths():
    for text in ("What's your next move?", "What is up next for you?", "My next project is a bench.",
                 "I'd love to try that next!", "Where will you go next time?"):
        r = read_event_time(text, WED)
        assert (r.time, r.unresolved, r.vague) == (None, [], []), text
    assert read_event_time("Next Friday I fly out.", WED).time is not None  # still a time before a weekday
    assert read_event_time("We left the next day.", WED).unresolved  # an anaphor: kept as unresolved
    for text in ("We haven't spoken in a few weeks!", "It's been a couple of days since we chatted.",
                 "I cook a lot these days."):
        r = read_event_time(text, WED)
        assert r.time is None and r.vague, text


def test_no_expression_no_event_time_and_unresolved_kept():
    assert read_event_time("Hello there, how are you?", THU).time is None  # not its own timestamp
    assert read_event_time("Have a nice day!", THU).unresolved == []  # a bare unit noun is not a time phrase
    r = read_event_time("Mornings are hard for me", THU)
    assert r.time is None and r.unresolved and "unresolved" in r.note
    assert reading("Today I feel great after the race yesterday") == (date(2023, 5, 24), date(2023, 5, 25), "day")


def test_question_readings_are_unchanged():
    """The utterance rules are tried only for utterances: a question's "last week" still means the last 7 days."""
    (e,) = TimeResolver(THU).resolve("What did we discuss last week?")
    assert (e.intervals[0][0].date(), e.intervals[0][1].date()) == (date(2023, 5, 18), date(2023, 5, 26))


def test_zone_and_aware_timestamps():
    late = datetime(2023, 5, 25, 23, 30, tzinfo=ZoneInfo("America/New_York"))  # already the 26th in UTC
    assert reading("I went yesterday", late)[0] == date(2023, 5, 24)  # the speaker's calendar, not UTC's
    with pytest.raises(ValueError, match="time-zone aware"):
        read_event_time("yesterday", datetime(2023, 5, 25))


def test_conversation_table_columns():
    utts = [Utterance(0, 1, "Ann", THU, "I went to a support group yesterday."),
            Utterance(1, 1, "Bob", THU.replace(second=1), "That's great!"),
            Utterance(2, 1, "Ann", THU.replace(second=2), "Mornings are hard."),
            Utterance(3, 1, "Bob", THU.replace(second=3), "I was there recently too.")]
    frame = utterance_frame(utts)
    assert set(EVENT_COLUMNS) <= set(frame.columns) and list(frame.columns) == list(COLUMNS)
    assert frame.loc[0, "event_start"].date() == date(2023, 5, 24) and frame.loc[0, "event_phrase"] == "yesterday"
    assert pd.isna(frame.loc[1, "event_start"]) and pd.isna(frame.loc[1, "event_note"])
    assert event_counts(frame) == {"rows": 4, "with_event_time": 1, "unresolved_no_event_time": 1, "vague_only": 1}


def test_timeless_texts_are_remembered_and_timed_ones_are_not():
    from retrieval.memory import event_time

    assert read_event_time("Nice to meet you!", THU).time is None and "Nice to meet you!" in event_time._TIMELESS
    assert read_event_time("Nice to meet you!", MON).time is None
    assert "I went yesterday" not in event_time._TIMELESS  # resolved anew against each timestamp
    assert reading("I went yesterday", MON)[0] == date(2023, 7, 16)


@pytest.mark.parametrize("text, expected", [
    ("The dentist is on the 14th.", (date(2025, 4, 14), date(2025, 4, 15), "day")),  # a plan: forward
    ("The wedding is on Friday the 2nd!", (date(2025, 5, 2), date(2025, 5, 3), "day")),
    ("I start at the new job on the 2nd of June.", (date(2025, 6, 2), date(2025, 6, 3), "day")),
    ("The race was on the 2nd.", (date(2025, 4, 2), date(2025, 4, 3), "day")),  # a story: back
    ("We adopted the cat two weeks ago.", (date(2025, 3, 20), date(2025, 3, 27), "week")),
    ("We went to Vermont in May.", (date(2024, 5, 1), date(2024, 6, 1), "month")),  # "to Vermont": no infinitive
    ("We flew back to Lisbon on the 9th.", (date(2025, 3, 9), date(2025, 3, 10), "day")),
    ("I hope to visit Vermont in May.", (date(2025, 5, 1), date(2025, 6, 1), "month")),
    ("We went hiking in the fall.", (date(2024, 9, 1), date(2024, 12, 1), "season")),
])
def test_plans_read_forward_and_stories_back(text, expected):
    """The utterance's own tense picks the side a year-less date or weekday falls on."""
    assert reading(text, datetime(2025, 4, 3, 18, tzinfo=ZoneInfo("Europe/London"))) == expected


@pytest.mark.parametrize("text, expected", [
    ("The project is due by the end of the month.", ("2023-06-30", "day")),
    ("You have until Friday to send it.", ("2023-06-16", "day")),
    ("Rent is due by July 3rd.", ("2023-07-03", "day")),
    ("It must be finished by next week.", ("2023-06-19", "week")),
])
def test_a_deadline_is_dated_by_its_last_day_not_everything_before_it(text, expected):
    e = read_event_time(text, WED).time
    assert (e.start.date().isoformat(), e.granularity, e.kind) == (*expected, "deadline") and "deadline" in e.note
    assert read_event_time("It has to be in before Friday.", WED).time.kind == "bound"  # before: any day until then


def test_the_fall_is_a_season_only_where_a_season_is_meant():
    said = datetime(2025, 3, 27, 12, tzinfo=timezone.utc)
    assert read_event_time("The hip is worn out, the fall just made it worse.", said).time is None
    assert reading("During the fall we hiked a lot.", said)[2] == "season"
    assert reading("We met last fall.", said)[:2] == (date(2024, 9, 1), date(2024, 12, 1))


def test_an_open_range_is_said_as_one_never_from_the_year_1900():
    from retrieval.memory.when_answer import render

    said = datetime(2025, 3, 22, 9, 37, tzinfo=ZoneInfo("America/New_York"))
    got = read_event_time("gonna carb load before tomorrow", said).time
    assert got.kind == "bound" and render(got, said) == "before 23 March 2025"
    race = read_event_time("gonna carb load before tomorrow's race", said).time  # the race's day, not a bound
    assert race.kind != "bound" and render(race, said) == "23 March 2025"


@pytest.mark.parametrize("text, expected", [
    # said on Thursday 25 May 2023: a time whose clause denies its event gives way to one whose clause does not
    ("He never showed on Tuesday, then turned up Wednesday at 7am.", date(2023, 5, 24)),
    ("We didn't go on Monday but on Tuesday.", date(2023, 5, 23)),
    ("It wasn't last Friday, it was yesterday.", date(2023, 5, 24)),
    ("I couldn't sleep on Monday.", date(2023, 5, 22)),  # alone, it stands: still what the utterance is about
    ("No. He came on Monday.", date(2023, 5, 22)),  # a denial in another sentence denies nothing here
    ("First day was meant to be yesterday but I ended up starting today.", date(2023, 5, 25)),
])
def test_a_time_whose_clause_denies_its_event_gives_way(text, expected):
    assert reading(text)[0] == expected


@pytest.mark.parametrize("text, said, expected", [
    # "a fall" is a tumble, "the fall" the season
    ("Dad had a fall on Thursday, he's in hospital.", datetime(2025, 3, 8, 9, tzinfo=timezone.utc),
     (date(2025, 3, 6), date(2025, 3, 7), "day")),
    ("We went in the fall of 2019.", THU, (date(2019, 9, 1), date(2019, 12, 1), "season")),
    # a comma before a subject starts a clause: "rang" does not lean "moving us to Sunday the 13th" back
    ("Removalists rang, they're moving us to Sunday the 13th.", datetime(2025, 4, 5, 9, tzinfo=timezone.utc),
     (date(2025, 4, 13), date(2025, 4, 14), "day")),
    ("Our flight today got cancelled, theyve put us on the tuesday one instead.",
     datetime(2025, 4, 21, 9, tzinfo=timezone.utc), (date(2025, 4, 22), date(2025, 4, 23), "day")),
    ("Never showed thursday. Rebooked for tuesday.", datetime(2025, 4, 19, 9, tzinfo=timezone.utc),
     (date(2025, 4, 22), date(2025, 4, 23), "day")),
])
def test_a_tumble_a_comma_splice_and_a_rebooking_read_as_people_mean_them(text, said, expected):
    assert reading(text, said) == expected


@pytest.mark.parametrize("text, expected", [
    # said on Sunday 2 March 2025 at 18:40 UTC: a game's score after a verb of scoring is no range of hours
    ("WE'RE IN THE FINAL won 3-1 this morning", (date(2025, 3, 2), date(2025, 3, 3), "day")),
    ("we drew 2-2 on saturday", (date(2025, 3, 1), date(2025, 3, 2), "day")),
    ("the meeting is 3-5pm tomorrow", (date(2025, 3, 3), date(2025, 3, 4), "day")),  # a range of hours stays one
])
def test_a_score_is_no_range_of_hours(text, expected):
    assert reading(text, datetime(2025, 3, 2, 18, 40, tzinfo=timezone.utc)) == expected
