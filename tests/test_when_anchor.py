"""An event dated by another event: "the day he goes to rehab", "on my last day" (retrieval.memory.when_anchor)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pandas as pd

from retrieval.data.conversation_log import Utterance
from retrieval.memory.conversation_table import utterance_frame
from retrieval.memory.when_anchor import anchor_phrase, anchor_question, anchored_answer
from retrieval.memory.when_answer import answer_from_evidence
from retrieval.memory.when_support import PROBABILITY

AEDT = timezone(timedelta(hours=11))
NOW = datetime(2025, 4, 30, 9, tzinfo=AEDT)
CHAT = [("Ben", "whens your last day", datetime(2025, 3, 30, 10, 16, tzinfo=AEDT)),
        ("Ben", "thursday 10 april. start at harbourline monday the 14th", datetime(2025, 3, 30, 10, 17, tzinfo=AEDT)),
        ("Ravi", "my sister priya is flying in from perth the day he goes to rehab", datetime(2025, 3, 16, 15, 29,
                                                                                          tzinfo=AEDT)),
        ("Ben", "farewell drinks will be on my last day, at the royal", datetime(2025, 4, 5, 23, 44, tzinfo=AEDT)),
        ("Ravi", "dad went to rehab friday btw. priyas here now", datetime(2025, 3, 25, 12, 48, tzinfo=AEDT))]


def frame() -> pd.DataFrame:
    return utterance_frame([Utterance(i, 1 + i, s, ts, t) for i, (s, t, ts) in enumerate(CHAT)])


def test_anchor_phrases_are_a_days_noun_with_what_happened_on_it():
    assert anchor_phrase(CHAT[2][1]) == ("the day he goes to rehab", "he goes to rehab", 0)
    assert anchor_phrase(CHAT[3][1]) == ("my last day", "my last day", 0)
    assert anchor_phrase("the morning of the race i was sick") == ("the morning of the race", "the race", 0)
    assert anchor_phrase("she flies home the day after the recital") == ("the day after the recital", "the recital", 1)
    assert anchor_phrase("the night before the race i slept badly")[1:] == ("the race", -1)
    assert anchor_phrase("the night we got back from lisbon, we ordered pizza")[1] == "we got back from lisbon"
    assert anchor_phrase("it's on his birthday")[1] == "his birthday"
    for said in ("we met the day before", "the other day i saw him", "the next morning we left", "the day was long",
                 "my day off was great", "i was out for my whole day", "it took all day"):
        assert anchor_phrase(said) is None, said
    assert anchor_question("my last day", "Ben") == "when Ben's last day?"
    assert anchor_question("we got back", "Maya") == "when Maya got back?"


def ask(rows_by_question: dict[str, list[int]], f: pd.DataFrame):
    """An evidence function over fixed rankings (row ids best first, each with probability 0.6)."""
    asked = []

    def evidence(question: str) -> pd.DataFrame:
        asked.append(question)
        ids = rows_by_question.get(question, [])
        return f.loc[ids].assign(**{PROBABILITY: [0.6] * len(ids)})
    return evidence, asked


def test_a_row_without_a_time_takes_the_day_of_the_event_it_names():
    f = frame()
    drinks = answer_from_evidence("when", f.loc[[3]].assign(**{PROBABILITY: [0.5]}), NOW, "support", f,
                                  question="when were ben's farewell drinks?")
    assert drinks.source == "timestamp" and drinks.answer == "5 April 2025"
    evidence, asked = ask({"when Ben's last day?": [3, 1, 0]}, f)
    a = anchored_answer(drinks, evidence, NOW, "support", f)
    assert asked == ["when Ben's last day?"]
    assert a.answer == "10 April 2025" and a.row == 1 and a.probability == 0.5 * 0.6
    assert a.derivation[0].startswith("row 3 (Ben, said 2025-04-05") and "'my last day'" in a.derivation[0]
    rehab = answer_from_evidence("when", f.loc[[2]].assign(**{PROBABILITY: [0.4]}), NOW, "support", f,
                                 question="when did priya fly in?")
    evidence, _ = ask({"when he goes to rehab?": [4]}, f)
    assert anchored_answer(rehab, evidence, NOW, "support", f).answer == "21 March 2025"


def test_the_day_after_an_event_is_the_day_after_its_day():
    f = utterance_frame([Utterance(0, 1, "Nadia", datetime(2025, 2, 27, 21, tzinfo=AEDT),
                                   "the recital is saturday the 29th of march, 2pm"),
                         Utterance(1, 2, "Nadia", datetime(2025, 2, 27, 21, 5, tzinfo=AEDT),
                                   "then she flies home the day after the recital")])
    home = answer_from_evidence("when", f.loc[[1]].assign(**{PROBABILITY: [0.7]}), NOW, "support", f,
                                question="when did she fly home?")
    assert home.answer == "27 February 2025"  # the day it was said: the row states no time of its own
    evidence, asked = ask({"when the recital?": [0]}, f)
    a = anchored_answer(home, evidence, NOW, "support", f)
    assert asked == ["when the recital?"] and a.answer == "30 March 2025" and a.granularity == "day"
    assert a.derivation[-1] == "the day after it: 30 March 2025"


def test_a_row_that_states_its_time_or_an_anchor_nobody_dates_keeps_the_answer():
    f = frame()
    stated = answer_from_evidence("when", f.loc[[4]], NOW, "top", f, question="when did dad go to rehab?")
    evidence, asked = ask({}, f)
    assert anchored_answer(stated, evidence, NOW, "top", f) is stated and asked == []  # not re-read
    drinks = answer_from_evidence("when", f.loc[[3]], NOW, "top", f, question="when were the drinks?")
    evidence, asked = ask({"when Ben's last day?": [0]}, f)  # only a row that states no time: nothing to date it by
    assert anchored_answer(drinks, evidence, NOW, "top", f) is drinks and asked == ["when Ben's last day?"]
