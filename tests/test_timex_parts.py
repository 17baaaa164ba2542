"""The parts of the time grammar, one at a time: number words, the calendar (ISO weeks, Easter, two-digit years),
the tense a sentence leans to, the conventions that tell readings apart, the context deciding a reading (and saying
so in its choices), and times that name no day: declined with the reason, never guessed."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from retrieval.timex import DEFAULT, QUESTION, UTTERANCE, Context, read, resolve_phrase
from retrieval.timex.calendar import add_months, easter, iso_week, nth_weekday, two_digit_year, weeks_of
from retrieval.timex.numbers import number_words_back, words_to_digits
from retrieval.timex.tense import lean_of

UTC = ZoneInfo("UTC")
NEW_YORK, PARIS = ZoneInfo("America/New_York"), ZoneInfo("Europe/Paris")
SATURDAY = datetime(2023, 10, 21, 15, tzinfo=NEW_YORK)


def days(text: str, reference: datetime, **options) -> tuple[str, str]:
    """The phrase's interval as (first day, day after the last) ISO dates."""
    m = resolve_phrase(text, reference, **options)
    assert m is not None, text
    return m.interval[0].date().isoformat(), m.interval[1].date().isoformat()


def the_mention(text: str, context: Context, phrase: bool = True):
    (m,) = read(text, context, phrase=phrase).mentions
    return m


# ---- numbers ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, expected", [
    ("nineteen seventy eight", "1978"),
    ("two thousand and eighteen", "2018"),
    ("sessions one and three", "sessions 1 and 3"),
    ("nineteen oh one", "1901"),
    ("twenty twenty", "2020"),
    ("September the twenty-first nineteen seventy eight", "September the 21st 1978"),
    ("one hundred sixty seven days ago", "167 days ago"),
    ("oh well, see you at eight", "oh well, see you at 8"),  # "oh" alone is the interjection
    ("put us on the tuesday one instead", "put us on the tuesday one instead"),  # a pronoun, not the 1st
    ("the morning one, at one", "the morning one, at 1"),
    ("tuesday one pm", "tuesday 1 pm"),
])
def test_number_words_become_digits(text, expected):
    assert words_to_digits(text) == expected


def test_a_questions_numbers_in_words_come_back_for_searching():
    question = "When was Marcus's first day at the new job, three weeks in?"
    assert number_words_back(words_to_digits(question.lower()), question) == question.lower()
    assert number_words_back("the 1st day", "the 1st day, the first") == "the 1st day"  # written in digits: kept


def test_number_words_read_as_a_date():
    m = resolve_phrase("September the twenty-first nineteen seventy eight", datetime(2020, 1, 1, tzinfo=UTC))
    assert (m.interval[0].date(), m.grain) == (date(1978, 9, 21), "day")


# ---- calendar --------------------------------------------------------------------------------------------------------
def test_weeks_belong_to_the_year_of_their_thursday():
    assert iso_week(2015, 1) == (datetime(2014, 12, 29), datetime(2015, 1, 5))
    assert days("the first week of 2015", datetime(2019, 5, 5, tzinfo=UTC)) == ("2014-12-29", "2015-01-05")
    assert iso_week(2020, 53) == (datetime(2020, 12, 28), datetime(2021, 1, 4))  # 2020 has 53 weeks
    assert iso_week(2021, 53) is None and len(weeks_of((datetime(2021, 1, 1), datetime(2022, 1, 1)))) == 52
    # July 2020 starts on a Wednesday: its first week is June 29 - July 5 (Thursday July 2)
    assert weeks_of((datetime(2020, 7, 1), datetime(2020, 8, 1)))[0][0] == datetime(2020, 6, 29)


def test_week_53_of_a_year_with_52_is_declined():
    m = the_mention("week 53 of 2021", Context(datetime(2019, 5, 5, tzinfo=UTC)))
    assert m.interval is None and m.unresolved


@pytest.mark.parametrize("year, expected", [(2019, date(2019, 4, 21)), (2024, date(2024, 3, 31)),
                                            (2000, date(2000, 4, 23)), (2038, date(2038, 4, 25))])
def test_easter(year, expected):
    assert easter(year) == expected
    m = resolve_phrase(f"Easter {year}", datetime(2019, 5, 5, tzinfo=UTC))
    assert (m.interval[0].date(), m.interval[1].date(), m.grain) == (expected, expected + timedelta(days=1), "day")


