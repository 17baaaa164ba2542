"""A trend window that starts at an event the memory dates ("since the move")."""

from __future__ import annotations

from retrieval.trends.analysis import TrendConfig, analyse_trend
from retrieval.trends.corpus import load_corpus
from tests.test_trends import BagOfWordsEncoder, write_docs

CONFIG = TrendConfig(period="week", threshold="fixed", threshold_value=0.3, now="2025-04-30T12:00:00+01:00")


def _chat(tmp_path):
    """Garden talk before and after a move that is told, dated, two weeks into the chat."""
    rows = [
        {"id": "a", "speaker": "Ann", "text": "the garden roses are out", "timestamp": "2025-04-01T10:00:00+01:00"},
        {"id": "b", "speaker": "Bob", "text": "lovely garden roses", "timestamp": "2025-04-01T10:05:00+01:00"},
        {"id": "c", "speaker": "Ann", "text": "we did the house move yesterday, boxes everywhere",
         "timestamp": "2025-04-15T09:00:00+01:00"},
        {"id": "d", "speaker": "Bob", "text": "the new garden has an apple tree",
         "timestamp": "2025-04-20T10:00:00+01:00"},
        {"id": "e", "speaker": "Ann", "text": "planted garden tomatoes", "timestamp": "2025-04-27T10:00:00+01:00"},
    ]
    return load_corpus(write_docs(tmp_path / "chat.jsonl", rows), BagOfWordsEncoder())


def test_since_an_event_starts_the_window_on_the_day_the_memory_gives_it(tmp_path):
    result = analyse_trend(_chat(tmp_path), "how often did the garden come up since the house move?", CONFIG)
    assert result.topic == "garden"  # the event is no part of the topic
    assert result.start.startswith("2025-04-14")  # "yesterday", said on the 15th
    assert any("'since the house move': from 14 April 2025" in n and "row 2" in n for n in result.notes)
    assert result.warnings == []  # dated from a row that names it, by the hand-tuned ranking: nothing to doubt
    assert sorted(i for p in result.periods for i in p.counted) == [3, 4]  # the garden before the move is out


def test_an_event_the_memory_cannot_date_leaves_the_window_open_and_says_so(tmp_path):
    # the log never mentions a wedding: the memory's closest row ("planted garden tomatoes") does not date it
    result = analyse_trend(_chat(tmp_path), "how often did the garden come up since the wedding?", CONFIG)
    assert result.warnings[0].startswith("no answer: 'since the wedding': the memory found no row that names it")
    assert result.topic == "garden" and result.start.startswith("2025-04-01")
    assert sorted(i for p in result.periods for i in p.counted) == [0, 1, 3, 4]
