"""Plans (rule and LLM), their execution over a small conversation table, and query rewriting."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from retrieval.data.conversation_log import Utterance
from retrieval.llm import GenerationResult
from retrieval.memory.conversation_table import utterance_frame
from retrieval.memory.planner import LLMPlanner, PlannerConfig, RulePlanner, parse_margin
from retrieval.memory.query_rewrite import LLMRewriter, carry_time_reference, context_query
from retrieval.memory.question_parts import content_query, named_speaker
from retrieval.memory.table_ops import execute, validate_ops
from retrieval.memory.time_resolver import TimeResolver, normalise

UTC = ZoneInfo("UTC")
# Five sessions: Fri 6 Oct, Fri 13 Oct, Fri 20 Oct, and two on Sun 22 Oct (09:55 and 10:55).
STARTS = [datetime(2023, 10, 6, 8), datetime(2023, 10, 13, 8), datetime(2023, 10, 20, 7),
          datetime(2023, 10, 22, 9, 55), datetime(2023, 10, 22, 10, 55)]


@pytest.fixture(scope="module")
def frame():
    utts = []
    for s, start in enumerate(STARTS, start=1):
        for i in range(3):
            utts.append(Utterance(len(utts), s, "Ann" if i % 2 == 0 else "Bob",
                                  (start + timedelta(minutes=i)).replace(tzinfo=UTC), f"session {s} line {i}"))
    return utterance_frame(utts)


def run(frame, question, now=None):
    now = now or frame["timestamp"].max().to_pydatetime()
    plan = RulePlanner().plan(question, now, ["Ann", "Bob"])
    assert validate_ops(plan.ops, frame.columns) == []
    json.loads(plan.to_json())  # serialisable
    return plan, execute(plan.ops, frame, ranker=first_k_preferred_first)


def first_k_preferred_first(query, k, ids, prefer=(), margin=None):
    """A stand-in ranker: preferred rows first, then time order (all tied: the margin keeps every one)."""
    return [(i, 1.0) for i in sorted(ids, key=lambda i: i not in prefer)[:k]]


def sessions(execution) -> list[int]:
    return sorted(set(execution.rows["session"]))


@pytest.mark.parametrize("question, expected", [
    ("What did we discuss 2 sessions ago?", [4]),
    ("What did we talk about last discussion?", [5]),
    ("What did we discuss in our first session?", [1]),
    ("What did we discuss over sessions 2 through 3?", [2, 3]),
    ("What did we discuss last Friday?", [3]),
    ("What did we talk about today?", [4, 5]),
    ("What did we discuss earlier this morning?", [4]),
    ("What did we chat about over the last 3 days?", [3, 4, 5]),
    ("What did we discuss in October?", [1, 2, 3, 4, 5]),
    ("the second conversation in October", [2]),
])
def test_rule_plans_select_the_right_sessions(frame, question, expected):
    _, execution = run(frame, question)
    assert sessions(execution) == expected


@pytest.mark.parametrize("question, expected, option", [
    ("What did we discuss on October 13th?", [2], None),  # the day itself
    ("What did we discuss on October 14th?", [2], 2),  # no rows that day: the days either side
    ("What did we discuss on October 12th?", [2], 2),
    ("What did we discuss on October 16th?", [], None),  # none either side: nothing, not a guess further off
    ("What did we discuss before October 14th?", [1, 2], None),  # a bound is not a named day
    ("What did we discuss 9 days ago?", [2], None),  # the calendar day (13th) has rows
    ("What did we discuss 8 days ago?", [2], 3),  # 14th empty, 8 x 24 h before now too: the 13th beside it
])
def test_a_named_day_without_rows_falls_back_to_the_days_beside_it(frame, question, expected, option):
    _, execution = run(frame, question)
    assert sessions(execution) == expected
    used = [t for t in execution.trace if t.startswith("first_nonempty: option")]
    assert used == ([f"first_nonempty: option {option} used, the earlier ones left no rows"] if option else [])
    assert any("none of the 2 options" in t for t in execution.trace) == (expected == [])


def test_now_hides_later_rows(frame):
    now = datetime(2023, 10, 21, 12, tzinfo=UTC)
    _, execution = run(frame, "What did we talk about last discussion?", now)
    assert sessions(execution) == [3]


def test_soft_hours_are_dropped_with_a_note_when_they_empty_the_result(frame):
    now = datetime(2023, 10, 22, 23, tzinfo=UTC)
    _, execution = run(frame, "What did we discuss earlier this evening?", now)
    assert sessions(execution) == [4]
    assert any("skipped soft" in t for t in execution.trace)


def test_content_question_ranks_within_the_period(frame):
    plan, execution = run(frame, "What did Bob say about his new puppy on October 13th?")
    assert plan.ops[-1]["op"] == "rank" and "puppy" in plan.ops[-1]["query"]
    assert plan.ops[-1]["prefer"] == {"column": "speaker", "value": "Bob"}
    assert plan.ops[-1]["margin"] == PlannerConfig.content_margin
    assert sessions(execution) == [2] and len(execution.rows) == 3
    assert execution.rows["speaker"].iloc[0] == "Bob"  # the prior reached the ranker


def test_response_number_selects_that_row(frame):
    plan, execution = run(frame, "What did Bob say about his puppy in response number 4?")
    assert execution.ids == [4] and plan.ops[-1]["op"] == "rank"


@pytest.mark.parametrize("question, expected", [
    ("What did Bob say about his puppy?", "Bob"),
    ("What did Ann and Bob discuss about puppies?", None),  # both named as one subject: no prior
    ("What did Bob & Ann discuss?", None),
    ("What did Bob ask Ann about her puppy?", "Bob"),  # both named apart: the first, the subject
    ("What book did Ann recommend to Bob?", "Ann"),
    ("Annabel said what about puppies?", None),  # a longer word is not the name
    ("What puppy did we talk about?", None),
])
def test_named_speaker(question, expected):
    assert named_speaker(normalise(question), ["Ann", "Bob"]) == expected


def test_prefer_must_name_a_column(frame):
    bad = [{"op": "rank", "query": "x", "k": 3, "prefer": {"column": "mood", "value": "happy"}}]
    assert any("prefer" in e for e in validate_ops(bad, frame.columns))


def test_no_time_reference_falls_back_to_semantic_search_and_says_so(frame):
    plan, execution = run(frame, "What do you know about puppies?")
    assert plan.ops[-1]["op"] == "rank" and any("semantic search" in n for n in plan.notes)
    assert len(execution.rows) == 10


def test_unresolvable_expression_is_noted(frame):
    plan, _ = run(frame, "What did we discuss 3 blue moons ago?")
    assert any("unreadable time phrase 'ago'" in n for n in plan.notes)


def test_generic_questions_name_no_content():
    norm = normalise("I enjoy them too! Can you summarize what we discussed?")
    assert content_query(norm, []) is None
    norm = normalise("What activity did Caroline discuss on July 3rd?")
    exprs = TimeResolver(datetime(2023, 10, 1, tzinfo=UTC)).resolve(norm)
    assert content_query(norm, exprs, ["Caroline"]) == "what activity did discuss?"


def test_content_query_drops_the_participants_names():
    norm = normalise("What did Melanie say about Caroline's painting and John?")
    assert content_query(norm, [], ["Caroline", "Melanie"]) == "what did say about painting and john?"
    assert content_query(normalise("What did Melanie say to Caroline?"), [], ["Caroline", "Melanie"]) is None


def test_group_counts_and_order_ops(frame):
    _, execution = run(frame, "How many sessions did we have in October?")
    assert execution.counts["session"] == {1: 3, 2: 3, 3: 3, 4: 3, 5: 3}
    ops = [{"op": "order", "by": "timestamp", "ascending": False}, {"op": "head", "n": 2}]
    assert execute(ops, frame).ids == [14, 13]


def test_validate_ops_reports_problems():
    errors = validate_ops([{"op": "between", "column": "nope", "ranges": "x"}, {"op": "fly"},
                           {"op": "nth", "group": "session", "start": 0, "end": 1}], ["session", "timestamp"])
    assert len(errors) == 4


class FakeBackend:
    def __init__(self, answer: str, ok: bool = True, schema_ok: bool = True):
        self.answer, self.ok, self.schema_ok, self.prompts, self.formats = answer, ok, schema_ok, [], []

    def generate(self, conversations, max_new_tokens=256, temperature=0.0, stop=None, response_format=None):
        self.prompts.extend(conversations)
        self.formats.append(response_format)
        if response_format is not None and not self.schema_ok:
            return [GenerationResult("", False, "response_format not supported", 0.0, "fake", "fake")
                    for _ in conversations]
        return [GenerationResult(self.answer if self.ok else "", self.ok, None if self.ok else "boom", 0.0,
                                 "fake", "fake") for _ in conversations]


def test_llm_planner_uses_a_valid_plan(frame):
    backend = FakeBackend('Sure: {"ops": [{"op": "nth", "group": "session", "start": -2, "end": -2}]}')
    now = frame["timestamp"].max().to_pydatetime()
    plan = LLMPlanner(backend, frame.columns).plan("What did we discuss 2 sessions ago?", now)
    assert plan.planner == "llm" and sessions(execute(plan.ops, frame)) == [4]
    assert "2023-10-22" in backend.prompts[0][0]["content"]  # now is in the prompt


def test_the_llm_planner_knows_the_tables_columns_before_any_table(frame):
    """A memory is built with its planner: the LLM planner's columns default to the conversation table's."""
    assert LLMPlanner(FakeBackend("{}")).columns == list(frame.columns)


@pytest.mark.parametrize("answer, ok", [("no idea", True), ('{"ops": [{"op": "drop_table"}]}', True), ("", False)])
def test_llm_planner_falls_back_to_rules_with_a_reason(frame, answer, ok):
    now = frame["timestamp"].max().to_pydatetime()
    plan = LLMPlanner(FakeBackend(answer, ok), frame.columns).plan("What did we discuss 2 sessions ago?", now)
    assert plan.planner == "llm->rule" and "rule planner used" in plan.notes[0]
    assert sessions(execute(plan.ops, frame)) == [4]


HISTORY = [{"speaker": "Ann", "text": "I see in my calendar that we talked on October 13th."},
           {"speaker": "Bob", "text": "Yes! We did talk then."}]
NOW = datetime(2023, 10, 22, 12, tzinfo=UTC)


def test_carry_time_reference_into_an_ambiguous_turn():
    rw = carry_time_reference(HISTORY, "I enjoy them too! Can you summarize what we discussed?", NOW)
    assert rw.method == "carry" and rw.text == "can you summarize what we discussed, on october 13th?"
    assert carry_time_reference(HISTORY, "What did we discuss last Friday?", NOW).method == "unchanged"
    assert carry_time_reference([], "Can you summarize?", NOW).method == "unchanged"
    assert context_query(HISTORY, "Summarize?").startswith("I see in my calendar")


def test_llm_rewrite_and_its_fallback():
    good = LLMRewriter(FakeBackend("What did we discuss on October 13th?")).rewrite(HISTORY, "Summarize?", NOW)
    assert good.method == "llm"
    lost = LLMRewriter(FakeBackend("Summarize our chat.")).rewrite(HISTORY, "Summarize?", NOW)
    assert lost.method == "llm->carry" and "october 13th" in lost.text


def test_margin_is_validated_and_parsed(frame):
    op = {"op": "rank", "query": "puppy", "k": 3}
    assert validate_ops([{**op, "margin": 0.5}], frame.columns) == []
    assert validate_ops([{**op, "margin": -1}], frame.columns) == ["op 0 (rank): margin must be a number >= 0"]
    assert validate_ops([{**op, "margin": "wide"}], frame.columns) == ["op 0 (rank): margin must be a number >= 0"]
    assert parse_margin("none") is None and parse_margin("0.3") == 0.3
    with pytest.raises(ValueError, match=">= 0"):
        parse_margin("-2")
    no_cut = RulePlanner(PlannerConfig(content_margin=None)).plan("What did Bob say about his puppy on October "
                                                                   "13th?", datetime(2023, 11, 1, tzinfo=UTC))
    assert "margin" not in no_cut.ops[-1]


def test_a_reversed_range_is_noted_in_the_plan(frame):
    plan, execution = run(frame, "What did we discuss between October 20 and October 13?")
    assert sessions(execution) == [2, 3] and any("later end first" in n for n in plan.notes)


@pytest.mark.parametrize("question, expected", [
    ("What did we talk about in the session right before the one on October 13th?", [1]),
    ("Give me a rundown of the conversation after the one on October 13th.", [3]),
    ("Catch me up on the 2 sessions before the one on October 20th.", [1, 2]),
    ("What came up in the chat after our 3rd session?", [4]),
    ("What did we talk about 2 days after we met on October 20th?", [4, 5]),
    ("Go over our chats on Friday the 13th of October.", [2]),
    ("Walk me through our conversation on the 2nd Friday of October.", [2]),
    ("Fill me in on the last Friday in October.", []),  # the 27th: nothing said yet
    ("Remind me what we went over since Friday.", [3, 4, 5]),
    ("What did we talk about the first time we talked?", [1]),
    ("the most recent time we talked", [5]),
    ("What did we discuss before the session on October 13th?", [1]),  # a dated session as a bound
    ("What came up after our chat on October 13th?", [3, 4, 5]),
    ("What did we talk about since we met on October 20th?", [3, 4, 5]),
])
def test_compositional_plans(frame, question, expected):
    _, execution = run(frame, question)
    assert sessions(execution) == expected


def test_a_participant_asked_about_over_a_period_is_a_filter(frame):
    for question in ("What did Bob say on October 13th?", "Everything Bob mentioned on October 13th, please.",
                     "What were Bob's messages in our 2nd session?"):
        plan, execution = run(frame, question)
        assert set(execution.rows["speaker"]) == {"Bob"} and sessions(execution) == [2], question
        reading = plan.reading
        assert reading["who"] == "Bob" and reading["who_role"] == "filter" and reading["what"] == "period"
    plan, _ = run(frame, "What did we tell Bob on October 13th?")  # spoken to, not who spoke
    assert not any(op.get("column") == "speaker" for op in plan.ops)


def test_the_plan_shows_who_when_and_what(frame):
    plan, _ = run(frame, "Give me a rundown of what Ann said about her puppy on October 13th.")
    assert plan.reading["who"] == "Ann" and plan.reading["who_role"] == "prior"
    assert plan.reading["when"] == ["on october 13th"] and plan.reading["what"] == "topic"
    assert plan.reading["topic_from"] == "marker" and "puppy" in plan.reading["left"]
    assert json.loads(plan.to_json())["reading"] == plan.reading


def test_a_topic_keeps_the_numbers_it_wrote_in_words(frame):
    plan, _ = run(frame, "When was Bob's first day at the bakery?")
    assert plan.reading["topic"] == "when was first day at the bakery?" and plan.reading["left"] == ["first", "bakery"]
    plan, _ = run(frame, "What did Bob say he tried for the first time?")
    assert plan.reading["what"] == "topic" and "first" in plan.reading["topic"]


@pytest.mark.parametrize("question, topic", [
    ("Give me a rundown of our chat on May 8th.", False),
    ("Catch me up on what we covered in the first half of March.", False),
    ("Could you show me what Ann said on May 8th?", False),
    ("What topics came up on May 8th?", False),
    ("What activity did Ann take up on May 8th?", True),  # a wh-word with a noun
    ("What did we say regarding the puppy on May 8th?", True),
    ("Which show did Bob recommend on May 8th?", True),
    ("What did Ann say she was painting on May 8th?", True),  # a word left over
])
def test_the_topic_decision_reads_the_questions_structure(question, topic):
    norm = normalise(question)
    exprs = TimeResolver(datetime(2023, 10, 1, tzinfo=UTC)).resolve(norm)
    assert (content_query(norm, exprs, ["Ann", "Bob"]) is not None) == topic


def test_an_unreadable_time_phrase_alone_is_named_and_falls_back_to_the_whole_log(frame):
    plan, execution = run(frame, "What did we discuss a few weeks back?")
    assert plan.notes[0].startswith("unreadable time phrase 'a few weeks back'")
    assert "searched the whole log" in plan.notes[0]
    assert [op["op"] for op in plan.ops] == ["filter", "rank"]  # no guessed range
    assert plan.ops[-1]["k"] == 10 and "margin" not in plan.ops[-1] and len(execution.rows) == 10


def test_a_readable_time_phrase_is_kept_beside_an_unreadable_one(frame):
    plan, execution = run(frame, "What did we discuss on October 13th, a few weeks back?")
    assert plan.notes[0].startswith("unreadable time phrase 'a few weeks back'")
    assert "searched by 'on october 13th' without it" in plan.notes[0]
    assert set(execution.rows["date"]) == {"2023-10-13"}


def test_the_day_after_a_named_day_is_counted_from_it():
    exprs = TimeResolver(datetime(2023, 12, 1, tzinfo=UTC)).resolve(
        "What did we discuss on Friday October 13th and the weekend after?")
    weekend = exprs[-1]
    assert weekend.kind == "narrative" and "counted from" in weekend.note
    assert [(a.date().isoformat(), b.date().isoformat()) for a, b in weekend.intervals] == [("2023-10-14",
                                                                                             "2023-10-16")]
    month = TimeResolver(datetime(2023, 12, 1, tzinfo=UTC)).resolve("in May and the month before")[-1]
    assert [(a.date().isoformat(), b.date().isoformat()) for a, b in month.intervals] == [("2023-04-01",
                                                                                           "2023-05-01")]
    later = TimeResolver(datetime(2023, 10, 13, 12, tzinfo=UTC)).resolve("on October 13th and the weekend after")[-1]
    assert later.intervals is None and later.unresolved.endswith("lies after now")


@pytest.mark.parametrize("question", ["What do we do every couple of months?", "What did we plan once a week?",
                                      "Who hosts every other weekend?"])
def test_a_frequency_says_how_often_not_when(question):
    plan = RulePlanner().plan(question, datetime(2023, 12, 1, tzinfo=UTC), ["Ann", "Bob"])
    assert not any(n.startswith("unreadable") for n in plan.notes)
    assert any("says how often, not when" in n for n in plan.notes)


@pytest.mark.parametrize("follow_up, expected, speakers", [
    ("And what did Bob say then?", [2], {"Bob"}),
    ("Give me a rundown of that day.", [2], {"Ann", "Bob"}),
    ("And the conversation after that?", [3], {"Ann", "Bob"}),
    ("Go over that week for me.", [2], {"Ann", "Bob"}),
])
def test_a_reference_back_takes_the_earlier_turns_time(frame, follow_up, expected, speakers):
    rw = carry_time_reference(HISTORY, follow_up, NOW)
    assert rw.method == "carry" and "earlier turn" in rw.notes[0]
    _, execution = run(frame, rw.text)
    assert sessions(execution) == expected and set(execution.rows["speaker"]) == speakers


def test_shift_ops_are_validated(frame):
    bad = [{"op": "shift", "group": "session", "start": 1, "end": -1, "anchor": [{"op": "rank", "query": "x", "k": 1}]}]
    errors = validate_ops(bad, frame.columns)
    assert any("anchor must be" in e for e in errors) and any("start <= end" in e for e in errors)
    empty = [{"op": "shift", "group": "session", "start": -1, "end": -1,
              "anchor": [{"op": "filter", "column": "date", "cmp": "==", "value": "2023-01-01"}]}]
    execution = execute(empty, frame)
    assert execution.ids == [] and any("anchor kept no rows" in t for t in execution.trace)


def test_llm_planner_repairs_near_valid_json(frame):
    now = frame["timestamp"].max().to_pydatetime()
    backend = FakeBackend("{'ops': [{'op': 'nth', 'group': 'session', 'start': -2, 'end': -2},]")
    plan = LLMPlanner(backend, frame.columns).plan("What did we discuss 2 sessions ago?", now)
    assert plan.planner == "llm" and any("repaired" in n for n in plan.notes)
    assert sessions(execute(plan.ops, frame)) == [4]
    assert backend.formats[0]["type"] == "json_schema"  # the op schema is sent


def test_llm_planner_asks_for_plain_json_when_the_server_takes_no_schema(frame):
    now = frame["timestamp"].max().to_pydatetime()
    backend = FakeBackend('{"ops": [{"op": "nth", "group": "session", "start": 1, "end": 1}]}', schema_ok=False)
    planner = LLMPlanner(backend, frame.columns)
    plan = planner.plan("What did we discuss in our first session?", now)
    assert plan.planner == "llm" and [f and f["type"] for f in backend.formats] == ["json_schema", "json_object", None]
    planner.plan("What did we discuss in our first session?", now)
    assert backend.formats[-1] is None  # remembered