@pytest.mark.parametrize("yy, reference_year, ahead, expected", [
    (27, 2016, 20, 2027), (40, 2016, 20, 1940), (36, 2016, 20, 2036), (37, 2016, 20, 1937),
    (99, 2016, 20, 1999), (0, 2016, 20, 2000), (16, 2016, 0, 2016), (17, 2016, 0, 1917), (5, 1990, 20, 2005),
])
def test_two_digit_year(yy, reference_year, ahead, expected):
    assert two_digit_year(yy, reference_year, ahead) == expected


def test_calendar_arithmetic_clips_and_counts():
    assert add_months(datetime(2019, 1, 31), 1) == datetime(2019, 2, 28)
    assert add_months(datetime(2020, 1, 31), 1) == datetime(2020, 2, 29)
    assert add_months(datetime(2020, 3, 15), -15) == datetime(2018, 12, 15)
    assert nth_weekday(2019, 2, 6, 5) is None  # February 2019 has four Sundays
    assert nth_weekday(2019, 3, 6, 5) == date(2019, 3, 31)
    assert nth_weekday(2019, 3, 6, -1) == date(2019, 3, 31)


# ---- tense -----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sentence, phrase, lean", [
    ("I'll go back Friday", "friday", "future"),
    ("the race was on the 5th", "the 5th", "past"),
    ("Hudson's Bay said it will redeem shares on Oct. 31", "oct. 31", "future"),
    ("Telerate shares fell 50 cents on Friday to close at $20", "friday", "past"),
    ("the dentist is on the 14th", "the 14th", "future"),
    ("we agreed to buy it in January", "january", "future"),
    ("the meeting on Friday", "friday", None),
    ("the vet is booked for the 16th", "the 16th", "future"),
    ("the surgery got pushed to April 1st", "april 1st", "future"),
    ("she lands on the 25th", "the 25th", "future"),
    ("sink gets hooked up tuesday", "tuesday", "future"),
    ("I get paid friday", "friday", "future"),
    ("we got married on friday", "friday", "past"),
    ("he was picked up on monday", "monday", "past"),
])
def test_the_lean_of_a_sentence(sentence, phrase, lean):
    at = sentence.lower().index(phrase)
    found, why = lean_of(sentence, (at, at + len(phrase)))
    assert found == lean, why
    if lean is None:
        assert why == "no tense cue near the phrase"


def test_an_abbreviation_does_not_end_the_clause():
    sentence = "He will fly to the U.S. on Friday"
    at = sentence.lower().index("friday")
    assert lean_of(sentence, (at, at + 6))[0] == "future"


# ---- conventions -----------------------------------------------------------------------------------------------------
def test_last_friday_said_on_a_saturday():
    assert days("last Friday", SATURDAY) == ("2023-10-13", "2023-10-14")  # the Friday of last week
    assert days("last Friday", SATURDAY, conventions=QUESTION) == ("2023-10-20", "2023-10-21")  # the latest one
    m = resolve_phrase("last Friday", SATURDAY, conventions=QUESTION)
    assert any(c.what == "weekday" and "question" in c.why for c in m.choices), m.choices


def test_last_week_calendar_or_the_seven_days():
    assert days("last week", SATURDAY) == ("2023-10-09", "2023-10-16")  # Monday to Sunday before this week
    assert days("last week", SATURDAY, conventions=QUESTION) == ("2023-10-14", "2023-10-22")  # and today
    assert days("last week", SATURDAY, conventions=UTTERANCE) == ("2023-10-14", "2023-10-21")
    m = resolve_phrase("last week", SATURDAY, conventions=QUESTION)
    assert m.grain == "week" and [c.what for c in m.choices] == ["last week"]


def test_a_count_of_months_back_names_the_month_or_the_day():
    assert days("5 months ago", SATURDAY) == ("2023-05-01", "2023-06-01")
    assert resolve_phrase("5 months ago", SATURDAY).grain == "month"
    assert days("5 months ago", SATURDAY, conventions=QUESTION) == ("2023-05-01", "2023-06-01")  # QUESTION: unit too
    by_day = replace(DEFAULT, ago="day")
    assert days("5 months ago", SATURDAY, conventions=by_day) == ("2023-05-21", "2023-05-22")
    assert resolve_phrase("5 months ago", SATURDAY, conventions=by_day).grain == "day"


