"""A frame grown in buffers holds what ``pd.concat`` would, and frames handed out earlier keep their rows."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd
import pytest

from retrieval.data.conversation_log import Utterance
from retrieval.memory import growing_frame
from retrieval.memory.conversation_table import utterance_frame
from retrieval.memory.growing_frame import GrowingFrame

ZONE = ZoneInfo("Europe/Paris")
TEXTS = ["I went to the support group yesterday.", "Nice!", "We meet again next Friday.", "ok",
         "For two weeks in May I was in Rome."]


def frame_of(start: int, n: int) -> pd.DataFrame:
    t0 = datetime(2023, 5, 1, 9, tzinfo=timezone.utc)
    us = [Utterance(i, 1 + i // 4, "Ann" if i % 2 else "Bob", t0 + timedelta(hours=7 * i), TEXTS[i % len(TEXTS)])
          for i in range(start, start + n)]
    return utterance_frame(us, ZONE)


def same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    """Equal values and index; strings compared as Python objects (the buffers hold them so)."""
    assert list(a.columns) == list(b.columns) and a.index.tolist() == b.index.tolist()
    for c in a.columns:
        left, right = a[c].tolist(), b[c].tolist()
        assert [None if v is None or v != v else v for v in left] == \
            [None if v is None or v != v else v for v in right], c
        if isinstance(b[c].dtype, pd.DatetimeTZDtype) or b[c].dtype.kind in "iuf":
            assert a[c].dtype == b[c].dtype, c


def test_growth_past_capacity_matches_concat(monkeypatch):
    monkeypatch.setattr(growing_frame, "MIN_CAPACITY", 4)
    base = frame_of(0, 3)
    grown, expected = GrowingFrame(base), base
    early = grown.frame()
    for start in range(3, 40, 3):  # several doublings
        tail = frame_of(start, 3)
        grown.extend(tail)
        expected = pd.concat([expected, tail])
    same(grown.frame(), expected)
    same(early, base)  # a frame handed out before the growth still shows its rows
    assert grown.frame()["event_start"].notna().any()


def test_columns_are_read_only_and_rows_are_checked():
    grown = GrowingFrame(frame_of(0, 5))
    frame = grown.frame()
    with pytest.raises(ValueError, match="read-only"):
        frame["hour"].to_numpy()[0] = 3
    with pytest.raises(ValueError, match="columns"):
        grown.extend(frame_of(5, 1).drop(columns=["text"]))
    assert np.shares_memory(frame["text"].to_numpy(), grown.buffers["text"])
