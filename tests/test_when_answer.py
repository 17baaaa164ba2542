"""When-questions: recognised, answered from the evidence's event time (else its timestamp), through ask too."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from retrieval.data.conversation_log import Utterance
from retrieval.memory import temporal_memory
from retrieval.memory.conversation_table import ConversationTable, utterance_frame
from retrieval.memory.when_answer import answer_from_evidence, pick_evidence, question_kind

NOW = datetime(2023, 10, 22, 10, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def tiny_encoder(tiny_backbone):
    from models.dual_encoder import DualEncoder

    return DualEncoder.from_backbone(tiny_backbone)


@pytest.mark.parametrize("question, kind", [
    ("When did Caroline go to the LGBTQ support group?", "when"),
    ("Nice. When was Jon in Paris?", "when"),
    ("What date did Maria donate her car?", "when"),
    ("Which night did we go to the fado bar?", "when"),  # a part of the day names its day
    ("On what evening was the concert?", "when"),
    ("How long ago was Caroline's 18th birthday?", "ago"),
    ("How long has Melanie been practicing art?", "how_long"),
    ("How many years ago did she graduate?", "ago"),
    ("How many months has he been running?", "how_long"),
    ("How many weeks passed between Ann adopting Rex and Fido?", "between"),
    ("How long did Bob work at the bank before he quit?", "between"),
    ("Which month did Jon host the competition?", "month"),
    ("In what year did John get Max?", "year"),
    ("What weekend was Ann down in Kilkenny?", "weekend"),
    ("Over which weekend did they move?", "weekend"),
    ("What did Caroline say about the support group?", None),
    ("Who did Maria have dinner with on May 3, 2023?", None),
    ("and when did she fly out?", "when"),  # a follow-up opens with a conjunction
    ("OK so, how long ago was that?", "ago"),
    ("And what did he say?", None),
])
def test_question_kind(question, kind):
    assert question_kind(question) == kind


def frame_of(*texts_and_times):
    return utterance_frame([Utterance(i, 1 + i // 2, "Ann" if i % 2 == 0 else "Bob", ts, text)
                            for i, (text, ts) in enumerate(texts_and_times)])


SAID = datetime(2023, 6, 9, 19, 55, tzinfo=timezone.utc)  # a Friday


@pytest.mark.parametrize("text, kind, answer, granularity", [
    ("I went to a support group yesterday.", "when", "8 June 2023", "day"),
    ("I told you about my school event last week.", "when", "the week before 9 June 2023", "week"),
    ("Guess what I did this week? I applied!", "when", "the week of 5 June 2023", "week"),
    ("Last weekend I joined a mentorship program.", "when", "the weekend before 9 June 2023", "weekend"),
    ("We're going camping next month.", "when", "July 2023", "month"),
    ("We're going camping next month.", "year", "July 2023", "month"),  # never finer, nor a day
    ("I read that book last year.", "when", "2022", "year"),
    ("Our trip last summer was great.", "when", "summer 2022", "season"),
    ("Got the tattoo a few years ago.", "when", "a few years before 9 June 2023", "fuzzy"),
    ("I went to a support group yesterday.", "month", "June 2023", "day"),
    ("The hen is in Kilkenny on Saturday the 24th.", "weekend", "the weekend of 24 June 2023", "weekend"),
    ("We're away on Monday the 12th.", "weekend", "the weekend of 10 June 2023", "weekend"),  # a long weekend
    ("A friend made it for my 18th birthday ten years ago.", "ago", "10 years ago", "year"),
    ("I've known these friends for 4 years.", "how_long", "4 years", "year"),
])
def test_answer_forms(text, kind, answer, granularity):
    a = answer_from_evidence(kind, frame_of((text, SAID)), NOW)
    assert (a.answer, a.granularity, a.source) == (answer, granularity, "event_time")
    assert a.evidence is not None and "resolved against its timestamp" in a.derivation[0]


def test_derivation_names_a_lower_ranked_row():
    frame = frame_of(("That's great!", SAID), ("I went to a support group yesterday.", SAID + timedelta(seconds=1)))
    a = answer_from_evidence("when", frame, NOW, "stated")
    assert a.answer == "8 June 2023" and "ranked 2 of 2" in a.derivation[0]


def test_no_expression_answers_with_the_timestamp_and_says_so():
    a = answer_from_evidence("when", frame_of(("I just got accepted for the internship!", SAID)), NOW)
    assert a.answer == "9 June 2023" and a.source == "timestamp" and "states no time of its own" in a.derivation[0]
    assert (a.start, a.end) == (SAID.replace(hour=0, minute=0), SAID.replace(hour=0, minute=0) + timedelta(days=1))
    none = answer_from_evidence("how_long", frame_of(("I love painting.", SAID)), NOW)
    assert none.answer is None and "no length" in none.derivation[-1]


def test_evidence_rules():
    later = [SAID + timedelta(seconds=i) for i in range(4)]
    frame = frame_of(("I went to the fair yesterday.", later[0]), ("Wow, that sounds great!", later[1]),
                     ("My cat is cute.", later[2]), ("I ran last week.", later[3]))
    ranked = frame.loc[[1, 2, 3]]  # the reply first: it states nothing
    assert pick_evidence(ranked, "top").name == 1
    assert pick_evidence(ranked, "stated").name == 3
    assert pick_evidence(ranked, "stated", depth=2).name == 1  # row 3 lies deeper: the first row answers
    # stated_shared: a stated row that shares no word with the question does not answer; without one, as stated
    swim = frame_of(("Lovely cat!", later[0]), ("Sunny out.", later[1]), ("I bought a cat bed yesterday.", later[2]),
                    ("I swam in the lake last week.", later[3]))
    shuffled = swim.loc[[1, 3, 2]]
    assert pick_evidence(shuffled, "stated_shared", question="When did Bob go swimming in the lake?").name == 3
    assert pick_evidence(shuffled, "stated_shared", question="When did Ann buy the cat bed?").name == 2
    assert pick_evidence(shuffled, "stated_shared", question="When did Ann paint?").name == 1  # none shares
    assert pick_evidence(shuffled, "stated_shared").name == 3  # no question: as stated
    # a stated row less about the question than the first row does not answer: the first does
    lake = frame_of(("The lake trip with my kayak was fun.", later[0]), ("Sunny out.", later[1]),
                    ("I visited the lake yesterday.", later[2]))
    assert pick_evidence(lake.loc[[0, 2]], "stated_shared", question="When was the kayak trip on the lake?").name == 0
    assert pick_evidence(lake.loc[[0, 2]], "stated_shared", question="When did Ann visit the lake?").name == 2
    with pytest.raises(ValueError, match="evidence rule"):
        pick_evidence(ranked, "best")
    with pytest.raises(ValueError, match="evidence depth"):
        pick_evidence(ranked, "stated", depth=0)


def memory_of(encoder):
    t0 = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
    utts = [Utterance(0, 1, "Caroline", t0, "I went to a LGBTQ support group yesterday and it was so powerful."),
            Utterance(1, 1, "Melanie", t0 + timedelta(seconds=1), "Wow, that's cool, Caroline!"),
            Utterance(2, 2, "Melanie", t0 + timedelta(days=17), "I ran a charity race last Saturday."),
            Utterance(3, 2, "Caroline", t0 + timedelta(days=17, seconds=1), "That sounds rewarding.")]
    return temporal_memory.TemporalMemory(ConversationTable.from_utterances(utts, encoder, None, turns=True))


def test_ask_answers_when(tiny_encoder):
    memory = memory_of(tiny_encoder)
    r = memory.ask("When did Melanie run a charity race?")
    assert r.answer is not None and r.answer.answer == "20 May 2023" and r.answer.source == "event_time"
    assert any(op["op"] == "rank" for op in r.plan.ops) and any("asks when" in n for n in r.plan.notes)
    d = r.to_dict()["answer"]
    assert d["start"].startswith("2023-05-20") and d["granularity"] == "day" and d["evidence"]
    assert memory.ask("What did Melanie say about the race?").answer is None  # not a when-question


def test_ask_answers_a_length_between_two_events(tiny_encoder):
    r = memory_of(tiny_encoder).ask("How many days passed between the support group and the charity race?")
    assert r.answer.kind == "between" and r.answer.duration is not None and r.answer.duration[2] == "day"
    assert " day" in r.answer.answer and len(r.answer.derivation) == 3


def test_event_time_filter(tiny_encoder):
    memory = memory_of(tiny_encoder)
    r = memory.ask("When did Caroline go to the support group in May?")
    # the answer's evidence keeps the rows whose event time meets May (a note gives its ops); the rows returned are the
    # plan's own: said in May
    assert any('"op": "overlaps"' in note for note in r.plan.notes) and r.answer.answer == "7 May 2023"
    assert not any(op["op"] == "overlaps" for op in r.plan.ops) and (r.rows["timestamp"].dt.month == 5).all()


def test_ask_command_json(tmp_path, tiny_backbone, capsys):
    log = tmp_path / "chat.jsonl"
    log.write_text("\n".join(json.dumps(x) for x in [
        {"speaker": "Ann", "text": "I adopted a puppy two days ago!", "timestamp": "2023-05-08T10:00:00+00:00"},
        {"speaker": "Bob", "text": "Congratulations!", "timestamp": "2023-05-08T10:00:05+00:00"}]))
    code = temporal_memory.main(["ask", "--log", str(log), "--encoder", tiny_backbone, "--cache-dir", "",
                                 "When did Ann adopt the puppy?", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["answer"]["answer"] == "6 May 2023" and out["answer"]["derivation"]


def test_a_how_long_question_reads_the_row_that_states_a_length():
    later = [SAID + timedelta(seconds=i) for i in range(2)]
    ranked = frame_of(("We met up last week!", later[0]), ("I've known these friends for 4 years.", later[1]))
    assert answer_from_evidence("how_long", ranked, NOW).answer == "4 years"  # not the 7 days since last week
    assert answer_from_evidence("when", ranked, NOW).answer == "the week before 9 June 2023"


@pytest.mark.parametrize("text, answer", [  # sentences of our own, said on 9 June 2023
    ("I've been learning Spanish since January.", "5 months"),  # this January, not the next one
    ("I've volunteered at the shelter since last summer.", "12 months"),
    ("We've been together for the past three months.", "3 months"),  # a stretch: said in its size's unit
    ("I've been painting since 2016.", "7 years"),
    ("I've been going to the gym since Monday.", "4 days"),
    ("We've lived in Boston since March.", "3 months"),  # a month whose name is also a word, after "since"
    ("We've been married eleven years.", "11 years"),  # a length after "been" and a state
    ("I've been at it going on three years.", "3 years"),
    ("We're ten years in and still going strong.", "10 years"),
    ("I've been a teacher since '15.", "8 years"),  # a year written with two digits after an apostrophe
    ("I've been with my partner for two and a half years.", "2.5 years"),
    ("ive been running for like two years", "2 years"),  # a length hedged: read as stated
    ("I've been vegan for the best part of a year.", "1 year"),
    ("It's been well over a decade since I moved here.", "10 years"),
    ("I've worked there for just under six months.", "6 months"),
])
def test_how_long_from_a_start_or_a_stretch(text, answer):
    assert answer_from_evidence("how_long", frame_of((text, SAID)), NOW).answer == answer


def test_a_time_still_to_come_when_it_was_said_gives_no_length():
    plan = answer_from_evidence("how_long", frame_of(("hockey final is off tomorrow, the zamboni died", SAID)), NOW)
    assert plan.answer is None and plan.duration is None  # not "-1 days": a plan is no length up to when it was said
    assert plan.derivation[-1].startswith("the evidence names a time after it was said")
    assert question_kind("how long was it from the demo to the counters going in") == "between"


def test_a_weekend_asked_for_is_the_weekend_that_holds_the_day():
    a = answer_from_evidence("weekend", frame_of(("The hen is in Kilkenny on Saturday the 24th.", SAID)), NOW)
    assert (a.start.date().isoformat(), a.end.date().isoformat()) == ("2023-06-24", "2023-06-26")
    assert "the weekend that holds 24 June 2023" in a.derivation[-1]


def test_the_time_word_a_question_asks_for_is_no_unread_time():
    from retrieval.memory.time_resolver import TimeResolver

    asked = TimeResolver(NOW).resolve("What weekend was Ann down in Kilkenny?")
    assert not [e for e in asked if e.kind == "unresolved"]
    unread = TimeResolver(NOW).resolve("What did we say about Ann on weekends?")
    assert [e.text for e in unread if e.kind == "unresolved"] == ["weekends"]
