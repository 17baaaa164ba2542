"""Planners: a question (and "now") -> a chain of table operations over the conversation table.

- :class:`RulePlanner` (the default, no LLM): the time resolver's expressions become range, session
  and n-th operations; a content ranking is added when the question names content beyond "what did
  we discuss"; a question with no time reference falls back to semantic search, and says so.
- :class:`LLMPlanner`: the schema, "now" and a few examples in a prompt; the JSON it returns is
  validated and, when invalid, replaced by the rule planner's plan, with the reason in the notes.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, cast

from retrieval.llm.base import GenerationResult, LLMBackend
from retrieval.memory.conversation_table import COLUMNS
from retrieval.memory.question import AskedQuestion
from retrieval.memory.question_parts import HOW_MANY
from retrieval.memory.table_ops import CMPS, Plan, validate_ops
from retrieval.memory.time_resolver import VAGUE_CUES, TimeExpression

logger = logging.getLogger(__name__)

COUNT_BY = {"days": "date", "weeks": "week", "months": "month"}


@dataclass
class PlannerConfig:
    content_k: int = 10  # at most this many rows kept when the question names content
    # ... and of those only the rows within this share of the fused scores' spread (best minus the last candidate's:
    # the memory's "pool" cut) of the best (None: all k; retrieval.search.fusion.spread_cut). Chosen for the
    # packaged MiniLM, with the speaker prior 1.5 (retrieval.memory.content_ranking), on LoCoMo's development
    # conversations (python -m experiments.content_proxy; README section 4) as the tightest cut whose recall on their
    # single-evidence questions (categories 1, 3, 4), ranked within their days, reaches 90%: a clear winner comes
    # back alone, a close call with its rivals. Another encoder: run experiments.content_proxy with --encoder.
    content_margin: float | None = 0.36  # 0.6 with the earlier cut, of the spread to the k-th (cut "spread")
    fallback_k: int = 10  # rows kept by the semantic fallback
    # ... and of those only the rows within this share of the score spread (None: all fallback_k rows, recall first).
    # No cut: ranked over the whole log (python -m experiments.content_proxy --scope log), no margin reaches the
    # in-period rule's 90% recall on LoCoMo's development conversations (all 10 rows: 83.9), and the content margin
    # 0.36 keeps 4.7 rows at recall 76.0 (F2 50.7 against 30.0); on the development user trial (eval/trial) it turned
    # three "partly" answers into one right and two wrong, one of them silent.
    fallback_margin: float | None = None

    def __post_init__(self) -> None:
        for name in ("content_k", "fallback_k"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"{name} (--{name.replace('_', '-')}) must be a whole number of rows, 1 or more: got "
                                 f"{getattr(self, name)!r}")


def parse_margin(text: str) -> float | None:
    """A command-line ``--content-margin``: a share of the fused scores' spread, or 'none' for no cut."""
    if text.strip().lower() == "none":
        return None
    value = float(text)
    if value < 0:
        raise ValueError(f"a margin must be >= 0 or 'none', got {text!r}")
    return value


def rank_op(query: str, k: int, speaker: str | None, margin: float | None = None) -> dict:
    op = {"op": "rank", "query": query, "k": k}
    if speaker:
        op["prefer"] = {"column": "speaker", "value": speaker}
    if margin is not None:
        op["margin"] = margin
    return op


