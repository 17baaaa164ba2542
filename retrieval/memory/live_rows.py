"""The rows of a few new turns as plain Python columns: what a living memory's ``add`` pays per turn.

Building a one-row :func:`~retrieval.memory.conversation_table.utterance_frame` costs about 5 ms of pandas
machinery (a DatetimeIndex, ``isocalendar``, ``assign``, ``sort_values``) for a row that is written to the
database and then waits to be joined to the frame. :func:`utterance_records` computes the same values with
plain ``datetime`` calls (the event-time columns through the same :func:`~retrieval.memory.event_time.event_columns`);
:func:`records_frame` turns any number of them into the frame ``utterance_frame`` would have made, in one
constructor, when a question next reads the frame. ``tests/test_live_rows.py`` checks the two agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import tzinfo

import numpy as np
import pandas as pd

from retrieval.data.conversation_log import Utterance
from retrieval.memory.conversation_table import COLUMNS, join_turns, speaker_texts
from retrieval.memory.event_time import event_columns

TIME_COLUMNS = ("timestamp", "event_start", "event_end")
INT32_COLUMNS = ("hour", "year")  # as DatetimeIndex.hour / .year give them


def calendar_values(ts: pd.Timestamp) -> dict[str, object]:
    """:func:`~retrieval.memory.conversation_table.calendar_columns` of one tz-aware time, as Python values."""
    iso = ts.isocalendar()
    return {"date": ts.strftime("%Y-%m-%d"), "time": ts.strftime("%H:%M:%S"), "hour": ts.hour,
            "weekday": ts.day_name(), "week": f"{iso[0]}-W{iso[1]:02d}", "month": ts.strftime("%Y-%m"),
            "year": ts.year}


def utterance_records(utterances: Sequence[Utterance], zone: tzinfo) -> dict[str, list]:
    """The columns (:data:`COLUMNS`, in order) of ``utterances`` (tz-aware, in time order) as lists of Python
    values, their times in ``zone``."""
    if any(u.timestamp.tzinfo is None for u in utterances):
        raise ValueError("utterance timestamps must be time-zone aware")
    cols: dict[str, list] = {c: [] for c in COLUMNS}
    stamps = [pd.Timestamp(u.timestamp).tz_convert(zone) for u in utterances]
    for u, ts in zip(utterances, stamps):
        cols["response_idx"].append(u.response_idx)
        cols["session"].append(u.session)
        cols["speaker"].append(u.speaker)
        cols["timestamp"].append(ts)
        for name, value in calendar_values(ts).items():
            cols[name].append(value)
        cols["text"].append(u.text)
    events = event_columns(cols["text"], stamps)
    for name, values in events.items():
        cols[name] = list(values)
    return cols


def extend_records(into: dict[str, list], more: dict[str, list]) -> None:
    """Append the rows of ``more`` to ``into`` (both :func:`utterance_records` columns)."""
    for name, values in more.items():
        into.setdefault(name, []).extend(values)


def records_frame(records: dict[str, list], zone: tzinfo) -> pd.DataFrame:
    """The rows of ``records`` as :func:`~retrieval.memory.conversation_table.utterance_frame` makes them: the
    same columns and dtypes, indexed by ``response_idx``."""
    data: dict[str, object] = {}
    for name in COLUMNS:
        values = records[name]
        if name in TIME_COLUMNS:
            data[name] = pd.DatetimeIndex(pd.to_datetime(values, utc=True)).tz_convert(zone)
        elif name in INT32_COLUMNS:
            data[name] = np.asarray(values, dtype=np.int32)
        else:
            data[name] = values
    frame = pd.DataFrame(data)
    frame.index = pd.Index(frame["response_idx"].to_numpy())
    return frame


def last_record(records: dict[str, list]) -> pd.Series:
    """The last row of ``records`` as a frame row (a Series over :data:`COLUMNS`)."""
    return pd.Series({name: records[name][-1] for name in COLUMNS}, name=records["response_idx"][-1])


def view_texts(rows: pd.DataFrame | dict, previous: pd.Series | None, views: Sequence[str]) -> dict[str, list[str]]:
    """The dense texts of ``rows`` (a frame, or :func:`~retrieval.memory.live_rows.utterance_records` columns)
    per view ("text": the utterance; "turn": :func:`~retrieval.memory.conversation_table.turn_texts`, the first
    row following ``previous``, the memory's last row before them)."""
    out = {"text": list(rows["text"])}
    if "turn" in views:
        own, sessions = own_texts(rows), list(rows["session"])
        if previous is not None:
            own = [f"{previous['speaker']}: {previous['text']}", *own]
            sessions = [int(previous["session"]), *sessions]
        out["turn"] = join_turns(own, sessions)[0 if previous is None else 1:]
    return out


def own_texts(rows: pd.DataFrame | dict[str, list]) -> list[str]:
    """Each row as "speaker: text" (``speaker_texts``, also of columns of Python values)."""
    if isinstance(rows, pd.DataFrame):
        return speaker_texts(rows)
    return [f"{s}: {t}" for s, t in zip(rows["speaker"], rows["text"])]


def sparse_texts(rows: pd.DataFrame | dict[str, list], previous: pd.Series | None, view: str) -> list[str]:
    """The BM25 texts of ``rows`` in one view: "speaker: text", or the turn view's dense text."""
    return own_texts(rows) if view == "text" else view_texts(rows, previous, ("turn",))["turn"]


ROLES = ("utterance", "question", "answer")  # what a turn is: said by a person, asked of the memory, its answer


def turn_roles(turns: Sequence[dict], ids: Sequence[int]) -> dict[int, str]:
    """The roles of new ``turns`` (at ``ids``) that are not utterances; a role outside :data:`ROLES` is a
    ValueError."""
    roles = {}
    for turn, i in zip(turns, ids):
        role = turn.get("role") or "utterance"
        if role not in ROLES:
            raise ValueError(f"turn {i}: role {role!r}; a turn's role is one of {', '.join(ROLES)}")
        if role != "utterance":
            roles[int(i)] = role
    return roles
