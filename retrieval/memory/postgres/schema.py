"""The tables that hold many living memories in one PostgreSQL database (pgvector for the embeddings).

Every table carries ``memory_id`` first in its primary key: it is the tenant, the key every question filters on, and
the distribution column when the tables are spread over machines with Citus (:data:`CITUS`, ``docs/service.md``)::

    ctbls_memories        memory_id, meta (jsonb: encoder, zone, columns, ...), key_hash (the service's API key,
                          SHA-256), n_rows and the BM25 lengths per view (updated in each append's transaction)
    ctbls_turns_<dim>     one row per turn: response_idx (its position: the memory is in time order), session,
                          speaker, ts (timestamptz), text, role (NULL for what a person said), the other frame
                          columns as jsonb, and one vector(<dim>) per view ("text", "turn")
    ctbls_postings        BM25 postings: (memory_id, view, term, response_idx) -> tf, the document's length (in the
                          key's index too, so a term's postings are read by an index-only scan)
    ctbls_df              BM25 document frequencies: (memory_id, view, term) -> df

Turns go in a table per embedding size (``vector(384)`` for MiniLM), so one database holds memories of several
encoders. Indexes: the primary key (memory_id, response_idx) serves a time window (positions are in time order,
so the plan's time filter is a range of positions); (memory_id, ts), (memory_id, speaker) and (memory_id,
session) serve the same filters by value (export, a service's time query); HNSW (``vector_ip_ops``: the encoders'
vectors are unit-length, so inner product is their cosine) serves a ranked question over a large memory.
"""

from __future__ import annotations

VIEWS = ("text", "turn")  # the dense and BM25 views of a memory (retrieval.memory.living_memory)
HNSW = {"m": 16, "ef_construction": 64}  # pgvector's defaults, written out


def turns_table(dim: int) -> str:
    return f"ctbls_turns_{int(dim)}"


def schema_ddl(dim: int, hnsw: bool = True) -> list[str]:
    """The statements that create the schema for memories of embedding size ``dim`` (each idempotent). ``hnsw``
    False leaves out the HNSW indexes (a bulk load builds them after: :func:`hnsw_ddl`)."""
    turns = turns_table(dim)
    statements = [
        "CREATE EXTENSION IF NOT EXISTS vector",
        "CREATE TABLE IF NOT EXISTS ctbls_memories (memory_id text PRIMARY KEY, meta jsonb NOT NULL DEFAULT '{}', "
        "key_hash text, name text NOT NULL DEFAULT '', created timestamptz NOT NULL DEFAULT now(), "
        "n_rows bigint NOT NULL DEFAULT 0, length_text double precision NOT NULL DEFAULT 0, "
        "length_turn double precision NOT NULL DEFAULT 0)",
        f"CREATE TABLE IF NOT EXISTS {turns} (memory_id text NOT NULL, response_idx bigint NOT NULL, "
        "session integer NOT NULL, speaker text NOT NULL, ts timestamptz NOT NULL, text text NOT NULL, role text, "
        f"extra jsonb NOT NULL, embedding_text vector({int(dim)}) NOT NULL, embedding_turn vector({int(dim)}), "
        "PRIMARY KEY (memory_id, response_idx))",
        f"CREATE INDEX IF NOT EXISTS {turns}_ts ON {turns} (memory_id, ts)",
        f"CREATE INDEX IF NOT EXISTS {turns}_speaker ON {turns} (memory_id, speaker)",
        f"CREATE INDEX IF NOT EXISTS {turns}_session ON {turns} (memory_id, session)",
        "CREATE TABLE IF NOT EXISTS ctbls_postings (memory_id text NOT NULL, view text NOT NULL, term text NOT NULL, "
        "response_idx bigint NOT NULL, tf real NOT NULL, dl real NOT NULL, "
        "PRIMARY KEY (memory_id, view, term, response_idx) INCLUDE (tf, dl))",
        "CREATE TABLE IF NOT EXISTS ctbls_df (memory_id text NOT NULL, view text NOT NULL, term text NOT NULL, "
        "df bigint NOT NULL, PRIMARY KEY (memory_id, view, term))",
    ]
    return statements + (hnsw_ddl(dim) if hnsw else [])


def hnsw_ddl(dim: int) -> list[str]:
    """The HNSW index of each view's vectors."""
    turns, options = turns_table(dim), ", ".join(f"{k} = {v}" for k, v in HNSW.items())
    return [f"CREATE INDEX IF NOT EXISTS {turns}_hnsw_{view} ON {turns} USING hnsw (embedding_{view} vector_ip_ops) "
            f"WITH ({options})" for view in VIEWS]


# Run once on a Citus coordinator after schema_ddl: every table distributed by memory_id and co-located, so a
# memory's rows, postings and statistics sit on one worker and each question runs there alone.
CITUS = [
    "SELECT create_distributed_table('ctbls_memories', 'memory_id')",
    "SELECT create_distributed_table('{turns}', 'memory_id', colocate_with => 'ctbls_memories')",
    "SELECT create_distributed_table('ctbls_postings', 'memory_id', colocate_with => 'ctbls_memories')",
    "SELECT create_distributed_table('ctbls_df', 'memory_id', colocate_with => 'ctbls_memories')",
]


def citus_ddl(dim: int) -> list[str]:
    """:data:`CITUS` for memories of embedding size ``dim``."""
    return [s.format(turns=turns_table(dim)) for s in CITUS]


def create_schema(conn, dim: int, hnsw: bool = True) -> None:
    """Create the schema (what is missing of it) in one transaction, serialised with other processes doing the
    same (an advisory lock: ``CREATE ... IF NOT EXISTS`` alone races on the catalog). The HNSW indexes are made
    with the turns table only: an operator who drops them (a bulk load indexes after it, as pgvector advises; or
    exact search is preferred) is not overruled by the next open."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(7246001)")
        new = conn.execute("SELECT to_regclass(%s) IS NULL", (turns_table(dim),)).fetchone()[0]
        for statement in schema_ddl(dim, hnsw and new):
            conn.execute(statement)
