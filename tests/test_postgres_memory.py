"""The living memory on PostgreSQL + pgvector (a real server from ``pgserver``): the same answers as the embedded
memory, many memories apart in one database, one writer each, nothing lost to a SIGKILL, the schema Citus needs."""

from __future__ import annotations

import json
import random
import textwrap

import numpy as np
import psycopg
import pytest

from models.dual_encoder import DualEncoder
from retrieval.memory.folder_lock import MemoryInUseError
from retrieval.memory.postgres.schema import citus_ddl, turns_table
from retrieval.memory.postgres.search import PostgresBM25, PostgresDense, position_filter
from retrieval.memory.postgres.store import PostgresStore
from retrieval.memory.temporal_memory import TemporalMemory
from retrieval.search.dense_index import DenseIndex
from retrieval.search.sparse_segments import SegmentedBM25
from tests.test_live_memory import ROOT, answers, assert_whole, kill_in_a_loop, turn, turn_text


@pytest.fixture(scope="module")
def encoder(tiny_backbone):
    return DualEncoder.from_backbone(tiny_backbone)


def test_position_filter_sends_ranges_or_an_array():
    assert position_filter(None) == ("TRUE", [])
    assert position_filter(np.array([], dtype=np.int64)) == ("FALSE", [])
    assert position_filter(np.array([3, 4, 5, 9])) == ("(response_idx BETWEEN %s AND %s OR response_idx BETWEEN "
                                                       "%s AND %s)", [3, 5, 9, 9])
    scattered = np.arange(0, 100, 2)
    assert position_filter(scattered) == ("response_idx = ANY(%s)", [scattered.tolist()])


def test_the_postgres_memory_answers_as_the_embedded_one(tmp_path, encoder, tiny_backbone, postgres_url):
    turns = [turn(i) for i in range(40)]
    embedded = TemporalMemory.open(tmp_path / "m", encoder=encoder, create=True, encoder_spec=tiny_backbone)
    database = TemporalMemory.open("ann", encoder=encoder, create=True, encoder_spec=tiny_backbone,
                                   store=postgres_url)
    for memory in (embedded, database):
        memory.add_many(turns[:25])  # one batch over SMALL_BATCH, then single turns, as a chat adds them
        for t in turns[25:]:
            memory.add(**t)
    assert answers(database) == answers(embedded)
    database.close()
    reopened = TemporalMemory.open("ann", encoder=encoder, store=postgres_url)
    assert answers(reopened) == answers(embedded)
    mine, theirs = reopened.table.frame, embedded.table.frame
    assert list(mine.columns) == list(theirs.columns) and list(mine.index) == list(theirs.index)
    for name in ("session", "speaker", "timestamp", "date", "hour", "text", "event_start"):
        assert mine[name].astype(str).tolist() == theirs[name].astype(str).tolist(), name
    assert reopened.add(**turns[3]) == 3  # an exact duplicate is found in the database's rows too
    reopened.close()
    embedded.close()


def test_bm25_from_tables_scores_as_the_segment_index(encoder, postgres_url):
    texts = [turn_text(i) for i in range(200)]
    memory = TemporalMemory.open("bm25", encoder=encoder, create=True, turns=False, store=postgres_url)
    memory.add_many([{"speaker": "Ann", "text": t, "timestamp": f"2023-05-01T09:{i // 60:02d}:{i % 60:02d}+00:00"}
                     for i, t in enumerate(texts)])
    sql = PostgresBM25(memory.folder.store, "text")
    segments = SegmentedBM25()
    segments.add([f"Ann: {t}" for t in texts])
    subset = sorted(random.Random(0).sample(range(200), 30))
    for q in ("dog park", "guitar concert with my sister", "turn 17", "the of and", "zebra"):
        for rows in (None, subset, range(50, 80)):
            expected = segments.search([q], 10, rows)[0]
            got = sql.search([q], 10, rows)[0]
            assert [i for i, _ in got] == [i for i, _ in expected], (q, rows)
            np.testing.assert_allclose([s for _, s in got], [s for _, s in expected], rtol=1e-5)
    memory.close()


