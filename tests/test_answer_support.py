"""The "support" evidence rule (a reading several likely rows hold answers before one likelier row's other day) and
the readings it leans on: "before tomorrow's race", "race in the morning" said at night, "signed up for ... on the
23rd", "today and tomorrow", hours within one day."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from retrieval.data.conversation_log import Utterance
from retrieval.memory.conversation_table import utterance_frame
from retrieval.memory.event_time import read_event_time
from retrieval.memory.when_answer import answer_from_evidence
from retrieval.memory.when_support import PROBABILITY

EST = timezone(timedelta(hours=-4))
NOW = datetime(2025, 4, 16, 9, tzinfo=EST)


def ranked(*rows: tuple[str, datetime, float]):
    """Rows best first, each with the relevance model's probability."""
    frame = utterance_frame([Utterance(i, 1 + i, "Ann", ts, text) for i, (text, ts, _) in enumerate(rows)])
    return frame.loc[list(range(len(rows)))].assign(**{PROBABILITY: [p for *_, p in rows]})  # in ranked order


def day(a) -> tuple:
    return a.start.date().isoformat(), a.end.date().isoformat()


def test_two_rows_that_agree_outweigh_a_likelier_row():
    rows = ranked(("recap of the week. race on sunday: 52:40!!", datetime(2025, 3, 27, 21, tzinfo=EST), 0.8),
                  ("ok bed, race in the morning", datetime(2025, 3, 22, 22, 30, tzinfo=EST), 0.5),
                  ("one last easy run before tomorrow's race", datetime(2025, 3, 22, 9, 37, tzinfo=EST), 0.4))
    top = answer_from_evidence("when", rows, NOW, "top")
    assert day(top) == ("2025-03-30", "2025-03-31")  # "sunday" said on a Thursday: the nearer, the next one
    a = answer_from_evidence("when", rows, NOW, "support")
    assert day(a) == ("2025-03-23", "2025-03-24") and a.answer == "23 March 2025"
    assert a.derivation[0].startswith("evidence rule 'support': row 1, ranked 2 of 3")
    assert a.probability == 0.5  # the picked row's own: agreement does not silence the weak-evidence warning


def test_a_day_inside_a_vaguer_best_reading_answers_but_never_the_other_way():
    vague = ("biscuit's booster shot is due mid-april", datetime(2025, 4, 6, 16, tzinfo=EST))
    exact = ("biscuit's booster is booked for the 16th at 5pm", datetime(2025, 4, 10, 20, tzinfo=EST))
    a = answer_from_evidence("when", ranked((*vague, 0.46), (*exact, 0.12)), NOW, "support")
    assert a.answer == "16 April 2025"  # held by both rows: the span holds the day
    b = answer_from_evidence("when", ranked((*exact, 0.3), (*vague, 0.9)), NOW, "support")
    assert b.answer == "16 April 2025"  # the likelier vague row does not replace the exact best one


def test_one_reading_each_or_no_probabilities_answer_as_top():
    rows = ranked(("I went to the fair yesterday.", datetime(2025, 3, 10, 9, tzinfo=EST), 0.6),
                  ("We flew home on Friday.", datetime(2025, 3, 20, 9, tzinfo=EST), 0.5))
    assert day(answer_from_evidence("when", rows, NOW, "support")) == ("2025-03-09", "2025-03-10")
    tie = ranked(("I went to the fair yesterday.", datetime(2025, 3, 10, 9, tzinfo=EST), 0.5),
                 ("We flew home on Friday.", datetime(2025, 3, 20, 9, tzinfo=EST), 0.5))
    assert day(answer_from_evidence("when", tie, NOW, "support")) == ("2025-03-09", "2025-03-10")
    bare = rows.drop(columns=[PROBABILITY])
    assert day(answer_from_evidence("when", bare, NOW, "support")) == ("2025-03-09", "2025-03-10")


