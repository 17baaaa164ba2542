"""Where a living memory keeps its rows: a storage interface and its embedded default, SQLite in WAL mode.

A memory's rows are the conversation table's columns (:func:`~retrieval.memory.conversation_table.utterance_frame`:
response index, session, speaker, timestamp, the calendar columns, text, and whatever columns that function
grows), one row per turn, in the order added (``response_idx`` = position). :class:`MemoryStore` is what the
memory needs of a store: append rows in one transaction, count them, read them back from a position, and keep a
few settings (``meta``: the encoder's identity, the calendar zone, the session gap). :class:`SQLiteStore` is the
embedded default (the standard library's ``sqlite3``): WAL journal, one transaction per append, so a row is
committed when :meth:`~MemoryStore.append` returns and a killed process loses no committed row and leaves no
half-written one (SQLite's own guarantee; ``tests/test_live_memory.py`` kills a child process in a loop of
appends). With ``fsync`` each commit also survives a power cut (``synchronous=FULL``, about 5 ms a commit
here). A server database (PostgreSQL with pgvector, for many users on many machines) would implement the same
methods; the embeddings and indices beside the rows are the memory's, not the store's.

Columns are stored by kind: integers, floats and strings natively, timestamps as UTC microseconds (read back in
the memory's calendar zone), anything else as JSON text; the kinds are recorded in ``meta`` and the table is
created from the first rows appended.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np
import pandas as pd

from retrieval.data.jsonio import DataError

DB_NAME = "memory.sqlite"
FORMAT = 1  # the layout of a memory folder; a different one is refused on open


class MemoryStore(Protocol):
    """What a memory needs of the database holding its rows."""

    def append(self, rows: pd.DataFrame, roles: dict[int, str] | None = None) -> None:
        """Add rows (positions ``count()``, ``count() + 1``, ...) and the ``roles`` of those that are not
        utterances (response_idx -> "question" or "answer") in one transaction, durable when it returns."""

    def roles(self) -> dict[int, str]:
        """The rows stored with a role: response_idx -> role."""

    def count(self) -> int:
        """Rows stored."""

    def read(self, start: int = 0, zone=None) -> pd.DataFrame:
        """Rows from position ``start``, timestamps in ``zone``, indexed by response_idx."""

    def get_meta(self, key: str, default=None):
        """A setting stored with the rows (JSON-serialisable)."""

    def set_meta(self, key: str, value) -> None:
        """Store a setting (committed at once)."""

    def close(self) -> None:
        """Release the database."""


def column_kind(series: pd.Series) -> str:
    """How a frame column is stored: "timestamp", "int", "float", "text" or "json"."""
    if isinstance(series.dtype, pd.DatetimeTZDtype):
        return "timestamp"
    if pd.api.types.is_bool_dtype(series) or pd.api.types.is_integer_dtype(series):
        return "int"
    if pd.api.types.is_float_dtype(series):
        return "float"
    if series.map(lambda v: isinstance(v, str)).all():
        return "text"
    return "json"


EPOCH = pd.Timestamp(0, tz="UTC")
SQL_TYPES = {"timestamp": "INTEGER", "int": "INTEGER", "float": "REAL", "text": "TEXT", "json": "TEXT"}


SMALL_BATCH = 16  # fewer rows than this are converted row by row (a column's pandas conversion costs ~0.5 ms)


def scalar(value, kind: str):
    """One value as :func:`to_sql_column` stores its column."""
    if kind == "timestamp":
        return None if pd.isna(value) else (value - EPOCH) // pd.Timedelta(1, "us")
    if kind == "json":
        return json.dumps(value, default=str)
    return value.item() if isinstance(value, np.generic) else value


def from_json(text: str | None):
    """A "json" column's stored text as its value: JSON arrays come back as tuples, as the conversation frame holds
    them (``event_duration``), and a missing value (None, NaN) as None."""
    value = json.loads(text) if isinstance(text, str) else text
    if isinstance(value, float) and value != value:  # NaN, as pandas fills a missing value
        return None
    return tuple(value) if isinstance(value, list) else value


def to_sql_column(series: pd.Series, kind: str) -> list:
    """A frame column as the values a database stores for its ``kind`` (:func:`column_kind`)."""
    if kind == "timestamp":
        micros = (series.dt.tz_convert("UTC") - EPOCH) // pd.Timedelta(1, "us")
        if series.isna().any():  # NaT (an utterance without an event time) as NULL
            return [None if pd.isna(v) else int(v) for v in micros]
        return micros.tolist()
    if kind == "json":
        return [json.dumps(v, default=str) for v in series]
    return series.tolist()


def from_sql_column(values, kind: str, zone):
    """Stored values of one column of ``kind`` back as a frame column, timestamps in ``zone``."""
    if kind == "timestamp":
        micros = pd.array(values, dtype="Int64") if None in values else np.asarray(values, dtype=np.int64)
        ts = pd.to_datetime(micros, unit="us", utc=True)
        return ts.tz_convert(zone) if zone is not None else ts
    if kind == "int":
        return np.asarray(values, dtype=np.int64)
    if kind == "float":
        return np.asarray(values, dtype=np.float64)
    if kind == "json":
        return [from_json(v) for v in values]
    return pd.Series(values, dtype=object)  # strings as Python objects: several times faster to load than arrow


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class SQLiteStore:
    """:class:`MemoryStore` in one SQLite file (``memory.sqlite`` in the memory's folder), WAL mode."""

    def __init__(self, path: str | Path, fsync: bool = False):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.set_fsync(fsync)
            self.db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            # the rows that are not what people said (a question put to the memory, an LLM's answer): their role
            self.db.execute("CREATE TABLE IF NOT EXISTS roles (response_idx INTEGER PRIMARY KEY, role TEXT NOT NULL)")
        except sqlite3.DatabaseError as e:
            raise DataError(f"{self.path}: not a memory database ({e})") from e
        self.columns: list[tuple[str, str]] | None = None
        stored = self.get_meta("columns")
        if stored is not None:
            self.columns = [tuple(c) for c in stored]

    def set_fsync(self, fsync: bool) -> None:
        """``synchronous=FULL`` (each commit fsync'ed: it survives a power cut too) or ``NORMAL`` (the default: in
        WAL mode a commit is in the operating system's hands when it returns, so it survives the process being
        killed, the project's guarantee for every file it writes (``retrieval/atomic.py``); about 5 ms less per
        commit here)."""
        self.db.execute(f"PRAGMA synchronous={'FULL' if fsync else 'NORMAL'}")

    # ---- settings -----------------------------------------------------------------------------------------
    def get_meta(self, key: str, default=None):
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return default if row is None else json.loads(row[0])

    def set_meta(self, key: str, value) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value)))

    # ---- rows ---------------------------------------------------------------------------------------------
    def json_columns(self) -> list[str]:
        """The columns stored as JSON text (values that are neither numbers, timestamps nor strings)."""
        return [n for n, k in (self.columns or []) if k == "json"]

    def count(self) -> int:
        if self.columns is None:
            return 0
        return self.db.execute("SELECT COUNT(*) FROM rows").fetchone()[0]

    def _create_table(self, rows: pd.DataFrame) -> list[tuple[str, str]]:
        """The rows table, its columns' kinds read from ``rows``; those (name, kind) columns."""
        columns = self.columns = [(name, column_kind(rows[name])) for name in rows.columns]
        names = [n for n, _ in columns]
        if "response_idx" not in names:
            raise ValueError("a memory's rows need a response_idx column")
        spec = ", ".join(f"{_quote(n)} {SQL_TYPES[k]}" + (" PRIMARY KEY" if n == "response_idx" else "")
                         for n, k in columns)
        self.db.execute("BEGIN IMMEDIATE")
        self.db.execute(f"CREATE TABLE rows ({spec})")
        self.set_meta("columns", [list(c) for c in columns])
        self.db.execute("COMMIT")
        return columns

    def roles(self) -> dict[int, str]:
        """The rows recorded with a role other than an utterance: response_idx -> role."""
        return dict(self.db.execute("SELECT response_idx, role FROM roles").fetchall())

    def append(self, rows: pd.DataFrame, roles: dict[int, str] | None = None) -> None:
        if rows.empty:
            return
        columns = self.columns if self.columns is not None else self._create_table(rows)
        names = [n for n, _ in columns]
        if list(rows.columns) != names:
            raise ValueError(f"rows have columns {list(rows.columns)}, the memory stores {names}")
        values = zip(*(to_sql_column(rows[n], k) for n, k in columns)) if len(rows) > SMALL_BATCH else \
            [[scalar(v, k) for v, (_, k) in zip(r, columns)] for r in rows.itertuples(index=False)]
        self._insert(values, len(columns), roles)

    def append_records(self, records: dict[str, list], roles: dict[int, str] | None = None) -> None:
        """Append a few rows given as columns of Python values (a living memory's ``add``: no frame to build);
        the table must exist (made by a first :meth:`append`)."""
        columns = self.columns
        if columns is None:
            raise ValueError("the memory's rows table does not exist yet: append a frame first")
        if list(records) != [n for n, _ in columns]:
            raise ValueError(f"rows have columns {list(records)}, the memory stores {[n for n, _ in columns]}")
        self._insert([[scalar(v, k) for v, (_, k) in zip(r, columns)] for r in zip(*records.values())],
                     len(columns), roles)

    def _insert(self, values: Iterable[Sequence], width: int, roles: dict[int, str] | None = None) -> None:
        """Insert ``values`` (rows of ``width`` SQL values, in the table's column order) and the rows' ``roles`` in
        one transaction."""
        marks = ", ".join("?" * width)
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.executemany(f"INSERT INTO rows VALUES ({marks})", values)
            self.db.executemany("INSERT INTO roles VALUES (?, ?)", list((roles or {}).items()))
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def read(self, start: int = 0, zone=None) -> pd.DataFrame:
        columns = self.columns
        if columns is None:
            return pd.DataFrame()
        names = [n for n, _ in columns]
        cur = self.db.execute(f"SELECT {', '.join(map(_quote, names))} FROM rows WHERE response_idx >= ? "
                              "ORDER BY response_idx", (start,))
        data: list[Sequence] = list(zip(*cur.fetchall())) or [[] for _ in names]
        frame = pd.DataFrame({n: from_sql_column(col, k, zone) for (n, k), col in zip(columns, data)})
        frame.index = pd.Index(frame["response_idx"].to_numpy())
        return frame

    def close(self) -> None:
        self.db.close()