def test_dense_ranking_exact_and_by_hnsw(encoder, postgres_url):
    memory = TemporalMemory.open("dense", encoder=encoder, create=True, turns=False, store=postgres_url)
    memory.add_many([turn(i) for i in range(120)])
    store = memory.folder.store
    vectors = encoder.encode_documents([turn_text(i) for i in range(120)])
    flat = DenseIndex(encoder.dim)
    flat.add(vectors, list(range(120)))
    query = encoder.encode_queries(["a guitar concert with my sister"])
    exact, hnsw = PostgresDense(store, "text", None), PostgresDense(store, "text", None, approximate_from=1)
    for rows in (None, range(10, 40), [5, 17, 33, 90]):
        expected = [i for i, _ in flat.search(query, 8, rows)[0]]
        assert [i for i, _ in exact.search(query, 8, rows)[0]] == expected
    # the HNSW path on 120 rows finds the same nearest rows (a small graph is searched whole)
    assert [i for i, _ in hnsw.search(query, 8)[0]] == [i for i, _ in flat.search(query, 8)[0]]
    memory.close()


def test_many_memories_in_one_database_never_see_each_other(encoder, postgres_url):
    ann = TemporalMemory.open("ann", encoder=encoder, create=True, store=postgres_url)
    bob = TemporalMemory.open("bob", encoder=encoder, create=True, store=postgres_url)
    ann.add_many([turn(i) for i in range(10)])
    bob.add_many([{**turn(i), "text": f"bob's secret number {i}"} for i in range(6)])
    assert len(ann.table) == 10 and len(bob.table) == 6
    assert all("secret" not in t for t in ann.table.frame["text"])
    result = ann.ask("What did we say about the secret number?")
    assert result.ids and set(result.ids) <= set(range(10))
    assert all("secret" not in t for t in ann.table.frame.loc[result.ids, "text"])
    with pytest.raises(FileExistsError, match="'bob' is already there"):
        from retrieval.memory.postgres.memory import PostgresMemory

        PostgresMemory.create(postgres_url, "bob", encoder)
    ann.close()
    bob.close()


def test_one_writer_per_memory(encoder, postgres_url):
    first = TemporalMemory.open("solo", encoder=encoder, create=True, store=postgres_url)
    with pytest.raises(MemoryInUseError, match="'solo' is open"):
        TemporalMemory.open("solo", encoder=encoder, store=postgres_url)
    first.close()
    TemporalMemory.open("solo", encoder=encoder, store=postgres_url).close()
    with pytest.raises(FileNotFoundError, match="no memory 'nobody'"):
        TemporalMemory.open("nobody", encoder=encoder, store=postgres_url)
    with pytest.raises(ValueError, match="a PostgreSQL URL"):
        TemporalMemory.open("solo", encoder=encoder, store="mysql://x")


def test_a_turn_that_fails_leaves_nothing_behind(encoder, postgres_url):
    memory = TemporalMemory.open("atomic", encoder=encoder, create=True, store=postgres_url)
    memory.add_many([turn(i) for i in range(5)])
    with pytest.raises(ValueError, match="embeddings"):  # the store refuses the batch inside its transaction
        memory.folder.store.append({n: [] for n, _ in memory.folder.store.columns} | {"response_idx": [5]}, {},
                                   {"text": np.zeros((0, encoder.dim), dtype=np.float32)})
    store = memory.folder.store
    assert store.count() == 5 and len(store.read()) == 5
    memory.close()


CHILD = textwrap.dedent("""
    import sys
    sys.path[:0] = [{root!r}, {tests!r}]
    from models.dual_encoder import DualEncoder
    from retrieval.memory.temporal_memory import TemporalMemory
    from test_live_memory import turn
    encoder = DualEncoder.from_backbone({backbone!r})
    memory = TemporalMemory.open("killed", encoder=encoder, store={url!r})
    print("ready", flush=True)
    i = len(memory.table)
    while True:
        memory.add(**turn(i))
        print("ack", i, flush=True)
        i += 1
""")


def test_sigkill_in_a_loop_of_adds_loses_no_acknowledged_turn(encoder, tiny_backbone, postgres_url):
    TemporalMemory.open("killed", encoder=encoder, create=True, store=postgres_url).close()
    script = CHILD.format(root=str(ROOT), tests=str(ROOT / "tests"), url=postgres_url, backbone=tiny_backbone)
    acked = kill_in_a_loop(script, 2)
    memory = TemporalMemory.open("killed", encoder=encoder, store=postgres_url)  # the killed writer's lock is gone
    frame = memory.table.frame
    assert_whole(frame, acked)
    n, lengths = memory.folder.store.statistics()  # the BM25 statistics moved with the rows, in one transaction
    assert n == len(frame) and lengths["text"] > 0
    memory.close()


