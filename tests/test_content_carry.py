"""retrieval.memory.content_carry: a follow-up's pronoun carries the participant or the topic of the question
before it; time phrases and "they" carry nothing; a when-question takes no earlier time it did not refer to."""

from __future__ import annotations

from datetime import datetime, timezone

from conftest import chat_memory

from retrieval.memory.content_carry import carry_content, pronoun_event, pronouns
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


def test_an_event_named_by_a_pronoun_alone_is_the_earlier_questions():
    history = ["When did Bob get the job offer?"]
    assert pronoun_event("that", history) == "When did Bob get the job offer?"
    assert pronoun_event("it", ["ok", *history, "on 10 March 2025"]) == "When did Bob get the job offer?"
    assert pronoun_event("he start", history) == "he start"  # carried as any question's pronouns are
    assert pronoun_event("that", []) == "that" and pronoun_event("that", None) == "that"


def test_a_follow_up_length_measures_from_the_earlier_questions_event(tmp_path, tiny_backbone):
    memory = chat_memory(tmp_path, tiny_backbone, [
        ("2025-03-11T18:00:00+00:00", "Bob", "Linden called me yesterday with an offer!"),
        ("2025-03-11T18:02:00+00:00", "Bob", "Senior analyst. I start on April 7th."),
        ("2025-03-12T09:00:00+00:00", "Ann", "The plumber comes on the 20th.")])
    now = datetime(2025, 4, 16, tzinfo=timezone.utc)
    r = memory.ask("how many days after that did he start?", history=["When did Bob get the offer?"], now=now)
    assert r.answer.duration == (28, 28, "day")  # 10 March to 7 April
    assert "When did Bob get the offer?" in r.answer.derivation[0]
