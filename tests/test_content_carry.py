"""retrieval.memory.content_carry: a follow-up's pronoun carries the participant or the topic of the question
before it; time phrases and "they" carry nothing; a when-question takes no earlier time it did not refer to."""

from __future__ import annotations

from datetime import datetime, timezone

from retrieval.memory.content_carry import carry_content, pronouns
from retrieval.memory.query_rewrite import carry_time_reference
from retrieval.memory.question import AskedQuestion

NOW = datetime(2025, 4, 16, 9, tzinfo=timezone.utc)
SPEAKERS = ["Priya", "Jess"]


def read(question: str, history=None) -> AskedQuestion:
    return AskedQuestion.read(question, NOW, SPEAKERS, history)


def test_it_is_the_topic_and_she_is_the_participant_of_the_question_before():
    q = read("and when was it supposed to be originally?", ["When was Priya's mom's knee surgery?"])
    assert {"mom", "knee", "surgery"} <= set(q.reading.left) and "surgery" in q.reading.topic
    q = read("and when did she fly out?", ["when did jess get back from mexico city?"])
    assert q.reading.who == "Jess" and q.reading.who_role == "prior"


def test_time_phrases_and_they_are_not_pronouns_that_carry():
    assert pronouns("what did we say this week?", NOW) == (False, False)
    assert pronouns("and the session before that?", NOW) == (False, False)
    assert pronouns("which vet is it with?", NOW) == (False, True)
    def reading(text):
        return read(text).reading

    assert carry_content(["When did Priya sign the lease?"], "when did they move in?", read("x").reading, NOW,
                         reading, SPEAKERS) is None
    assert carry_content([], "which vet is it with?", read("x").reading, NOW, reading, SPEAKERS) is None


def test_a_when_question_takes_no_earlier_time_it_does_not_refer_to():
    history = ["What did we talk about on April 2nd?"]
    assert carry_time_reference(history, "when did Priya sign the lease?", NOW, beside=False).method == "unchanged"
    assert carry_time_reference(history, "what did Priya say?", NOW).carried  # a question that is not when: carried
    q = read("when did she sign the lease?", ["What did Priya say on April 2nd?"])
    assert not q.carried and q.reading.who == "Priya"
