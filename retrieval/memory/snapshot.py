"""A living memory's rows as one parquet file (``rows-<count>.parquet``), written on close and read on open: one
read instead of the database's rows one by one. The database stays the truth: a snapshot is used only while it
agrees with it (as many rows or fewer, the same last row).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from retrieval.atomic import save_with
from retrieval.memory.conversation_table import COLUMNS
from retrieval.memory.store import SQLiteStore, from_json

logger = logging.getLogger(__name__)

SNAPSHOT = re.compile(r"rows-(\d+)\.parquet")


def empty_frame(zone) -> pd.DataFrame:
    """A conversation frame with no rows (the columns of :data:`COLUMNS`), for a new memory."""
    frame = pd.DataFrame({c: pd.Series([], dtype=object) for c in COLUMNS})
    frame["timestamp"] = pd.DatetimeIndex([], tz=zone)
    return frame


def snapshots(path: Path) -> list[tuple[int, Path]]:
    """The folder's ``rows-<count>.parquet`` snapshots, (rows, path), most rows first."""
    found = [(int(m.group(1)), p) for p in path.glob("rows-*.parquet") if (m := SNAPSHOT.fullmatch(p.name))]
    return sorted(found, reverse=True)


def write_snapshot(path: Path, frame: pd.DataFrame, json_columns: Sequence[str] = ()) -> None:
    """The whole frame as ``rows-<count>.parquet`` (a copy of the database's rows that loads in one read), then
    the older snapshots removed. The database stays the truth: a snapshot is only used while it agrees with it."""
    old = snapshots(path)
    if not len(frame) or old and old[0][0] == len(frame):
        return
    frame = frame.assign(**{c: [None if v is None or v != v else json.dumps(v, default=str) for v in frame[c]]
                            for c in json_columns})  # tuples and the like: parquet wants one type a column
    save_with(lambda partial: frame.to_parquet(partial), path / f"rows-{len(frame):010d}.parquet")
    for _, p in old:
        p.unlink(missing_ok=True)


def read_frame(path: Path, store: SQLiteStore, zone) -> pd.DataFrame:
    """The memory's rows: the newest snapshot that agrees with the database (as many rows or fewer, the same last
    row), then the database's rows after it; or all from the database."""
    count = store.count()
    if count == 0:
        return empty_frame(zone)
    for rows, snapshot in snapshots(path):
        if not 0 < rows <= count:
            continue
        try:
            frame = pd.read_parquet(snapshot)
        except (OSError, ValueError) as e:
            logger.warning("%s: unreadable snapshot (%s); reading the rows from the database", snapshot, e)
            break
        mine, theirs = frame.iloc[-1], store.read(rows - 1, zone).iloc[0]
        if len(frame) != rows or (int(mine["response_idx"]), mine["text"]) != (int(theirs["response_idx"]),
                                                                            theirs["text"]):
            logger.warning("%s: does not agree with the database; reading the rows from it", snapshot)
            break
        frame["timestamp"] = frame["timestamp"].dt.tz_convert(zone)
        for name in store.json_columns():
            frame[name] = [from_json(v) for v in frame[name]]
        for name in frame.columns:  # Python strings, as the database gives: the plan's row takes are 4x faster
            if isinstance(frame[name].dtype, pd.StringDtype):  # than on the parquet's chunked arrow strings
                frame[name] = frame[name].astype(object)
        rest = store.read(rows, zone) if rows < count else None
        return frame if rest is None else pd.concat([frame, rest])
    return store.read(0, zone)




def newest_readable(path: Path) -> tuple[pd.DataFrame, Path] | None:
    """The newest snapshot in ``path`` that reads, with its file; None when there is none."""
    for _, snapshot in snapshots(path):
        try:
            return pd.read_parquet(snapshot), snapshot
        except (OSError, ValueError) as e:
            logger.warning("%s: unreadable snapshot (%s)", snapshot, e)
    return None


def recovery_hint(path: Path) -> str:
    """What a damaged memory can be recovered from, as the end of its error message."""
    found = snapshots(path)
    if not found:
        return "; no snapshot (rows-N.parquet) is beside it to recover from"
    rows, snapshot = found[0]
    return (f"; its snapshot {snapshot.name} (written when it was last closed) holds {rows:,} turns: "
            f"`python -m retrieval.memory.live recover --memory {path}` makes a new memory from it")
