"""The plain-Python rows of a living memory's ``add`` are the rows ``utterance_frame`` makes."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pandas as pd
import pytest

from retrieval.data.conversation_log import Utterance
from retrieval.memory.conversation_table import turn_texts, utterance_frame
from retrieval.memory.live_rows import extend_records, last_record, records_frame, utterance_records
from retrieval.memory.live_table import view_texts

TEXTS = ["I went to the support group yesterday.", "Nice! How was it?", "We meet again next Friday at 5pm.",
         "ok", "Last year in May I adopted two cats.", "Happy new year!"]


def utterances(zone) -> list[Utterance]:
    start = datetime(2023, 12, 31, 22, 30, tzinfo=timezone.utc)  # crosses a day, an ISO year and a zone's midnight
    return [Utterance(i, 1 + i // 3, "Ann" if i % 2 else "Bob", (start + timedelta(minutes=25 * i)).astimezone(zone),
                      TEXTS[i]) for i in range(len(TEXTS))]


@pytest.mark.parametrize("zone", [timezone.utc, ZoneInfo("Europe/Paris"), ZoneInfo("America/New_York")])
def test_records_frame_is_utterance_frame(zone):
    us = utterances(zone)
    expected = utterance_frame(us, zone)
    records = utterance_records(us[:2], zone)
    extend_records(records, utterance_records(us[2:], zone))  # built in two adds, joined once
    pd.testing.assert_frame_equal(records_frame(records, zone), expected)
    mine, theirs = last_record(records), expected.iloc[-1]  # a missing string is None here, NaN in the frame
    assert mine.name == theirs.name and list(mine.index) == list(theirs.index)
    assert [None if pd.isna(v) else v for v in mine] == [None if pd.isna(v) else v for v in theirs]


def test_turn_view_of_records_follows_the_previous_row():
    us = utterances(timezone.utc)
    frame = utterance_frame(us, timezone.utc)
    records = utterance_records(us[3:], timezone.utc)
    assert view_texts(records, frame.iloc[2], ("text", "turn"))["turn"] == turn_texts(frame)[3:]
    assert view_texts(records, None, ("turn",))["turn"] == turn_texts(frame.iloc[3:])


def test_naive_timestamps_are_refused():
    with pytest.raises(ValueError, match="time-zone aware"):
        utterance_records([Utterance(0, 1, "a", datetime(2023, 1, 1), "hi")], timezone.utc)