def ops_for(expressions: Sequence[TimeExpression], now: datetime) -> list[dict]:
    """Table operations for resolved expressions: calendar ranges (union; with their other readings, tried in
    turn when the ranges keep no rows), session ids, soft hours and 'before the latest session', then session
    positions (counted inside what the ranges kept)."""
    ops: list[dict] = [{"op": "filter", "column": "timestamp", "cmp": "<=", "value": now.isoformat()}]

    def iso(attr: str) -> list[list[str]]:
        return [[a.isoformat(), b.isoformat()] for e in expressions for a, b in (getattr(e, attr) or [])]

    ranges, alternatives, nearby = iso("intervals"), iso("alternative_intervals"), iso("nearby_intervals")
    if ranges and (alternatives or nearby):  # the calendar reading, else the others in turn
        options = [[{"op": "between", "column": "timestamp", "ranges": ranges}]]
        if alternatives:  # "N days ago" as N x 24 hours before now, with the sessions it touches
            options.append([{"op": "between", "column": "timestamp", "ranges": alternatives},
                            {"op": "widen", "group": "session"}])
        if nearby:  # one day with no rows: the days either side
            options.append([{"op": "between", "column": "timestamp", "ranges": nearby}])
        ops.append({"op": "first_nonempty", "options": options})
    elif ranges and len(expressions) == 1 and expressions[0].weekday:  # "last Friday", else our last Friday
        today = datetime.combine(now.date(), datetime.min.time(), tzinfo=now.tzinfo).isoformat()
        ops.append({"op": "first_nonempty", "options": [
            [{"op": "between", "column": "timestamp", "ranges": ranges}],
            [{"op": "filter", "column": "weekday", "cmp": "==", "value": expressions[0].weekday},
             {"op": "filter", "column": "timestamp", "cmp": "<", "value": today},
             {"op": "nth", "group": "date", "start": -1, "end": -1}]]})
    elif ranges:
        ops.append({"op": "between", "column": "timestamp", "ranges": ranges})
    for e in expressions:
        if e.session_ids:
            ops.append({"op": "between", "column": "session", "ranges": [list(e.session_ids)], "inclusive": "both"})
        if e.response_ids:
            ops.append({"op": "between", "column": "response_idx", "ranges": [list(e.response_ids)],
                        "inclusive": "both"})
    for e in expressions:
        if e.hours:
            ops.append({"op": "between", "column": "hour", "ranges": [list(e.hours)], "soft": True})
        if e.before_latest_session:
            ops.append({"op": "nth", "group": "session", "start": 1, "end": -2, "soft": True})
    for e in expressions:
        if e.session_positions:
            start, end = e.session_positions
            ops.append({"op": "nth", "group": "session", "start": start, "end": end})
    for e in expressions:
        if e.session_shift:  # the sessions before / after an anchor, itself planned as an expression
            start, end = e.session_shift
            ops.append({"op": "shift", "group": "session", "start": start, "end": end,
                        "anchor": ops_for([e.anchor] if e.anchor is not None else [], now)[1:]})
    return ops


class Planner(Protocol):
    """What the memory asks of a planner: a question (read once, or its text read against ``now``) -> a
    :class:`~retrieval.memory.table_ops.Plan`; ``name`` says which planner made it."""

    name: str

    def plan(self, question: str | AskedQuestion, now: datetime | None = None,
             speakers: Sequence[str] = ()) -> Plan: ...


def question_now(question: str | AskedQuestion, now: datetime | None) -> datetime:
    """The time a question is read against: the one it was read against, else ``now``, which a text needs."""
    if isinstance(question, AskedQuestion):
        return question.now
    if now is None:
        raise ValueError("a question given as text is read against a time: pass now")
    return now


class RulePlanner:
    """Deterministic planning from the time resolver's expressions."""

    name = "rule"

    def __init__(self, config: PlannerConfig | None = None):
        self.config = config or PlannerConfig()

    def plan(self, question: str | AskedQuestion, now: datetime | None = None, speakers: Sequence[str] = ()) -> Plan:
        """The plan of a question read once (:class:`~retrieval.memory.question.AskedQuestion`; a string is read
        here, against ``now``)."""
        q = question if isinstance(question, AskedQuestion) else AskedQuestion.read(
            question, question_now(question, now), speakers)
        now, norm, expressions, reading = q.now, q.normalised, q.expressions, q.reading
        resolved = [e for e in expressions if not e.unresolved]
        # beside a time of the question's own, a reference back ("then") is that time, and a vague word ("recently")
        # is part of what is asked: neither narrows nor widens the period
        # a frequency ("every couple of months") says how often, never when
        frequencies = [e for e in expressions if e.kind == "frequency"]
        aside = [e for e in expressions if e.unresolved and resolved and e not in frequencies and (
            e.anaphor or e.text in VAGUE_CUES or e.unresolved.endswith("lies after now"))]
        unreadable = [e for e in expressions if e.unresolved and e not in aside and e not in frequencies]
        # what was searched instead of an unreadable phrase, said with it (an answer shows these notes first): the
        # phrases that were read, never thrown away with the unreadable one, else the whole log
        instead = (f"searched by {', '.join(repr(e.text) for e in resolved)} without it" if resolved else
                   "searched the whole log by the question's words instead of a guessed period")
        notes = [f"unreadable time phrase {e.text!r}: {e.unresolved}; {instead}" for e in unreadable]
        notes += [f"{e.text!r} names no period of its own" + (" said in (it lies after now: what the question asks "
                  "about, not when)" if (e.unresolved or "").endswith("lies after now") else "") +
                  ": read with the question's time" for e in aside]
        notes += [f"{e.text!r} says how often, not when: no period of its own" for e in frequencies]
        notes += [e.note for e in resolved if e.note]
        speaker = reading.who if reading.who_role == "prior" else None
        dicts = [e.to_dict() for e in expressions]
        if not resolved:
            margin = self.config.fallback_margin
            notes.append(("no time reference resolved: semantic search over the whole log" if not unreadable else
                          "a time phrase could not be read: semantic search over the whole log rather than a guessed "
                          "range (recall first)") + f", up to {self.config.fallback_k} rows"
                         + (f" within {margin} of the score spread of the best" if margin is not None else ""))
            if reading.topic is None:
                notes.append(("the question names no time and no content (only common words)" if not unreadable
                              else "the question names no topic") + ": the ranking of the whole log by it is close "
                             "to arbitrary; name a day, a session or a topic")
            ops = [{"op": "filter", "column": "timestamp", "cmp": "<=", "value": now.isoformat()},
                   rank_op(reading.topic or norm, self.config.fallback_k, reading.who, self.config.fallback_margin)]
            return Plan(ops, notes, self.name, dicts, reading=reading.to_dict())
        ops = ops_for(resolved, now)
        if reading.who_role == "filter":
            ops.append({"op": "filter", "column": "speaker", "cmp": "==", "value": reading.who})
            notes.append(f"asks what {reading.who} said over the period and names no topic: {reading.who}'s rows")
        how_many = HOW_MANY.search(norm)
        if how_many:
            ops.append({"op": "count", "by": COUNT_BY.get(how_many.group(1), "session")})
        if reading.topic:
            margin = self.config.content_margin
            ops.append(rank_op(reading.topic, self.config.content_k, speaker, margin))
            notes.append(f"names a topic ({reading.topic_from}: {', '.join(reading.left)}): ranking the rows of the "
                         f"period by {reading.topic!r}" + (f", {speaker}'s first" if speaker else "")
                         + (f"; up to {self.config.content_k} rows within {margin} of the score spread of the best"
                            if margin is not None else ""))
        return Plan(ops, notes, self.name, dicts, reading=reading.to_dict())