def test_the_schema_has_the_distribution_key_and_the_indexes_the_design_needs(encoder, postgres_url):
    TemporalMemory.open("ddl", encoder=encoder, create=True, store=postgres_url).close()
    turns = turns_table(encoder.dim)
    with psycopg.connect(postgres_url) as conn:
        keys = dict(conn.execute(
            "SELECT tc.table_name, string_agg(k.column_name, ',' ORDER BY k.ordinal_position) FROM "
            "information_schema.table_constraints tc JOIN information_schema.key_column_usage k USING "
            "(constraint_name, table_name) WHERE tc.constraint_type = 'PRIMARY KEY' AND tc.table_name LIKE "
            "'ctbls%' "
            "GROUP BY tc.table_name"
        ).fetchall())
        indexes = {name: ddl for name, ddl in conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s", (turns,)).fetchall()}
    # every table's key starts with the memory id: the tenant, and Citus's distribution column
    assert keys == {"ctbls_memories": "memory_id", turns: "memory_id,response_idx",
                    "ctbls_postings": "memory_id,view,term,response_idx", "ctbls_df": "memory_id,view,term"}
    for column in ("ts", "speaker", "session"):
        assert f"(memory_id, {column})" in indexes[f"{turns}_{column}"]
    for view in ("text", "turn"):
        assert f"USING hnsw (embedding_{view} vector_ip_ops)" in indexes[f"{turns}_hnsw_{view}"]
    distributed = citus_ddl(encoder.dim)
    assert len(distributed) == len(keys)
    for table in keys:
        assert any(f"'{table}', 'memory_id'" in s for s in distributed), table
    assert PostgresStore.exists(psycopg.connect(postgres_url), "ddl")


def test_the_live_command_keeps_a_memory_in_the_database(tmp_path, tiny_backbone, postgres_url, capsys):
    from retrieval.memory.live import main
    from tests.test_live_command import write_log

    log = write_log(tmp_path / "log.jsonl")
    store = ["--memory", "ann", "--store", postgres_url]
    assert main(["import", str(log), *store, "--encoder", tiny_backbone]) == 0
    assert "imported 3 turns into ann" in capsys.readouterr().out
    assert main(["import", str(log), *store]) == 0  # run twice: nothing added
    assert "3 already there, skipped" in capsys.readouterr().out
    assert main(["ask", "What did Ann say about the guitar?", *store, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert rows and rows[0]["text"] == "My guitar lesson was cancelled"


def test_the_service_closes_idle_memories_past_its_limit(tmp_path, encoder, postgres_url):
    from retrieval.service.registry import MemoryRegistry

    registry = MemoryRegistry(tmp_path / "root", encoder, store=postgres_url, max_open=2)
    made = [registry.create(f"m{i}") for i in range(4)]
    for round_ in range(2):
        for n, (memory_id, key) in enumerate(made):
            with registry.use(memory_id, key) as memory:
                memory.add_many([{**turn(round_), "text": f"memory {n} turn {round_}"}])
                assert len(registry._open) <= 2
    for n, (memory_id, key) in enumerate(made):
        with registry.use(memory_id, key) as memory:
            assert memory.table.frame["text"].tolist() == [f"memory {n} turn 0", f"memory {n} turn 1"]
    registry.close()


def test_eval_memory_engines_gives_the_same_rows_on_every_engine(tiny_backbone, data_dir, postgres_url, tmp_path):
    """eval.memory_engines on one Zyphra log and one LoCoMo conversation: every question gets the same rows (and
    when-answers) from the folder memory and the PostgreSQL memory as from the in-process table."""
    from eval.memory_engines import main

    out = tmp_path / "engines.json"
    assert main(["--logs", "26", "--samples", "conv-26", "--store", postgres_url, "--encoder", tiny_backbone,
                 "--latency-sample", "3", "--cache-dir", "", "--output", str(out)]) == 0
    report = json.loads(out.read_text())
    for engine in ("folder", "postgresql"):
        zyphra, locomo = report["zyphra_agreement"][engine], report["locomo_agreement"][engine]
        assert zyphra["questions"] > 1000 and zyphra["same_rows"] == zyphra["questions"]
        assert locomo["questions"] > 10 and locomo["same_answers_and_rows"] == locomo["questions"]
        assert report["engines"][engine]["locomo"] == report["engines"]["table"]["locomo"]
