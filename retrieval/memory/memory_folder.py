"""A living memory kept in a folder that survives a restart or a crash (:class:`MemoryFolder`).

Folder layout (``TemporalMemory.open(path)``)::

    memory.sqlite            the rows and the settings (retrieval.memory.store, SQLite in WAL mode)
    rows-<count>.parquet     a snapshot of the first <count> rows, written on close (one read on open)
    vectors-text.f32         one embedding per row, the utterance alone (retrieval.search.vector_log)
    vectors-turn.f32         the same for the turn view (turn_texts), when the memory has it
    bm25-text/seg-*.npz      BM25 postings segments over "speaker: text" (retrieval.search.sparse_segments)
    bm25-turn/seg-*.npz      the same over the turn view

**Appending** (:meth:`~retrieval.memory.living_memory.LivingMemory.add_many`): the rows are committed to the
database in one transaction (from then on they are durable), then their vectors appended to the vector files.

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
from datetime import timedelta
from pathlib import Path
from typing import TextIO

import numpy as np
import pandas as pd

from models.dual_encoder import DualEncoder
from models.encoder import Encoder
from retrieval.data.conversation_log import DEFAULT_SESSION_GAP
from retrieval.data.jsonio import DataError
from retrieval.data.timestamps import stored_zone
from retrieval.memory.folder_lock import take_lock
from retrieval.memory.live_rows import records_frame, sparse_texts, view_texts
from retrieval.memory.live_table import LiveTable
from retrieval.memory.living_memory import LivingMemory
from retrieval.memory.memory_settings import check_encoder, memory_settings
from retrieval.memory.snapshot import read_frame, recovery_hint, write_snapshot
from retrieval.memory.store import DB_NAME, FORMAT, SMALL_BATCH, SQLiteStore
from retrieval.search.dense_index import DenseIndex
from retrieval.search.index_record import recorded_precision
from retrieval.search.sparse_segments import SegmentedBM25
from retrieval.search.vector_log import VectorLog

logger = logging.getLogger(__name__)

REPAIR_PROGRESS_MIN = 1000  # re-encoding this many rows or more shows a progress bar


class MemoryFolder(LivingMemory):
    """The folder of a living memory: its store, vector files, indices and settings; see the module docstring."""

    path: Path
    store: SQLiteStore

    def __init__(self, path: Path, store: SQLiteStore, encoder: DualEncoder, table: LiveTable, views: tuple[str, ...],
                 gap: timedelta, vectors: dict[str, VectorLog], lock: TextIO | None = None):
        super().__init__(store, encoder, table, views, gap)
        self.path, self.vectors = path, vectors
        self.lock = lock  # the writer's lock (retrieval.memory.folder_lock), released by close

    # ---- creating and opening -----------------------------------------------------------------------------
    @staticmethod
    def exists(path: str | Path) -> bool:
        return (Path(path) / DB_NAME).is_file()

    @classmethod
    def create(cls, path: str | Path, encoder: DualEncoder, encoder_spec: str | None = None, tz: str | None = None,
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
    def open(cls, path: str | Path, encoder: DualEncoder | None = None, fsync: bool = False) -> MemoryFolder:
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
    def _open_locked(cls, path: Path, encoder: DualEncoder | None, fsync: bool, lock: TextIO) -> MemoryFolder:
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
        zone = stored_zone(tz, store.get_meta("tz_source"))
        views = tuple(store.get_meta("views"))
        frame = read_frame(path, store, zone.zone)
        vectors = {v: VectorLog(path / f"vectors-{v}.f32", encoder.dim) for v in views}
        dense = {v: dense_view(vectors[v], v, frame, encoder) for v in views}
        sparse = {v: sparse_view(path / f"bm25-{v}", v, frame) for v in views}
        table = LiveTable(frame, dense["text"], encoder, dense.get("turn"), zone, sparse)
        return cls(path, store, encoder, table, views, timedelta(seconds=store.get_meta("session_gap_s")), vectors,
                   lock)

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


def dense_view(log: VectorLog, view: str, frame: pd.DataFrame, encoder: Encoder) -> DenseIndex:
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
