"""Periods of a trend analysis: the period kinds, the conversation table's column for each, and the calendar
keys of every period of a window, empty ones included."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

import pandas as pd

from retrieval.data.jsonio import DataError

PERIODS = ("day", "week", "month", "session")
PERIOD_COLUMN = {"day": "date", "week": "week", "month": "month", "session": "session"}


def auto_period(span: timedelta) -> str:
    """The period for a window when the question names none: days up to 3 weeks, weeks up to 5 months, else months."""
    if span <= timedelta(days=21):
        return "day"
    return "week" if span <= timedelta(days=150) else "month"


def calendar_key(ts: pd.Timestamp | datetime, period: str) -> str:
    """The period column's value for a time, as
    :func:`~retrieval.memory.conversation_table.utterance_frame` writes it."""
    if period == "day":
        return ts.strftime("%Y-%m-%d")
    if period == "month":
        return ts.strftime("%Y-%m")
    year, week, _ = ts.isocalendar()
    return f"{year}-W{week:02d}"


MAX_PERIODS = 20_000  # periods a trend counts at most: 55 years of days (more is a stray timestamp, not a trend)
PERIOD_DAYS = {"day": 1.0, "week": 7.0, "month": 30.44}


def check_span(period: str, start: datetime, end: datetime, ends: str = "") -> None:
    """A DataError when ``start`` to ``end`` holds more than :data:`MAX_PERIODS` periods (``ends``: the documents at
    either end, for the message)."""
    if period not in PERIOD_DAYS:
        return
    n = (pd.Timestamp(end) - pd.Timestamp(start)).days / PERIOD_DAYS[period]
    if n > MAX_PERIODS:
        raise DataError(f"the window runs from {pd.Timestamp(start).date()} to {pd.Timestamp(end).date()}: about "
                        f"{int(n):,} {period}s, more than {MAX_PERIODS:,} to count{ends}. A stray timestamp? Pass "
                        "--start / --end, or a longer --period")


def enumerate_periods(period: str, start: datetime, end: datetime, sessions: Sequence[int] = ()) -> list:
    """Every period from ``start`` to ``end`` (inclusive of the one ``end`` falls in), empty ones too.

    Sessions: every session number from the lowest to the highest in ``sessions``.
    """
    if period == "session":
        return list(range(min(sessions), max(sessions) + 1)) if len(sessions) else []
    last = pd.Timestamp(end) - pd.Timedelta(microseconds=1) if pd.Timestamp(end) > pd.Timestamp(start) else end
    days = pd.date_range(pd.Timestamp(start).normalize(), pd.Timestamp(last).normalize(), freq="D")
    return list(dict.fromkeys(calendar_key(d, period) for d in days))

