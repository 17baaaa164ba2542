"""One memory's rows in a PostgreSQL database shared by many memories: the :class:`MemoryStore` of the server engine.

The rows a memory appends, their embeddings (one ``vector`` per view) and their BM25 postings go to the database in
one transaction (:meth:`PostgresStore.append`): a turn is there with everything a question needs, or not at all,
and what is committed survives a crash of this process or of the database server (PostgreSQL's write-ahead log).
Nothing of the memory lives beside the database, so a memory needs no snapshot and no repair on open.

The columns the plan filters on are native columns (``response_idx``, ``session``, ``speaker``, ``ts``, ``text``,
``role``); the frame's other columns (calendar, event time) go to ``extra`` as jsonb, each stored as
:func:`~retrieval.memory.store.scalar` stores it, and come back with the same dtypes as the embedded store gives.

One writer per memory: the store holds a session-level advisory lock on the memory id while it is open (released
when the connection ends, so a killed process never leaves it locked).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pandas as pd
from psycopg.types.json import Jsonb

from retrieval.memory.folder_lock import MemoryInUseError
from retrieval.memory.live_rows import INT32_COLUMNS
from retrieval.memory.postgres.schema import VIEWS, create_schema, turns_table
from retrieval.memory.store import column_kind, from_sql_column, scalar
from retrieval.search.sparse_segments import Tokenizer

WORK_MEM_MB = 64
NATIVE = ("response_idx", "session", "speaker", "timestamp", "text")  # frame columns stored as table columns


class DatabaseUnavailable(ConnectionError):
    """The database cannot be reached, or the connection to it was lost (a restart, a network cut): retry later."""


def connect(url: str):
    """A psycopg connection (autocommit; transactions are explicit) with pgvector's types registered."""
    try:
        import psycopg
        from pgvector.psycopg import register_vector
    except ImportError as e:  # pragma: no cover - both are dependencies of the project
        raise ImportError("the PostgreSQL engine needs psycopg 3 and pgvector: pip install 'psycopg[binary]' "
                          "pgvector") from e
    try:
        conn = psycopg.connect(url, autocommit=True)
    except psycopg.OperationalError as e:
        raise DatabaseUnavailable(f"{redact(url)}: cannot connect to PostgreSQL ({e})") from e
    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    # a question over a large memory aggregates BM25 postings per row: in memory, not spilled to disk (4 MB default)
    conn.execute(f"SET work_mem = '{WORK_MEM_MB}MB'")
    register_vector(conn)
    return conn


def redact(url: str) -> str:
    """``url`` without its password, for messages."""
    if "@" not in url or "://" not in url:
        return url
    scheme, rest = url.split("://", 1)
    auth, host = rest.rsplit("@", 1)
    return f"{scheme}://{auth.split(':', 1)[0]}:***@{host}" if ":" in auth else url