def test_which_month_counts_days_of_one_month_as_one_reading():
    rows = ranked(("The gig was on 2 June.", datetime(2025, 7, 1, 9, tzinfo=EST), 0.6),
                  ("We were at the gig on the 20th of May.", datetime(2025, 7, 1, 10, tzinfo=EST), 0.4),
                  ("That gig on the 28th of May was loud.", datetime(2025, 7, 2, 10, tzinfo=EST), 0.3))
    assert answer_from_evidence("month", rows, NOW.replace(month=8), "support").answer == "May 2025"


def test_readings_the_rule_leans_on():
    def read(text, said):
        return read_event_time(text, said).time

    t = read("im heading out for one last easy run before tomorrow's race", datetime(2025, 3, 22, 9, 37, tzinfo=EST))
    assert (t.start.date().isoformat(), t.granularity) == ("2025-03-23", "day")  # not "before tomorrow": the race's
    assert read("i'll do it before tomorrow", datetime(2025, 3, 22, 9, tzinfo=EST)).start.year == 1900  # a bound
    night, noon = datetime(2025, 3, 22, 22, 30, tzinfo=EST), datetime(2025, 3, 22, 14, tzinfo=EST)
    assert read("ok bed, race in the morning", night).start.day == 23  # the nearer morning: the next
    assert read("race in the morning", noon).start.day == 22
    assert read("i ran in the morning", night).start.day == 22  # a past tense leans back
    plan = read("also i signed up for the prospect park 10k on the 23rd", datetime(2025, 3, 7, 23, tzinfo=EST))
    assert plan.start.date().isoformat() == "2025-03-23"  # signing up is for a race to come
    both = read("Today and tomorrow like we planned.", datetime(2025, 3, 22, 9, tzinfo=EST))
    assert (both.start.day, both.end.day, both.phrase) == (22, 24, "today and tomorrow")
    apart = read("we worked monday and wednesday", datetime(2025, 3, 22, 9, tzinfo=EST))
    assert apart.granularity == "day"  # not one stretch: the days are not next to each other


def test_hours_within_a_day_answer_with_the_day():
    said = datetime(2025, 4, 2, 12, 31, tzinfo=EST)
    a = answer_from_evidence("when", ranked(("spectrum is coming the day after tomorrow between 8 and noon", said,
                                             0.5)), NOW, "support")
    assert (a.answer, a.granularity, day(a)) == ("4 April 2025", "day", ("2025-04-04", "2025-04-05"))


def test_a_likely_row_that_says_another_time_is_named_beside_the_answer():
    from retrieval.memory.relevance.confidence import answer_is_doubted, rival_note

    adopted = ("ok noodle story. we adopted her a fortnight ago from the greyhound rescue",
               datetime(2025, 3, 13, 21, 45, tzinfo=EST))
    sneakers = ("also noodle ate one of sams sneakers this morning", datetime(2025, 3, 8, 10, 16, tzinfo=EST))
    a = answer_from_evidence("when", ranked((*sneakers, 0.74), (*adopted, 0.52)), NOW, "support")
    assert a.answer == "8 March 2025" and a.rival is not None
    said, row, phrase, p = a.rival
    assert (row, phrase, p) == (1, "a fortnight ago", 0.52) and said.endswith("2025")
    note = rival_note(a)
    assert note.startswith("conflicting evidence: row 1") and "'a fortnight ago'" in note and "8 March 2025" in note
    assert answer_is_doubted(a) is True
    # under even odds, a time inside the answer's, or no time of its own: nothing to say
    for other in ((*adopted, 0.49), ("noodle was so good on saturday morning", datetime(2025, 3, 9, tzinfo=EST), 0.6),
                  ("noodle is the best dog", datetime(2025, 3, 20, tzinfo=EST), 0.9)):
        b = answer_from_evidence("when", ranked((*sneakers, 0.95), other), NOW, "support")
        assert b.answer == "8 March 2025" and b.rival is None and rival_note(b) is None
        assert answer_is_doubted(b) is False
    assert answer_is_doubted(answer_from_evidence("when", ranked(sneakers + (0.9,)).drop(columns=[PROBABILITY]),
                                                  NOW, "support")) is None  # no model: nothing said