PROMPT = """You plan table operations over a conversation log. Each row is one utterance with columns:
response_idx (int), session (int, 1 = first), speaker (str: {speakers}), timestamp (ISO 8601), date (YYYY-MM-DD),
time (HH:MM:SS), hour (0-23), weekday (Monday..Sunday), week (YYYY-Www), month (YYYY-MM), year (int), text.
Operations, applied in order:
{{"op": "between", "column": C, "ranges": [[low, high]]}}  keeps low <= C < high
{{"op": "filter", "column": C, "cmp": "==|!=|<|<=|>|>=|in|contains", "value": V}}  e.g. one speaker's rows
{{"op": "nth", "group": "session", "start": i, "end": j}}  keeps sessions i..j in time order (1-based, -1 = latest)
{{"op": "shift", "group": "session", "start": -1, "end": -1, "anchor": [ops]}}  the session(s) just before (negative)
  or after (positive) the sessions the anchor ops keep
{{"op": "rank", "query": "what to look for", "k": 5}}  only when the question names a topic
Now is {now} ({weekday}). Answer with one JSON object {{"ops": [...]}} and nothing else.

Question: What did we discuss 3 sessions ago?
{{"ops": [{{"op": "nth", "group": "session", "start": -3, "end": -3}}]}}
Question: What did we talk about in March 2023?
{{"ops": [{{"op": "between", "column": "timestamp", "ranges": [["2023-03-01T00:00:00", "2023-04-01T00:00:00"]]}}]}}
Question: What did John say about his new job in our second session?
{{"ops": [{{"op": "nth", "group": "session", "start": 2, "end": 2}}, {{"op": "rank", "query": "John job", "k": 5}}]}}
Question: What did John tell me in the session right before the one on 2023-05-08?
{{"ops": [{{"op": "shift", "group": "session", "start": -1, "end": -1, "anchor": [{{"op": "between", "column": "date",
"ranges": [["2023-05-08", "2023-05-09"]]}}]}}, {{"op": "filter", "column": "speaker", "cmp": "==", "value": "John"}}]}}
Question: {question}
"""


def plan_schema(columns: Sequence[str]) -> dict:
    """A JSON schema of the plan the LLM writes (each op with its required keys and their types), for servers that
    constrain decoding to it (``response_format``); :func:`~retrieval.memory.table_ops.validate_ops` still checks
    the result."""
    scalar = {"type": ["string", "number", "integer", "boolean"]}
    col, integer = {"enum": list(columns)}, {"type": "integer"}
    pair = {"type": "array", "items": scalar, "minItems": 2, "maxItems": 2}

    def op(name: str, required: dict, optional: dict | None = None) -> dict:
        return {"type": "object", "additionalProperties": False, "required": ["op", *required],
                "properties": {"op": {"const": name}, **required, **(optional or {})}}

    filters = [op("between", {"column": col, "ranges": {"type": "array", "items": pair, "minItems": 1}},
                  {"inclusive": {"enum": ["left", "both"]}}),
               op("filter", {"column": col, "cmp": {"enum": list(CMPS)},
                             "value": {"anyOf": [scalar, {"type": "array", "items": scalar}]}}),
               op("nth", {"group": col, "start": integer, "end": integer})]
    ops = [*filters, op("shift", {"group": col, "start": integer, "end": integer,
                                  "anchor": {"type": "array", "items": {"anyOf": filters}, "minItems": 1}}),
           op("rank", {"query": {"type": "string"}, "k": integer}), op("count", {"by": col})]
    return {"type": "object", "required": ["ops"], "additionalProperties": False,
            "properties": {"ops": {"type": "array", "items": {"anyOf": ops}}}}


