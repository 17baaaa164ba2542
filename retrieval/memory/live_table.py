"""A conversation table that grows a turn at a time, kept in a folder that survives a restart or a crash.

Folder layout (``TemporalMemory.open(path)``)::

    memory.sqlite            the rows and the settings (retrieval.memory.store, SQLite in WAL mode)
    rows-<count>.parquet     a snapshot of the first <count> rows, written on close (one read on open)
    vectors-text.f32         one embedding per row, the utterance alone (retrieval.search.vector_log)
    vectors-turn.f32         the same for the turn view (turn_texts), when the memory has it
    bm25-text/seg-*.npz      BM25 postings segments over "speaker: text" (retrieval.search.sparse_segments)
    bm25-turn/seg-*.npz      the same over the turn view

**Appending** (:meth:`MemoryFolder.add_many`): the new rows' texts are encoded (only theirs), the rows are
committed to the database in one transaction (from then on they are durable), their vectors appended to the
vector files, and the dense and sparse indices extended: a flat FAISS index takes the new rows as they are,
BM25 adds them to its open tail (no rebuild of what exists). Questions asked afterwards see them.

**Opening** (:meth:`MemoryFolder.open`): the encoder must be the one the memory was built with (its identity and
how it writes a document are stored; another is refused with :class:`EncoderMismatchError`, as a saved index
is); the rows are read back (the snapshot written at the last close, if it agrees with the database, then the
database's rows after it); each vector file is repaired against the database (a torn last row cut, rows past
the database dropped) and the rows it lacks, and only those, are encoded again; the flat FAISS index is built
from the vector file (one copy: storing a second copy as ``index.faiss`` would double the disk for nothing);
BM25 loads its sealed segments and re-adds the rows after them (fewer than one segment's worth).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TextIO

import numpy as np
import pandas as pd

from retrieval.data.conversation_log import DEFAULT_SESSION_GAP, Utterance
from retrieval.data.jsonio import DataError
from retrieval.data.timestamps import CalendarZone, as_timezone, calendar_zone, instant, read_timestamp, zone_name
from retrieval.memory.conversation_table import ConversationTable
from retrieval.memory.folder_lock import take_lock
from retrieval.memory.growing_frame import GrowingFrame
from retrieval.memory.live_rows import (
    extend_records,
    last_record,
    own_texts,
    records_frame,
    sparse_texts,
    turn_roles,
    utterance_records,
    view_texts,
)
from retrieval.memory.memory_settings import check_encoder, memory_settings
from retrieval.memory.snapshot import read_frame, recovery_hint, write_snapshot
from retrieval.memory.store import DB_NAME, FORMAT, SMALL_BATCH, SQLiteStore
from retrieval.search.dense_index import DenseIndex
from retrieval.search.index_record import recorded_precision
from retrieval.search.sparse_segments import SegmentedBM25
from retrieval.search.vector_log import VectorLog

logger = logging.getLogger(__name__)

REPAIR_PROGRESS_MIN = 1000  # re-encoding this many rows or more shows a progress bar
FUTURE_SKEW = timedelta(minutes=10)  # how far past this machine's clock a turn's time may be (clocks disagree)


@dataclass
class Appended:
    """What an append did: each turn's row (an exact duplicate's is the row it repeats), and how many were
    duplicates, skipped."""

    ids: list[int]
    skipped: int


class LiveTable(ConversationTable):
    """A :class:`ConversationTable` whose rows can be appended: the frame grows by a pending tail (joined on the
    next read of ``frame``), the dense indices by FAISS ``add``, BM25 through :class:`SegmentedBM25`."""

    def __init__(self, frame: pd.DataFrame, index: DenseIndex | None, encoder, turn_index: DenseIndex | None,
                 zone: CalendarZone, sparse: dict[str, SegmentedBM25]):
        self._pending: dict[str, list] = {}  # the rows appended since the frame was last read, as columns
        super().__init__(frame, index, encoder, turn_index, zone)
        self.sparse = sparse
        self.end = frame["timestamp"].max() if len(frame) else None

    @property
    def frame(self) -> pd.DataFrame:
        if self._pending:
            tail = records_frame(self._pending, self.zone.zone)
            if self._growing is None:  # the memory's first rows
                self._growing = GrowingFrame(tail)
            else:  # each join writes only the new rows into the buffers (not a concat of the whole frame: O(N))
                self._growing.extend(tail)
            self._frame = self._growing.frame()
            self._pending = {}
        return self._frame

    @frame.setter
    def frame(self, value: pd.DataFrame) -> None:
        """The frame read on open: copied once into growable buffers (part of the reopen, not of a question)."""
        self._growing = GrowingFrame(value) if len(value) else None
        self._frame, self._pending = value if self._growing is None else self._growing.frame(), {}

    def __len__(self) -> int:
        return len(self._frame) + len(self._pending.get("response_idx", ()))

    @property
    def tz(self):
        return self.zone.zone

    def last_row(self) -> pd.Series | None:
        if self._pending:
            return last_record(self._pending)
        return self._frame.iloc[-1] if len(self._frame) else None

    def append(self, rows: dict[str, list], embeddings: dict[str, np.ndarray], sparse_texts: dict[str, list[str]]):
        """Add ``rows`` (the next positions, :func:`~retrieval.memory.live_rows.utterance_records` columns) with
        their embeddings and BM25 texts per view."""
        ids = list(rows["response_idx"])
        for view, index in (("text", self.index), ("turn", self.turn_index)):
            if index is not None:
                index.add(embeddings[view], ids)
        for view, texts in sparse_texts.items():
            self.sparse[view].add(texts)
        extend_records(self._pending, rows)
        self._zoned.clear()
        self.end = max(rows["timestamp"])

    def rank_sparse(self, query: str, k: int, subset: Sequence[int] | None = None,
                    view: str = "text") -> list[tuple[int, float]]:
        if view not in self.sparse:
            raise ValueError(f"this memory has no BM25 over the {view!r} view; it has {sorted(self.sparse)}")
        return self.sparse[view].search([query], k, subset=subset)[0]


class MemoryFolder:
    """The folder of a living memory: its store, vector files, indices and settings; see the module docstring."""

    def __init__(self, path: Path, store: SQLiteStore, encoder, table: LiveTable, views: tuple[str, ...],
                 gap: timedelta, vectors: dict[str, VectorLog], lock: TextIO | None = None):
        self.path, self.store, self.encoder, self.table = path, store, encoder, table
        self.views, self.gap, self.vectors = views, gap, vectors
        self.lock = lock  # the writer's lock (retrieval.memory.folder_lock), released by close
        self.roles: dict[int, str] = store.roles()  # the rows that are not utterances (questions, LLM answers)

    # ---- creating and opening -----------------------------------------------------------------------------
    @staticmethod
    def exists(path: str | Path) -> bool:
        return (Path(path) / DB_NAME).is_file()

    @classmethod
    def create(cls, path: str | Path, encoder, encoder_spec: str | None = None, tz: str | None = None,
               session_gap: timedelta = DEFAULT_SESSION_GAP, turns: bool = True, fsync: bool = False) -> MemoryFolder:
        """A new, empty memory in ``path`` (refused when one is there). ``tz``: its calendar's zone (default UTC,
        and questions may then read days in the zone of their "now")."""
        path = Path(path)
        if cls.exists(path):
            raise FileExistsError(f"{path}: a memory is already there; open it")
        store = SQLiteStore(path / DB_NAME)
        for key, value in memory_settings(encoder, encoder_spec, tz, session_gap, turns).items():
            store.set_meta(key, value)
        store.close()
        return cls.open(path, encoder, fsync)

    @classmethod
    def open(cls, path: str | Path, encoder=None, fsync: bool = False) -> MemoryFolder:
        """Reopen the memory in ``path`` (``encoder`` None: the one it records, loaded by ``load_encoder``);
        ``fsync``: every append also survives a power cut (:meth:`SQLiteStore.set_fsync`)."""
        path = Path(path)
        if not cls.exists(path):
            raise FileNotFoundError(f"{path}: no memory here (no {DB_NAME}); create one with create=True")
        lock = take_lock(path)
        try:
            return cls._open_locked(path, encoder, fsync, lock)
        except BaseException:
            lock.close()
            raise

    @classmethod
    def _open_locked(cls, path: Path, encoder, fsync: bool, lock: TextIO) -> MemoryFolder:
        try:
            store = SQLiteStore(path / DB_NAME, fsync)
        except DataError as e:
            raise DataError(f"{e}{recovery_hint(path)}") from e
        if store.get_meta("format") != FORMAT:
            found = store.get_meta("format")
            store.close()
            if found is None:
                raise DataError(f"{path}: {DB_NAME} holds no memory (empty or damaged){recovery_hint(path)}")
            raise DataError(f"{path}: a memory folder of format {found!r}, not {FORMAT}")
        if encoder is None:
            from models.dual_encoder import load_encoder

            encoder = load_encoder(store.get_meta("encoder_spec"), recorded_precision(store.get_meta("autocast")))
        check_encoder(store, encoder, path)
        tz = store.get_meta("tz")
        zone = CalendarZone(as_timezone(tz), store.get_meta("tz_source") or ("given" if tz else "default"))
        views = tuple(store.get_meta("views"))
        frame = read_frame(path, store, zone.zone)
        vectors = {v: VectorLog(path / f"vectors-{v}.f32", encoder.dim) for v in views}
        dense = {v: dense_view(vectors[v], v, frame, encoder) for v in views}
        sparse = {v: sparse_view(path / f"bm25-{v}", v, frame) for v in views}
        table = LiveTable(frame, dense["text"], encoder, dense.get("turn"), zone, sparse)
        return cls(path, store, encoder, table, views, timedelta(seconds=store.get_meta("session_gap_s")), vectors,
                   lock)

    # ---- appending ----------------------------------------------------------------------------------------
    def new_rows(self, turns: Sequence[dict]) -> tuple[dict[str, list], list[int | None]]:
        """The rows of ``turns`` ({"speaker", "text", "timestamp"?, "session"?}) after the memory's last, and per
        turn the row it already is (an exact duplicate: same time, speaker and text as a row of the memory or an
        earlier turn of ``turns``; skipped, so an import run twice adds nothing) or None (a new row). New rows:
        response index continued, timestamp now when absent (or the last turn's, when now is before it; naive: the
        memory's zone), session by the gap rule
        unless given. ValueError, naming the turn, for a timestamp before the last turn's (not a duplicate), after
        this machine's clock by more than :data:`FUTURE_SKEW`, or a session number going back."""
        last = self.table.last_row()
        position = len(self.table)
        prev_ts = None if last is None else last["timestamp"].to_pydatetime()
        prev_session = 0 if last is None else int(last["session"])
        stored_end = None if prev_ts is None else instant(prev_ts)  # the memory's rows end here (a batch adds after)
        latest = datetime.now(timezone.utc) + FUTURE_SKEW
        utterances, repeats, seen = [], [], {}
        for n, turn in enumerate(turns):
            where = f"turn {n}" + (f" ({turn['where']})" if turn.get("where") else "")
            ts = self._timestamp(turn.get("timestamp"), where)
            if turn.get("timestamp") is None and prev_ts is not None and instant(ts) < instant(prev_ts):
                ts = prev_ts  # "now" is never before the memory's last turn (a clock set back, a fast one before)
            text, speaker = turn.get("text"), turn.get("speaker")
            if not isinstance(text, str) or not isinstance(speaker, str):
                raise ValueError(f"{where}: a turn needs a speaker and a text (strings), got {speaker!r}, {text!r}")
            key = (instant(ts), speaker, text)
            repeat = seen.get(key)
            if repeat is None and stored_end is not None and instant(ts) <= stored_end:  # only where rows already are
                repeat = self._stored(key)
            repeats.append(repeat)
            if repeat is not None:
                continue
            if instant(ts) > latest:
                raise ValueError(f"{where}: timestamp {ts.isoformat()} is after this machine's clock "
                                 f"({datetime.now(timezone.utc).isoformat(timespec='seconds')}) by more than "
                                 f"{FUTURE_SKEW}; a turn from the future is refused, so that it cannot block the "
                                 "turns after it")
            if prev_ts is not None and instant(ts) < instant(prev_ts):
                raise ValueError(f"{where}: timestamp {ts.isoformat()} is earlier than the memory's last turn "
                                 f"({prev_ts.isoformat()}); a memory is appended in time order")
            session = turn.get("session")
            if session is None:  # the JSONL reader's rule: a new session after a silence longer than the gap
                same = prev_ts is not None and instant(ts) - instant(prev_ts) <= self.gap
                session = prev_session if same else prev_session + 1
            elif int(session) < prev_session:
                raise ValueError(f"{where}: session {session} comes before the memory's last session {prev_session}")
            seen[key] = position + len(utterances)
            utterances.append(Utterance(position + len(utterances), int(session), speaker, ts, text,
                                        str(turn.get("turn_id", ""))))
            prev_ts, prev_session = ts, int(session)
        return utterance_records(utterances, self.table.zone.zone), repeats

    def _stored(self, key: tuple[datetime, str, str]) -> int | None:
        """The row of the memory with this (time, speaker, text), if any (rows are in time order: a binary search
        for the time, then the few rows at that time compared)."""
        frame = self.table.frame
        if not len(frame):
            return None
        stamps, at = frame["timestamp"], pd.Timestamp(key[0])
        lo, hi = stamps.searchsorted(at, "left"), stamps.searchsorted(at, "right")
        for i in range(lo, hi):
            if frame["speaker"].iat[i] == key[1] and frame["text"].iat[i] == key[2]:
                return int(frame.index[i])
        return None

    def _first_zone(self, turns: Sequence[dict]) -> None:
        """A memory made without a zone takes the one its first turns are written in (as a log read from a file
        does), and records it: its calendar, and every time it prints, are then in that zone."""
        if len(self.table) or self.store.get_meta("tz") is not None:
            return
        stamps = []
        for n, turn in enumerate(turns):
            value = turn.get("timestamp")
            if isinstance(value, str | datetime):
                stamps.append(self._timestamp(value, f"turn {n}"))
        zone = calendar_zone(None, stamps)
        if zone.source == "log":
            self.store.set_meta("tz", zone_name(zone.zone))
            self.store.set_meta("tz_source", "log")
            self.table.zone = zone
            self.table._zoned.clear()

    def _timestamp(self, value, where: str) -> datetime:
        if value is None:
            return datetime.now(timezone.utc).astimezone(self.table.zone.zone)
        if isinstance(value, str):
            parsed = read_timestamp(value)
            if parsed is None:
                raise ValueError(f"{where}: cannot read the timestamp {value!r}; use ISO 8601, e.g. "
                                 "2023-10-22T12:00:00+02:00")
            value = parsed
        if not isinstance(value, datetime):
            raise ValueError(f"{where}: a timestamp is an ISO 8601 string or a datetime, not {type(value).__name__}")
        return value.replace(tzinfo=self.table.zone.zone) if value.tzinfo is None else value

    def add_many(self, turns: Sequence[dict], embeddings: dict[str, np.ndarray] | None = None,
                 show_progress_bar: bool = False) -> Appended:
        """Append ``turns`` as one transaction (:meth:`new_rows`: exact duplicates skipped); each turn's row.
        ``embeddings`` (view -> (N, D), a row per turn): the vectors made elsewhere by this memory's encoder (a
        benchmark's cached encodings); else encoded."""
        if not turns:
            return Appended([], 0)
        self._first_zone(turns)
        rows, repeats = self.new_rows(turns)  # columns of Python values: a frame costs ms per turn (live_rows)
        roles = turn_roles([t for t, r in zip(turns, repeats) if r is None], rows["response_idx"])
        ids = iter(rows["response_idx"])
        appended = Appended([next(ids) if r is None else r for r in repeats], sum(r is not None for r in repeats))
        n = len(rows["response_idx"])
        if n == 0:
            return appended
        if embeddings is not None and n != len(turns):  # the caller's vectors are per turn: keep the new ones'
            keep = [i for i, r in enumerate(repeats) if r is None]
            embeddings = {v: e[keep] for v, e in embeddings.items()}
        previous = self.table.last_row()
        dense = view_texts(rows, previous, self.views)
        if embeddings is None:
            embeddings = {v: self.encoder.encode_documents(dense[v], show_progress_bar=show_progress_bar)
                          for v in self.views}
        for v in self.views:
            if embeddings[v].shape != (n, self.encoder.dim):
                raise ValueError(f"{v} embeddings of shape {embeddings[v].shape} for {n} rows")
        sparse = {v: own_texts(rows) if v == "text" else dense[v] for v in self.views}
        self._persist(rows, roles, embeddings, sparse)  # durable from here on
        self.roles.update(roles)
        self.table.append(rows, embeddings, sparse)
        return appended

    def _persist(self, rows: dict[str, list], roles: dict[int, str], embeddings: dict[str, np.ndarray],
                 sparse: dict[str, list[str]]) -> None:
        """Write new rows: to the database in one transaction (durable from then on), then their vectors to the
        vector files (a vector file behind the database is repaired on open). The BM25 texts (``sparse``) are the
        table's to index, in memory."""
        if self.store.columns is None or len(rows["response_idx"]) > SMALL_BATCH:  # the first rows make the table;
            self.store.append(records_frame(rows, self.table.zone.zone), roles)  # many convert by column
        else:
            self.store.append_records(rows, roles)
        for v in self.views:
            self.vectors[v].append(embeddings[v])

    def close(self) -> None:
        """Seal the BM25 tails and write the rows' snapshot (so a reopen re-reads nothing row by row), then
        release the database."""
        for bm25 in self.table.sparse.values():
            bm25.seal()
        write_snapshot(self.path, self.table.frame, self.store.json_columns())
        self.store.close()
        if self.lock is not None:
            self.lock.close()  # releases the lock
            self.lock = None


def dense_view(log: VectorLog, view: str, frame: pd.DataFrame, encoder) -> DenseIndex:
    """The flat index of one view from its vector file ``log``, after re-encoding the rows the file lacks."""
    n = len(frame)
    have = log.repair(n)
    if have < n:
        logger.warning("%s: %d of %d rows have no %s embedding (stopped before it was written); encoding them",
                       log.path, n - have, n, view)
        previous = frame.iloc[have - 1] if have else None
        texts = view_texts(frame.iloc[have:], previous, (view,))[view]
        log.append(encoder.encode_documents(texts, show_progress_bar=n - have >= REPAIR_PROGRESS_MIN))
    index = DenseIndex(encoder.dim, encoder_id=encoder.identity)
    if n:
        index.add(log.read(n), frame.index.tolist())
    return index


def sparse_view(folder: Path, view: str, frame: pd.DataFrame) -> SegmentedBM25:
    """BM25 of one view from its segments' ``folder``: its sealed segments, then the rows after them."""
    bm25 = SegmentedBM25.load(folder)
    if len(bm25) > len(frame):  # segments past the database: only a store rebuilt by hand does that
        logger.warning("%s: BM25 segments reach row %d, the database %d; indexing again", folder, len(bm25),
                       len(frame))
        for p in folder.glob("seg-*.npz"):
            p.unlink()
        bm25 = SegmentedBM25.load(folder)
    rest = frame.iloc[len(bm25):]
    if len(rest):
        bm25.add(sparse_texts(rest, frame.iloc[len(bm25) - 1] if len(bm25) else None, view))
    return bm25
