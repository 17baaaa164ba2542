"""A living memory kept in PostgreSQL: a :class:`~retrieval.memory.living_memory.LivingMemory` over a
:class:`~retrieval.memory.postgres.store.PostgresStore`, beside the folder engine
(:class:`~retrieval.memory.memory_folder.MemoryFolder`).

Appending is the embedded memory's (the same turn checks, duplicates, zone and session rules); what differs is
where the rows go (one transaction with their vectors and BM25 postings, nothing beside the database) and where
questions are ranked (:mod:`retrieval.memory.postgres.search`). On open, the rows are read back for the plan's
filters and the calendar (as the embedded memory reads its snapshot); nothing is encoded or indexed again.
"""

from __future__ import annotations

from datetime import timedelta

from models.dual_encoder import DualEncoder
from retrieval.data.conversation_log import DEFAULT_SESSION_GAP
from retrieval.data.timestamps import stored_zone
from retrieval.memory.live_rows import records_frame
from retrieval.memory.live_table import LiveTable
from retrieval.memory.living_memory import LivingMemory
from retrieval.memory.memory_settings import check_encoder, memory_settings
from retrieval.memory.postgres.search import PostgresBM25, PostgresDense
from retrieval.memory.postgres.store import PostgresStore, connect, redact, view_names
from retrieval.memory.snapshot import empty_frame
from retrieval.memory.store import FORMAT
from retrieval.search.index_record import recorded_precision


class NoSuchMemory(FileNotFoundError):
    """The database holds no memory of that name."""


def is_database_url(store: str | None) -> bool:
    return isinstance(store, str) and store.split("://", 1)[0] in ("postgresql", "postgres")


def memory_name(url: str, memory_id: str) -> str:
    """How messages name memory ``memory_id`` of the database at ``url`` (its password left out)."""
    return f"{redact(url)} memory {memory_id!r}"


class PostgresMemory(LivingMemory):
    """Memory ``memory_id`` in the PostgreSQL database at ``url`` (its store holds the writer's lock)."""

    path: str
    store: PostgresStore

    def __init__(self, url: str, memory_id: str, store: PostgresStore, encoder: DualEncoder, table: LiveTable,
                 views: tuple[str, ...], gap: timedelta):
        super().__init__(store, encoder, table, views, gap)
        self.url, self.memory_id = url, memory_id
        self.path = memory_name(url, memory_id)  # what messages name

    @classmethod
    def create(cls, url: str, memory_id: str, encoder: DualEncoder, encoder_spec: str | None = None,
               tz: str | None = None, session_gap: timedelta = DEFAULT_SESSION_GAP, turns: bool = True, name: str = "",
               key_hash: str | None = None) -> PostgresMemory:
        """A new, empty memory ``memory_id`` in the database (refused when one is there)."""
        store = PostgresStore(url, memory_id, encoder.dim, new=True)
        try:
            store.create(memory_settings(encoder, encoder_spec, tz, session_gap, turns), name, key_hash)
        finally:
            store.close()
        return cls.open(url, memory_id, encoder)

    @classmethod
    def open(cls, url: str, memory_id: str, encoder: DualEncoder | None = None) -> PostgresMemory:
        """Reopen memory ``memory_id`` (``encoder`` None: the one it records), holding its writer's lock."""
        conn = connect(url)
        try:
            dim = PostgresStore.memory_dim(conn, memory_id)
            if dim is None:
                raise NoSuchMemory(f"{redact(url)}: no memory {memory_id!r}; create one with create=True")
            store = PostgresStore(url, memory_id, dim, conn)
            store.lock()
        except BaseException:
            conn.close()
            raise
        try:
            return cls._open_locked(url, memory_id, store, encoder)
        except BaseException:
            store.close()
            raise

    @classmethod
    def _open_locked(cls, url: str, memory_id: str, store: PostgresStore,
                     encoder: DualEncoder | None) -> PostgresMemory:
        if store.get_meta("format") != FORMAT:
            raise ValueError(f"{redact(url)}: memory {memory_id!r} has format {store.get_meta('format')!r}, "
                             f"not {FORMAT}")
        if encoder is None:
            from models.dual_encoder import load_encoder

            encoder = load_encoder(store.get_meta("encoder_spec"), recorded_precision(store.get_meta("autocast")))
        check_encoder(store, encoder, memory_name(url, memory_id))
        views = view_names(store.get_meta("views"))
        tz = store.get_meta("tz")
        zone = stored_zone(tz, store.get_meta("tz_source"))
        frame = store.read(0, zone.zone) if store.count() else empty_frame(zone.zone)
        identity = encoder.identity  # hashed from the weights: once
        dense = {v: PostgresDense(store, v, identity) for v in views}
        sparse = {v: PostgresBM25(store, v) for v in views}
        table = LiveTable(frame, dense["text"], encoder, dense.get("turn"), zone, sparse)
        return cls(url, memory_id, store, encoder, table, views, timedelta(seconds=store.get_meta("session_gap_s")))

    def _persist(self, rows, roles, embeddings, sparse) -> None:
        """Rows, vectors and postings in one transaction."""
        first = self.store.columns is None  # the first rows make the column kinds: from a frame
        self.store.append(records_frame(rows, self.table.zone.zone) if first else rows, roles, embeddings, sparse)

    def close(self) -> None:
        """Release the database (and with it the memory's writer lock); nothing else to write."""
        self.store.close()

    def alive(self) -> bool:
        """Whether the database connection still answers."""
        return self.store.alive()
