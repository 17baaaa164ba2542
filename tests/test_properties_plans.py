"""Properties of the time resolver, the rule planner and plan execution over generated logs and questions (Hypothesis;
profiles in hypothesis_profiles): plans are plain JSON and valid, ranges run forwards, every returned row lies in
the interval the plan states (and on the calendar days it names), and answers are deterministic."""

from __future__ import annotations

import json
from datetime import timezone

import hypothesis_profiles  # noqa: F401  (registers and loads the profiles)
import pandas as pd
import pytest
from hypothesis import given, settings
from time_strategies import scenarios

from retrieval.memory.conversation_table import ConversationTable, utterance_frame
from retrieval.memory.planner import RulePlanner
from retrieval.memory.table_ops import execute, validate_ops
from retrieval.memory.temporal_memory import TemporalMemory
from retrieval.memory.time_resolver import OPEN_START, TimeResolver


def first_k(query, k, ids, prefer=(), margin=None):
    """A stand-in ranker: the preferred rows first, then time order."""
    return [(i, 1.0) for i in sorted(ids, key=lambda i: i not in prefer)[:k]]


def used_option(op: dict, trace: list[str]) -> list[dict] | None:
    """The option of a first_nonempty op that gave its rows (from the trace); None when none kept any."""
    if any(t.startswith("first_nonempty: none of the") for t in trace):
        return None
    used = next((int(t.split()[2]) for t in trace if t.startswith("first_nonempty: option ")), 1)
    return op["options"][used - 1]


def skipped(op: dict, trace: list[str]) -> bool:
    return f"skipped soft {json.dumps(op, default=str)}: it would leave no rows" in trace


def assert_inside(rows: pd.DataFrame, op: dict, widened: bool = False) -> None:
    """Every row inside one of a between op's ranges (with ``widened``, every row's session has a row inside), and
    a timestamp range from a midnight to a midnight holds rows of its calendar days only."""
    column, both = op["column"], op.get("inclusive") == "both"
    values = rows[column]
    inside = pd.Series(False, index=rows.index)
    for lo, hi in op["ranges"]:
        if column == "timestamp":
            lo, hi = pd.Timestamp(lo), pd.Timestamp(hi)
            assert lo < hi, (op, "a range must run forwards")
        else:
            assert lo <= hi, (op, "a range must run forwards")
        here = (values >= lo) & ((values <= hi) if both else (values < hi))
        if column == "timestamp" and not widened and lo == lo.normalize() and hi == hi.normalize():
            days = rows.loc[here, "date"]
            assert ((days >= lo.date().isoformat()) & (days < hi.date().isoformat())).all(), (op, days.tolist())
        inside |= here
    if widened:
        assert set(rows["session"]) <= set(rows.loc[inside, "session"]), op
    else:
        assert inside.all(), (op, rows.loc[~inside, column].tolist())


def check_rows_lie_in_the_plan(plan, execution) -> None:
    """The plan's stated filters hold for every returned row (soft ops the execution skipped excepted)."""
    rows, trace = execution.rows, execution.trace
    for op in plan.ops:
        if op["op"] == "filter" and op["column"] == "timestamp" and op["cmp"] == "<=":
            assert (rows["timestamp"] <= pd.Timestamp(op["value"])).all(), op
        elif op["op"] == "between" and not skipped(op, trace):
            assert_inside(rows, op)
        elif op["op"] == "first_nonempty":
            option = used_option(op, trace)
            if option is None:
                assert rows.empty
                continue
            widened = any(sub["op"] == "widen" for sub in option)
            for sub in option:
                if sub["op"] == "between":
                    assert_inside(rows, sub, widened)


def check_expressions(question: str, now) -> None:
    """Resolved intervals are tz-aware, in now's zone (an open start excepted), and run forwards; session positions
    are never 0."""
    for e in TimeResolver(now).resolve(question):
        for key in ("intervals", "alternative_intervals", "nearby_intervals"):
            for a, b in getattr(e, key) or []:
                assert a.tzinfo is not None and a < b, (question, e)
                assert a == OPEN_START or str(a.tzinfo) == str(now.tzinfo), (question, e)
                assert str(b.tzinfo) == str(now.tzinfo), (question, e)
        if e.session_positions:
            assert 0 not in e.session_positions and e.session_positions[0] <= e.session_positions[1] or (
                e.session_positions[0] < 0 < e.session_positions[1]), e
        json.dumps(e.to_dict())


def check_plan_invariants(scenario) -> None:
    zone, utterances, question, now = scenario
    frame = utterance_frame(utterances)
    check_expressions(question, now)
    plan = RulePlanner().plan(question, now, ["Ann", "Bob", "Chen Li"])
    as_dict = plan.to_dict()
    assert json.loads(json.dumps(as_dict))["ops"] == as_dict["ops"]  # plain JSON, no default= needed
    assert validate_ops(plan.ops, frame.columns) == [], (question, plan.ops)
    execution = execute(plan.ops, frame, ranker=first_k)
    assert set(execution.ids) <= set(frame.index)
    check_rows_lie_in_the_plan(plan, execution)
    again = RulePlanner().plan(question, now, ["Ann", "Bob", "Chen Li"])
    assert again.to_dict() == as_dict and execute(again.ops, frame, ranker=first_k).ids == execution.ids


def check_memory_answers(scenario) -> None:
    """TemporalMemory.ask (BM25 ranking, no encoder): rows in the plan's intervals, the zone stated, and the same
    answer for the same question and now, given as a datetime or as its ISO text."""
    zone, utterances, question, now = scenario
    memory = TemporalMemory(ConversationTable.from_utterances(utterances), ranker="bm25")
    result = memory.ask(question, now=now)
    assert result.plan.zone and any(result.plan.zone in n for n in result.plan.notes)
    check_rows_lie_in_the_plan(result.plan, result.execution)
    # as instants: datetimes sharing one tzinfo compare by wall time, fold ignored (01:00 EST < 01:59 EDT)
    if now.astimezone(timezone.utc) < utterances[0].timestamp.astimezone(timezone.utc):
        assert result.ids == [] and any("before the log's first utterance" in n for n in result.plan.notes)
    again = memory.ask(question, now=now.isoformat())
    assert again.ids == result.ids and again.plan.to_dict() == result.plan.to_dict()


@given(scenario=scenarios())
def test_plans_are_json_valid_forward_and_hold_for_their_rows(scenario):
    check_plan_invariants(scenario)


@given(scenario=scenarios())
def test_memory_answers_are_inside_the_plan_and_deterministic(scenario):
    check_memory_answers(scenario)


@pytest.mark.slow
@settings(hypothesis_profiles.SLOW)
@given(scenario=scenarios())
def test_plans_are_json_valid_forward_and_hold_for_their_rows_many(scenario):
    check_plan_invariants(scenario)


@pytest.mark.slow
@settings(hypothesis_profiles.SLOW)
@given(scenario=scenarios())
def test_memory_answers_are_inside_the_plan_and_deterministic_many(scenario):
    check_memory_answers(scenario)
