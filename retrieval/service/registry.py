"""The memories a service holds: one folder each under a root, an API key each, opened once and shared.

    root/
        registry.sqlite        memory id, name, the key's hash, when it was made (SQLite, WAL)
        <memory id>/           a living memory's folder (retrieval.memory.memory_folder)

A key is 32 random bytes (``secrets.token_urlsafe``), shown once when the memory is made; only its SHA-256 is
stored. A fast hash is enough for a random 256-bit secret (nothing to guess from a dictionary), and keys are
compared with ``hmac.compare_digest``, in constant time. A memory's key opens that memory only: every request
names a memory and is checked against that memory's hash.

Making a memory writes its folder first, then its registry row (one transaction): a crash between the two leaves
a folder with no row, which is never served and is removed on the next start. One process serves a root (each
memory folder takes an exclusive lock while open); requests to one memory are serialised by its lock, requests
to different memories run in parallel.

With ``store`` (a PostgreSQL URL) the memories live in that database (``retrieval.memory.postgres``): the registry
is the database's ``ctbls_memories`` table (id, name, key hash and the memory's settings in one row, written in one
transaction with the memory itself, so there is no orphan to remove), and ``root`` holds nothing. Several service
processes can share the database: each memory is open in one process at a time (its advisory lock), and a request
for a memory another process holds is refused with its name (a front proxy routes a memory's requests to one
process: by memory id, as Citus places its rows by memory id).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import shutil
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from models.dual_encoder import DualEncoder
from retrieval.memory.folder_lock import MemoryInUseError
from retrieval.memory.relevance.rerank import second_stage
from retrieval.memory.temporal_memory import TemporalMemory
from retrieval.memory.when_answer import EVIDENCE_RULE

REGISTRY = "registry.sqlite"
# memories held open at once (each holds its rows in memory, and on PostgreSQL a connection: the server's default
# max_connections is 100); the least recently used idle one is closed past this
MAX_OPEN = 64


class StoreUnavailable(ConnectionError):
    """The database behind the memories is down or was restarted: the request was not served (an append in it may or
    may not have been committed: ask the memory, or send it again; an exact duplicate is skipped)."""


def database_errors() -> tuple[type[BaseException], ...]:
    """The exceptions that mean the database connection is gone, not that the request was wrong."""
    import psycopg

    from retrieval.memory.postgres.store import DatabaseUnavailable

    return DatabaseUnavailable, psycopg.OperationalError, psycopg.InterfaceError


class AccessDenied(PermissionError):
    """No such memory, or the key is not this memory's (the two are not told apart)."""


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class MemoryRegistry:
    """The root's memories: make one, check a key, hold a memory open for a request."""

    def __init__(self, root: str | Path, encoder: DualEncoder, tz: str | None = None, store: str | None = None,
                 max_open: int = MAX_OPEN, relevance: str | None = None):
        self.root, self.encoder, self.tz, self.store, self.max_open = Path(root), encoder, tz, store, max_open
        # every memory's second stage and evidence rule (retrieval.memory.relevance.rerank.second_stage: "auto",
        # "packaged", a model folder), or the hand-tuned ranking's (None, "none")
        self.relevance, self.evidence_rule = second_stage(relevance, EVIDENCE_RULE, encoder.identity)
        self._lock = threading.Lock()  # the registry's own state: rows, open memories
        self._open: OrderedDict[str, tuple[TemporalMemory, threading.Lock]] = OrderedDict()  # least recent first
        if store is not None:
            from retrieval.memory.postgres.schema import create_schema
            from retrieval.memory.postgres.store import connect

            self.db = connect(store)
            create_schema(self.db, encoder.dim)
            return
        self.root.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(self.root / REGISTRY), isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")  # a key handed out is a key kept
        self.db.execute("CREATE TABLE IF NOT EXISTS memories (id TEXT PRIMARY KEY, name TEXT NOT NULL, "
                        "key_hash TEXT NOT NULL, created TEXT NOT NULL)")
        self._remove_orphans()

    def _ids(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT id FROM memories")}

    def _row(self, memory_id: str) -> tuple[str, str] | None:
        """(key hash, name) of ``memory_id``, or None."""
        if self.store is None:
            return self.db.execute("SELECT key_hash, name FROM memories WHERE id = ?", (memory_id,)).fetchone()
        query = "SELECT key_hash, name FROM ctbls_memories WHERE memory_id = %s AND key_hash IS NOT NULL"
        with self._lock:  # one connection, shared by the request threads
            try:
                return self.db.execute(query, (memory_id,)).fetchone()
            except database_errors():  # the database was restarted: connect again, once
                from retrieval.memory.postgres.store import connect

                try:
                    self.db = connect(self.store)
                    return self.db.execute(query, (memory_id,)).fetchone()
                except database_errors() as e:
                    raise StoreUnavailable(f"the memories' database is unavailable ({e})") from e

    def _remove_orphans(self) -> None:
        """Folders left by a crash between a memory's folder and its registry row."""
        known = self._ids()
        for path in self.root.iterdir():
            if path.is_dir() and path.name.startswith("m") and path.name not in known:
                shutil.rmtree(path)

    def create(self, name: str = "", tz: str | None = None) -> tuple[str, str]:
        """A new empty memory: (its id, its API key). The key is not stored and cannot be shown again."""
        memory_id, key = "m" + secrets.token_hex(8), secrets.token_urlsafe(32)
        if self.store is not None:  # the memory and its key in one row, one transaction
            from retrieval.memory.postgres.memory import PostgresMemory

            folder = PostgresMemory.create(self.store, memory_id, self.encoder, tz=tz or self.tz, name=name,
                                           key_hash=key_hash(key))
            with self._lock:
                memory = TemporalMemory.wrap(folder, relevance=self.relevance, evidence_rule=self.evidence_rule)
                self._open[memory_id] = (memory, threading.Lock())
                self._close_idle(keep=memory_id)
            return memory_id, key
        with self._lock:
            memory = TemporalMemory.open(self.root / memory_id, encoder=self.encoder, create=True, tz=tz or self.tz,
                                         relevance=self.relevance, evidence_rule=self.evidence_rule)
            self.db.execute("INSERT INTO memories VALUES (?, ?, ?, ?)",
                            (memory_id, name, key_hash(key), datetime.now(timezone.utc).isoformat()))
            self._open[memory_id] = (memory, threading.Lock())
            self._close_idle(keep=memory_id)
        return memory_id, key

    def check(self, memory_id: str, key: str | None) -> None:
        """Raise :class:`AccessDenied` unless ``key`` is ``memory_id``'s key."""
        row = self._row(memory_id)
        given = key_hash(key or "")
        stored = row[0] if row else key_hash(secrets.token_urlsafe(32))  # compared all the same: no timing tell
        if not hmac.compare_digest(given, stored) or row is None or not key:
            raise AccessDenied(f"memory {memory_id!r}: no such memory, or not its key")

    def name(self, memory_id: str) -> str:
        row = self._row(memory_id)
        return row[1] if row else ""

    @contextmanager
    def use(self, memory_id: str, key: str | None) -> Iterator[TemporalMemory]:
        """The memory, checked against ``key``, held by this request alone until the block ends. On PostgreSQL its
        connection is checked first (held alone, so no other request is using it): after a database restart the
        memory is reopened rather than failing the request."""
        self.check(memory_id, key)
        lost = database_errors() if self.store else ()
        for _ in range(2):
            memory, lock = self._held(memory_id, lost)
            lock.acquire()
            if not self.store or memory.living().alive():
                break
            lock.release()
            self._discard(memory_id, memory)
        else:
            raise StoreUnavailable(f"memory {memory_id!r}: its database connection does not answer")
        try:
            yield memory
        except lost as e:  # its connection is gone, and what it holds in memory may be behind the database:
            self._discard(memory_id, memory)  # reopened from the database on the next request
            raise StoreUnavailable(f"memory {memory_id!r}: its database connection was lost ({e})") from e
        finally:
            lock.release()

    def _held(self, memory_id: str, lost: tuple) -> tuple[TemporalMemory, threading.Lock]:
        """The open memory and its request lock (opened now when it is not)."""
        with self._lock:
            if memory_id not in self._open:
                try:
                    memory = TemporalMemory.open(memory_id if self.store else self.root / memory_id,
                                                 encoder=self.encoder, store=self.store, relevance=self.relevance,
                                                 evidence_rule=self.evidence_rule)
                except lost as e:
                    raise StoreUnavailable(f"memory {memory_id!r}: its database is unavailable ({e})") from e
                except MemoryInUseError as e:  # another service process holds it: its requests go there
                    raise StoreUnavailable(f"memory {memory_id!r} is open in another process ({e})") from e
                self._open[memory_id] = (memory, threading.Lock())
            self._open.move_to_end(memory_id)
            self._close_idle(keep=memory_id)
            return self._open[memory_id]

    def _discard(self, memory_id: str, memory: TemporalMemory) -> None:
        with self._lock:
            if self._open.get(memory_id, (None,))[0] is memory:
                del self._open[memory_id]
        self._quiet_close(memory)

    @staticmethod
    def _quiet_close(memory: TemporalMemory) -> None:
        try:
            memory.close()
        except Exception:  # noqa: BLE001 - the connection is already broken; closing is only tidying
            pass

    def _close_idle(self, keep: str) -> None:
        """Past ``max_open`` open memories, close the least recently used one no request holds (its snapshot
        written, its database connection returned); it reopens on its next request. Called under ``_lock``."""
        if len(self._open) <= self.max_open:
            return
        for memory_id, (memory, lock) in list(self._open.items()):
            if memory_id != keep and lock.acquire(blocking=False):
                try:
                    memory.close()
                    del self._open[memory_id]
                finally:
                    lock.release()
                return

    def close(self) -> None:
        """Close every open memory (snapshots written, locks released) and the registry."""
        with self._lock:
            for memory, lock in self._open.values():
                with lock:
                    memory.close()
            self._open.clear()
            self.db.close()