def read_plan(text: str) -> tuple[object, str | None]:
    """The ``ops`` of an LLM's answer, and a note when it was repaired: strict JSON first, then near-valid JSON
    (a missing bracket, single quotes, a trailing comma) repaired with ``json-repair``."""
    from retrieval.llm import LLMOutputError, parse_json

    try:
        return parse_json(text, dict).get("ops"), None
    except LLMOutputError:
        import json_repair

        start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
        repaired = json_repair.loads(text[start:]) if start >= 0 else None
        if isinstance(repaired, dict) and "ops" in repaired:
            return repaired["ops"], "the LLM's JSON was repaired (json-repair)"
        if isinstance(repaired, list) and repaired and all(isinstance(x, dict) and "op" in x for x in repaired):
            return repaired, "the LLM's JSON was repaired (json-repair; a bare list of ops)"
        raise


class LLMPlanner:
    """An LLM writes the plan in the rule planner's op schema: asked for JSON (``response_format`` with the schema
    where the server supports it), repaired when near-valid, validated; otherwise the rule plan, with the reason."""

    name = "llm"

    def __init__(self, backend: LLMBackend, columns: Sequence[str] = COLUMNS, fallback: RulePlanner | None = None,
                 max_new_tokens: int = 200, schema: bool = True):
        """``columns``: what the plan may name (default: the conversation table's, known before any table is read,
        so a memory is built with its planner)."""
        self.backend, self.columns = backend, list(columns)
        self.fallback = fallback or RulePlanner()
        self.max_new_tokens = max_new_tokens
        plan = plan_schema(self.columns)
        # the structured-output forms tried in turn until the server takes one: OpenAI's json_schema, llama.cpp's
        # json_object with a schema, then plain JSON asked for by the prompt alone
        self.formats: list[dict | None] = ([{"type": "json_schema", "json_schema": {"name": "plan", "schema": plan}},
                                            {"type": "json_object", "schema": plan}] if schema else []) + [None]

    def prompt(self, question: str, now: datetime, speakers: Sequence[str] = ()) -> list[dict[str, str]]:
        text = PROMPT.format(now=now.isoformat(timespec="seconds"), weekday=now.strftime("%A"), question=question,
                             speakers=", ".join(speakers) or "any")
        return [{"role": "user", "content": text}]

    def _ask(self, messages: list[dict[str, str]]) -> GenerationResult:
        while True:
            fmt = self.formats[0]
            extra: dict[str, Any] = {"response_format": fmt} if fmt is not None else {}
            result = self.backend.generate([messages], max_new_tokens=self.max_new_tokens, temperature=0.0, **extra)[0]
            if result.ok or fmt is None:
                return result
            logger.info("the LLM call with response_format %s failed (%s); trying the next form", fmt["type"],
                        result.error)
            self.formats.pop(0)

    def plan(self, question: str | AskedQuestion, now: datetime | None = None, speakers: Sequence[str] = ()) -> Plan:
        from retrieval.llm import LLMOutputError

        now = question_now(question, now)
        text = question.text if isinstance(question, AskedQuestion) else question
        result = self._ask(self.prompt(text, now, speakers))
        reason, repaired, ops = None, None, None
        if not result.ok:
            reason = f"the LLM call failed: {result.error}"
        else:
            try:
                ops, repaired = read_plan(result.text)
                errors = validate_ops(ops, self.columns)
                reason = "; ".join(errors) if errors else None
            except LLMOutputError as e:
                reason = str(e)
        if reason is not None:
            logger.warning("LLM plan rejected (%s); using the rule planner", reason)
            plan = self.fallback.plan(question, now, speakers)
            plan.notes.insert(0, f"LLM plan invalid ({reason[:300]}); rule planner used")
            plan.planner = "llm->rule"
            return plan
        valid = cast(list[dict], ops)  # validate_ops found nothing wrong: a list of operations
        notes = [f"LLM plan: {json.dumps(valid)[:300]}", *([repaired] if repaired else [])]
        return Plan([{"op": "filter", "column": "timestamp", "cmp": "<=", "value": now.isoformat()}, *valid], notes,
                    self.name)