def test_parts_of_the_day_take_the_conventions_hours():
    m = resolve_phrase("this morning", SATURDAY)
    assert (m.interval[0].hour, m.interval[1].hour) == (8, 12)
    m = resolve_phrase("this morning", SATURDAY, conventions=QUESTION)
    assert (m.interval[0].hour, m.interval[1].hour) == (0, 12)


def test_the_third_week_of_a_month_in_sevens():
    assert days("the third week of July 2020", SATURDAY) == ("2020-07-13", "2020-07-20")
    assert days("the third week of July 2020", SATURDAY, conventions=QUESTION) == ("2020-07-15", "2020-07-22")


@pytest.mark.parametrize("text, found", [
    ("surgery is scheduled for the 26th", "for the 26th"), ("he said the 15th, once the tenant is out", "the 15th"),
    ("keys are ready Friday instead of the 15th", "of the 15th"), ("booked for the 16th at 5pm", "for the 16th at 5pm"),
    ("his 15th birthday", None), ("on the 5th floor", None), ("the 3rd time this week", None),
    ("the dentist is on the 20th for a cleaning", "on the 20th"), ("the 20th for a cleaning", None),
])
def test_the_nth_alone_is_a_day_of_the_month_unless_it_counts_something(text, found):
    mentions = read(text, Context(SATURDAY, conventions=UTTERANCE)).mentions
    assert [m.text for m in mentions if m.text.endswith(("th", "pm", "rd"))][:1] == ([found] if found else [])


def test_a_numeric_date_in_day_month_order():
    assert days("3/4/2020", SATURDAY) == ("2020-03-04", "2020-03-05")
    assert days("3/4/2020", SATURDAY, conventions=replace(DEFAULT, numeric_order="DMY")) == ("2020-04-03",
                                                                                             "2020-04-04")


# ---- the context decides, and says so --------------------------------------------------------------------------------
FEBRUARY = datetime(2019, 2, 10, 9, tzinfo=PARIS)  # the last December is nearer than the next


@pytest.mark.parametrize("sentence, year, lean", [
    ("The contract will expire in December", 2019, "future"),
    ("The contract expired in December", 2018, "past"),
    ("We met in December", 2018, "past"),
])
def test_the_tense_of_the_sentence_places_a_month(sentence, year, lean):
    (m,) = read(sentence, Context(FEBRUARY)).times
    assert m.interval[0].replace(tzinfo=None) == datetime(year, 12, 1) and m.grain == "month"
    assert [(c.what, c.value) for c in m.choices] == [("lean", lean)]
    # the phrase alone, with the sentence as its context, reads the same
    alone = resolve_phrase("December", FEBRUARY, sentence=sentence)
    assert alone.interval == m.interval and alone.choices == m.choices


def test_a_lean_given_by_the_context_overrides_the_tense():
    m = resolve_phrase("December", FEBRUARY, sentence="The contract expired in December", lean="future")
    assert m.interval[0].year == 2019 and m.choices[0].why.endswith("the context says so")


@pytest.mark.parametrize("reference, expected, which", [
    (datetime(2019, 2, 5, tzinfo=UTC), date(2018, 12, 14), "the last one"),
    (datetime(2019, 10, 1, tzinfo=UTC), date(2019, 12, 14), "the next one"),
    (datetime(2019, 6, 10, tzinfo=UTC), date(2018, 12, 14), "the last one"),  # 178 days back, 187 ahead
])
def test_a_date_without_tense_is_the_nearest_one(reference, expected, which):
    m = the_mention("Dec. 14", Context(reference))
    assert m.interval[0].date() == expected and m.grain == "day"
    assert [(c.what, c.value) for c in m.choices] == [("nearest", which)]


def test_a_date_in_a_sentence_without_tense_is_the_nearest_one():
    (m,) = read("the meeting on Dec. 14", Context(datetime(2019, 2, 5, tzinfo=UTC))).times
    assert m.interval[0].date() == date(2018, 12, 14) and m.choices[0].what == "nearest"


