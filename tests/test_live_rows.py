"""The plain-Python rows of a living memory's ``add`` are the rows ``utterance_frame`` makes."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pandas as pd
import pytest

from retrieval.data.conversation_log import Utterance
from retrieval.memory.conversation_table import turn_texts, utterance_frame
from retrieval.memory.live_rows import extend_records, last_record, records_frame, utterance_records, view_texts

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


def test_a_bf16_memory_reopens_in_bf16_and_refuses_fp32(tmp_path):
    from models.dual_encoder import load_encoder
    from retrieval.memory.temporal_memory import TemporalMemory
    from retrieval.search.dense_index import EncoderMismatchError

    memory = TemporalMemory.open(tmp_path / "m", create=True, precision="bf16", turns=False)
    memory.add("Ann", "I adopted a cat last week.", "2023-05-08T10:00:00+00:00")
    assert memory.table.encoder.precision == "bf16" and memory.table.encoder.identity.endswith("bfloat16-weights")
    memory.close()
    again = TemporalMemory.open(tmp_path / "m")  # the recorded precision: the encoder is loaded in bf16
    assert again.table.encoder.precision == "bf16" and len(again.table) == 1
    assert again.ask("What did Ann say about the cat?").rows.index.tolist() == [0]
    again.close()
    with pytest.raises(EncoderMismatchError, match="autocast"):
        TemporalMemory.open(tmp_path / "m", encoder=load_encoder())


def test_bf16_weights_agree_with_fp32():
    from models.dual_encoder import load_encoder

    texts = ["We went hiking last weekend.", "What is the capital of France?" * 5]
    fp32, bf16 = load_encoder(), load_encoder(precision="bf16")
    assert bf16.identity != fp32.identity  # their embeddings never share a cache or an index
    a, b = fp32.encode_documents(texts), bf16.encode_documents(texts)
    assert b.dtype == a.dtype and ((a * b).sum(1) > 0.99).all()
    with pytest.raises(ValueError, match="reloaded"):
        bf16.set_precision("fp32")
