"""A trend window that starts at an event: "how much have we talked about Ravi's dad since his fall?".

The question names no date (:data:`~retrieval.trends.question.SINCE_EVENT` reads "his fall" and keeps it out of the
topic); the memory dates the event as it answers "when was his fall?" (its ranking, its relevance model where the
table's encoder is the one it was trained with, its evidence rule, its warnings), and the window runs from the start
of that answer to now. The trend's notes say which day was read and from which row, and carry the answer's warnings
(weak or conflicting evidence) first. An event the memory cannot date (no answer, or an answer from a row that shares
no word with the event's: the closest row of a log that never mentions it) leaves the window as it was, and says so.

    query = event_window(parse_trend_question(question, now, speakers), table, now)
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from retrieval.memory.answer_notes import NO_ANSWER_NOTE
from retrieval.memory.conversation_table import ConversationTable
from retrieval.memory.relevance.choices import AUTO
from retrieval.memory.relevance.rerank import second_stage
from retrieval.memory.temporal_memory import TemporalMemory
from retrieval.memory.time_resolver import OPEN_START
from retrieval.memory.when_answer import EVIDENCE_RULE
from retrieval.memory.when_neighbours import content_stems, participant_names
from retrieval.trends.question import TrendQuery, window_op


def event_window(query: TrendQuery, table: ConversationTable, now: datetime, relevance: str = AUTO) -> TrendQuery:
    """``query`` with its window started at the day the memory gives its ``since_event`` (unchanged without one);
    ``relevance``: the memory's second stage (:func:`~retrieval.memory.relevance.rerank.second_stage`'s choices)."""
    if query.since_event is None:
        return query
    asked = f"when was {query.since_event}?"
    second, rule = second_stage(relevance, EVIDENCE_RULE, table.encoder_id)
    result = TemporalMemory(table, relevance=second, evidence_rule=rule).ask(asked, now=now)
    answer = result.answer
    named = content_stems(query.since_event, participant_names(table.frame))
    row = table.frame.loc[answer.row] if answer is not None and answer.row in table.frame.index else None
    if answer is None or answer.start is None or answer.answer is None or answer.start.year <= OPEN_START.year or \
            row is None or not named & content_stems(str(row["text"])):  # a row that never names it dates nothing
        return replace(query, notes=[
            f"{NO_ANSWER_NOTE} 'since {query.since_event}': the memory found no row that names it and a day (asked "
            f"{asked!r}), so the window does not start there"] + query.notes)
    warned = [f"{w} (the start of the window, 'since {query.since_event}')" for w in result.warnings]  # said first
    read = (f"'since {query.since_event}': from {answer.answer} (the memory's answer to {asked!r}, from row "
            f"{answer.row})")
    return replace(query, start=answer.start, ops=query.ops + [window_op(answer.start, None, now)],
                   notes=[*warned, read, *query.notes])