def test_a_mention_leaves_out_the_sentence_period():
    (m,) = read("We met on Friday.", Context(datetime(2019, 6, 12, tzinfo=UTC))).mentions
    assert m.text == "friday" and m.span == (10, 16)


# ---- declined, never guessed -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, reference, reason", [
    ("February 30", datetime(2019, 1, 31, tzinfo=UTC), "is no date"),
    ("2/29/2019", datetime(2019, 1, 31, tzinfo=UTC), "2019-02-29 is no date"),
    ("April 31", datetime(2019, 6, 10, tzinfo=UTC), "is no date"),
    ("the fifth Sunday", datetime(2019, 2, 5, tzinfo=UTC), "none in the reference's own month"),  # four Sundays
    ("the fifth Sunday of February 2019", datetime(2019, 2, 5, tzinfo=UTC), "no such date"),
])
def test_a_time_that_names_no_day_is_declined(text, reference, reason):
    m = the_mention(text, Context(reference))
    assert m.interval is None and m.grain is None and reason in m.unresolved, m.unresolved
    assert the_mention(text, Context(reference), phrase=False).unresolved == m.unresolved  # inside a text too
    assert resolve_phrase(text, reference) is None


def test_the_fifth_sunday_is_placed_where_the_month_has_one():
    assert days("the fifth Sunday", datetime(2019, 3, 5, tzinfo=UTC)) == ("2019-03-31", "2019-04-01")
    assert days("the fifth Sunday", datetime(2019, 2, 5, tzinfo=UTC), lean="future") == ("2019-03-31", "2019-04-01")


def test_a_naive_reference_or_an_unknown_lean_is_refused():
    with pytest.raises(ValueError, match="time-zone aware"):
        Context(datetime(2019, 1, 1))
    with pytest.raises(ValueError, match="time-zone aware"):
        resolve_phrase("tomorrow", datetime(2019, 1, 1))
    with pytest.raises(ValueError, match="lean"):
        Context(datetime(2019, 1, 1, tzinfo=UTC), lean="soon")


@pytest.mark.parametrize("text, read_as", [
    ("When's Leo's last day at Kessler?", []),  # someone's event, found in the conversation
    ("It was our last night in Lisbon.", []),
    ("Her first week at the clinic went well.", []),
    ("What did we discuss last week?", ["last week"]),  # no possessive: a period
    ("What did we say on the last day of April?", ["the last day of april"]),
])
def test_an_ordinal_unit_after_a_possessive_is_an_event_not_a_period(text, read_as):
    assert [m.text for m in read(text, Context(SATURDAY, conventions=QUESTION)).mentions] == read_as


def test_next_month_of_the_year_said_in_that_month_is_next_years():
    assert days("next March", datetime(2024, 3, 10, 3, tzinfo=NEW_YORK)) == ("2025-03-01", "2025-04-01")
    assert days("next May", datetime(2024, 3, 10, tzinfo=NEW_YORK)) == ("2024-05-01", "2024-06-01")


# ---- a count of weeks on from a day (British usage) ------------------------------------------------------------------
FRIDAY_EVENING = datetime(2025, 2, 14, 20, tzinfo=UTC)


@pytest.mark.parametrize("text, first", [
    ("the gig is a fortnight tonight", "2025-02-28"),
    ("see you a week today", "2025-02-21"),
    ("back two weeks tomorrow", "2025-03-01"),
    ("the match is a week on friday", "2025-02-28"),  # the coming Friday, then a week on
    ("mam is coming up this day next week", "2025-02-21"),
    ("same time next week?", "2025-02-21"),
    ("this day last month", "2025-01-14"),
    ("the paddy's day parade", "2025-03-17"),
])
def test_a_count_of_weeks_on_from_a_day_is_that_day_weeks_later(text, first):
    m = read(text, Context(FRIDAY_EVENING, conventions=UTTERANCE)).mentions[0]
    assert m.interval[0].date().isoformat() == first and m.grain in ("day", "part_of_day")


@pytest.mark.parametrize("text", ["I work 2 hours tomorrow", "we were there a week tuesday", "3 days friday"])
def test_other_lengths_beside_a_day_stay_two_phrases(text):
    assert len(read(text, Context(FRIDAY_EVENING, conventions=UTTERANCE)).mentions) == 2