class PostgresStore:
    """The rows, vectors, postings and settings of memory ``memory_id`` in the database at ``url``."""

    def __init__(self, url: str, memory_id: str, dim: int, conn=None, new: bool = False):
        """``new``: the memory is about to be made (the schema is created where missing); else it exists."""
        self.url, self.memory_id, self.dim = url, memory_id, int(dim)
        self.db = conn if conn is not None else connect(url)
        if new:
            create_schema(self.db, self.dim)
        self.turns = turns_table(self.dim)
        self.tokenize = Tokenizer()
        self.columns: list[tuple[str, str]] | None = None
        stored = self.get_meta("columns")
        if stored is not None:
            self.columns = [tuple(c) for c in stored]
        # the row count and BM25 lengths, read once: this store is the memory's one writer (its advisory lock), so
        # it keeps them as its appends commit, and a question's rankings ask the database nothing for them
        self._statistics = self._read_statistics()

    # ---- the memory's row in ctbls_memories -----------------------------------------------------------------
    @staticmethod
    def exists(conn, memory_id: str) -> bool:
        if conn.execute("SELECT to_regclass('ctbls_memories')").fetchone()[0] is None:  # no schema yet: no memory
            return False
        return conn.execute("SELECT 1 FROM ctbls_memories WHERE memory_id = %s", (memory_id,)).fetchone() is not None

    @staticmethod
    def memory_dim(conn, memory_id: str) -> int | None:
        """The embedding size memory ``memory_id`` was made with (None: no such memory)."""
        if not PostgresStore.exists(conn, memory_id):
            return None
        row = conn.execute("SELECT meta->'dim' FROM ctbls_memories WHERE memory_id = %s", (memory_id,)).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def create(self, meta: dict, name: str = "", key_hash: str | None = None) -> None:
        """Add the memory's row (refused, naming it, when one is there)."""
        with self.db.transaction():
            done = self.db.execute("INSERT INTO ctbls_memories (memory_id, meta, name, key_hash) VALUES "
                                   "(%s, %s, %s, %s) ON CONFLICT DO NOTHING RETURNING 1",
                                   (self.memory_id, json.dumps(meta), name, key_hash)).fetchone()
        if done is None:
            raise FileExistsError(f"{redact(self.url)}: memory {self.memory_id!r} is already there; open it")

    def lock(self) -> None:
        """Take the memory's advisory lock for this connection's life (one writer per memory)."""
        got = self.db.execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (self.memory_id,)).fetchone()
        if not got[0]:
            raise MemoryInUseError(f"{redact(self.url)}: memory {self.memory_id!r} is open in another process or "
                                   "object; close it first (one writer at a time)")

    def alive(self) -> bool:
        """Whether the connection still works (one round trip): after a database restart every connection is gone,
        and a connection only learns it when next used."""
        import psycopg

        try:
            self.db.execute("SELECT 1")
            return True
        except (psycopg.OperationalError, psycopg.InterfaceError):
            return False

    def set_fsync(self, fsync: bool) -> None:
        """Nothing to set: PostgreSQL flushes each commit to its write-ahead log before it returns
        (``synchronous_commit`` on, its default; the guarantee every acknowledged append relies on)."""

    def get_meta(self, key: str, default=None):
        row = self.db.execute("SELECT meta -> %s FROM ctbls_memories WHERE memory_id = %s",
                              (key, self.memory_id)).fetchone()
        return default if row is None or row[0] is None else row[0]

    def set_meta(self, key: str, value) -> None:
        self.db.execute("UPDATE ctbls_memories SET meta = meta || jsonb_build_object(%s::text, %s::jsonb) "
                        "WHERE memory_id = %s", (key, json.dumps(value), self.memory_id))

    def statistics(self) -> tuple[int, dict[str, float]]:
        """Rows stored, and the BM25 length (tokens) of all of them per view."""
        return self._statistics[0], dict(self._statistics[1])

    def _read_statistics(self) -> tuple[int, dict[str, float]]:
        row = self.db.execute("SELECT n_rows, length_text, length_turn FROM ctbls_memories WHERE memory_id = %s",
                              (self.memory_id,)).fetchone()
        return (0, {"text": 0.0, "turn": 0.0}) if row is None else (int(row[0]), {"text": float(row[1]),
                                                                             "turn": float(row[2])})

    # ---- rows ---------------------------------------------------------------------------------------------
    def json_columns(self) -> list[str]:
        return [n for n, k in (self.columns or []) if k == "json"]

    def count(self) -> int:
        return self.statistics()[0]

    def roles(self) -> dict[int, str]:
        cur = self.db.execute(f"SELECT response_idx, role FROM {self.turns} WHERE memory_id = %s AND role IS NOT "
                              "NULL", (self.memory_id,))
        return {int(i): r for i, r in cur.fetchall()}

    def append(self, rows: pd.DataFrame | dict[str, list], roles: dict[int, str] | None = None,
               embeddings: dict[str, np.ndarray] | None = None, sparse: dict[str, list[str]] | None = None) -> None:
        """Add ``rows`` (a frame, or columns of Python values) with their ``roles``, one embedding per row and view
        (``embeddings``: the "text" view at least) and the texts BM25 indexes per view (``sparse``), in one
        transaction."""
        records = {c: rows[c].tolist() for c in rows.columns} if isinstance(rows, pd.DataFrame) else rows
        columns = self.columns
        first = columns is None  # the memory's first rows: their column kinds are recorded with them
        if columns is None:
            frame = rows if isinstance(rows, pd.DataFrame) else None
            if frame is None:
                raise ValueError("the memory's first rows come as a frame (their column kinds are read from it)")
            columns = self.columns = [(name, column_kind(frame[name])) for name in frame.columns]
            if "response_idx" not in frame.columns:
                raise ValueError("a memory's rows need a response_idx column")
        names = [n for n, _ in columns]
        if list(records) != names:
            raise ValueError(f"rows have columns {list(records)}, the memory stores {names}")
        n = len(records["response_idx"])
        if n == 0:
            return
        embeddings = embeddings or {}
        if "text" not in embeddings or len(embeddings["text"]) != n:
            raise ValueError(f"{n} rows need {n} 'text' embeddings")
        postings = {view: self.tokenize(list(texts)) for view, texts in (sparse or {}).items()}
        try:
            with self.db.transaction():
                if first:
                    self.set_meta("columns", [list(c) for c in columns])
                self._copy_turns(records, columns, roles or {}, embeddings)
                lengths = {view: self._copy_postings(view, records["response_idx"], tokens)
                           for view, tokens in postings.items()}
                self.db.execute("UPDATE ctbls_memories SET n_rows = n_rows + %s, length_text = length_text + %s, "
                                "length_turn = length_turn + %s WHERE memory_id = %s",
                                (n, lengths.get("text", 0.0), lengths.get("turn", 0.0), self.memory_id))
        except BaseException:
            if first:  # nothing was recorded: the next rows make the kinds again
                self.columns = None
            raise
        count, total = self._statistics
        self._statistics = (count + n, {v: total[v] + lengths.get(v, 0.0) for v in total})

    def _copy_turns(self, records: dict[str, list], columns: list[tuple[str, str]], roles: dict[int, str],
                    embeddings: dict[str, np.ndarray]) -> None:
        extra = [(name, kind) for name, kind in columns if name not in NATIVE]
        turn = embeddings.get("turn")
        cols = "memory_id, response_idx, session, speaker, ts, text, role, extra, embedding_text, embedding_turn"
        with self.db.cursor().copy(f"COPY {self.turns} ({cols}) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(["text", "int8", "int4", "text", "timestamptz", "text", "text", "jsonb", "vector",
                            "vector"])
            for i, idx in enumerate(records["response_idx"]):
                ts = records["timestamp"][i]
                values = {name: scalar(records[name][i], kind) for name, kind in extra}
                copy.write_row((self.memory_id, int(idx), int(records["session"][i]), records["speaker"][i],
                                ts.to_pydatetime() if isinstance(ts, pd.Timestamp) else ts, records["text"][i],
                                roles.get(int(idx)), Jsonb(values), embeddings["text"][i],
                                None if turn is None else turn[i]))

    def _copy_postings(self, view: str, ids: Sequence[int], tokens: Sequence[list[str]]) -> float:
        """Write one view's postings and document frequencies; the tokens added (the view's length grows by it)."""
        df: Counter = Counter()
        total = 0.0
        with self.db.cursor().copy("COPY ctbls_postings (memory_id, view, term, response_idx, tf, dl) FROM STDIN "
                                   "(FORMAT BINARY)") as copy:
            copy.set_types(["text", "text", "text", "int8", "float4", "float4"])
            for idx, toks in zip(ids, tokens):
                counts = Counter(toks)
                total += len(toks)
                df.update(counts.keys())
                for term, tf in counts.items():
                    copy.write_row((self.memory_id, view, term, int(idx), float(tf), float(len(toks))))
        if df:
            terms = list(df)
            self.db.execute("INSERT INTO ctbls_df (memory_id, view, term, df) SELECT %s, %s, t, d FROM "
                            "unnest(%s::text[], %s::int8[]) AS u(t, d) ON CONFLICT (memory_id, view, term) DO "
                            "UPDATE SET df = ctbls_df.df + EXCLUDED.df",
                            (self.memory_id, view, terms, [df[t] for t in terms]))
        return total

    def read(self, start: int = 0, zone=None) -> pd.DataFrame:
        """Rows from position ``start``, timestamps in ``zone``, indexed by response_idx."""
        if self.columns is None:
            return pd.DataFrame()
        cur = self.db.execute(
            "SELECT response_idx, session, speaker, (extract(epoch FROM ts) * 1000000)::int8, text, extra "
            f"FROM {self.turns} WHERE memory_id = %s AND response_idx >= %s ORDER BY response_idx",
            (self.memory_id, start))
        rows = cur.fetchall()
        native = dict(zip(NATIVE, zip(*rows))) if rows else {name: () for name in NATIVE}
        frame = {}
        for name, kind in self.columns:
            values = list(native[name]) if name in NATIVE else [r[5].get(name) for r in rows]
            frame[name] = from_sql_column(values, kind, zone)
        out = pd.DataFrame(frame)
        for name in INT32_COLUMNS:  # as the frame of new rows has them (DatetimeIndex.hour / .year)
            if name in out.columns:
                out[name] = out[name].astype(np.int32)
        out.index = pd.Index(out["response_idx"].to_numpy())
        return out

    def close(self) -> None:
        self.db.close()  # ends the session: the advisory lock goes with it


def view_names(views: Sequence[str]) -> tuple[str, ...]:
    unknown = set(views) - set(VIEWS)
    if unknown:
        raise ValueError(f"views {sorted(unknown)}: a PostgreSQL memory has the views {VIEWS}")
    return tuple(views)
