"""The memory service: keys that open one memory only, bad input refused with the field named, nothing half-written,
a restart that keeps every acknowledged turn, a real server on loopback with the Python client, and the MCP server
driven by the SDK's own client (in process, over stdio and over streamable HTTP)."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time

import pytest
from fastapi.testclient import TestClient

from benchmarks.service_load import free_port
from retrieval.service.api import MAX_TURNS, Limits, create_app
from retrieval.service.registry import REGISTRY, MemoryRegistry

TURNS = [{"speaker": "Ann", "text": "I adopted a beagle called Rex", "timestamp": "2023-05-01T10:00:00+01:00"},
         {"speaker": "Bob", "text": "Rex is a lovely name", "timestamp": "2023-05-01T10:01:00+01:00"},
         {"speaker": "Ann", "text": "My guitar lesson was cancelled today", "timestamp": "2023-05-02T18:00:00+01:00"},
         {"speaker": "Bob", "text": "Shame, guitar lessons are fun", "timestamp": "2023-05-02T18:02:00+01:00"},
         {"speaker": "Ann", "text": "We booked a trip to Lisbon yesterday", "timestamp": "2023-05-09T09:00:00+01:00"}]


@pytest.fixture(scope="module")
def encoder(tiny_backbone):
    from models.dual_encoder import load_encoder

    return load_encoder(tiny_backbone)


@pytest.fixture(params=["folder", "postgresql"])
def service(tmp_path, encoder, request):
    """The API over either engine: memories in folders under a root, or in a PostgreSQL database."""
    store = request.getfixturevalue("postgres_url") if request.param == "postgresql" else None
    registry = MemoryRegistry(tmp_path / "root", encoder, store=store)
    with TestClient(create_app(registry, admin_key="admin", limits=Limits(body_bytes=64_000))) as client:
        yield client, registry
    registry.close()


def make(client, name="ann") -> tuple[str, dict]:
    made = client.post("/memories", json={"name": name}, headers={"X-Admin-Key": "admin"})
    assert made.status_code == 201, made.text
    return made.json()["memory_id"], {"Authorization": f"Bearer {made.json()['api_key']}"}


def test_make_append_ask_when_export(service):
    client, _ = service
    assert client.post("/memories", json={}).status_code == 403  # the admin key is needed
    mid, auth = make(client)
    added = client.post(f"/memories/{mid}/turns", json={"turns": TURNS}, headers=auth)
    assert added.status_code == 200 and added.json() == {"ids": [0, 1, 2, 3, 4], "skipped": 0, "count": 5}
    again = client.post(f"/memories/{mid}/turns", json={"turns": TURNS}, headers=auth)  # a retried request
    assert again.json() == {"ids": [0, 1, 2, 3, 4], "skipped": 5, "count": 5}
    asked = client.post(f"/memories/{mid}/ask", json={"question": "What did we discuss on May 2nd?"}, headers=auth)
    assert [r["text"] for r in asked.json()["rows"]] == [TURNS[2]["text"], TURNS[3]["text"]]
    assert asked.json()["plan"]["ops"] and "zone" in asked.json()["plan"]
    when = client.post(f"/memories/{mid}/when", json={"question": "When did Ann book the trip to Lisbon?"},
                       headers=auth).json()
    assert when["answer"]["answer"] == "8 May 2023" and when["answer"]["evidence"]
    info = client.get(f"/memories/{mid}", headers=auth).json()
    assert info["turns"] == 5 and info["name"] == "ann"
    assert info["last"] == "2023-05-09T09:00:00+01:00" and info["zone"] == "UTC+01:00"  # the turns' own zone
    lines = [json.loads(x) for x in client.get(f"/memories/{mid}/export", headers=auth).text.splitlines()]
    assert [x["text"] for x in lines] == [t["text"] for t in TURNS]
    assert client.get("/docs").status_code == 200 and "/memories/{memory_id}/ask" in client.get(
        "/openapi.json").json()["paths"]


def test_one_memorys_key_never_reads_another(service):
    client, _ = service
    a, auth_a = make(client, "a")
    b, auth_b = make(client, "b")
    client.post(f"/memories/{b}/turns", json={"turns": TURNS}, headers=auth_b)
    calls = [("get", f"/memories/{b}", None), ("post", f"/memories/{b}/turns", {"turns": TURNS[:1]}),
             ("post", f"/memories/{b}/ask", {"question": "What did we discuss?"}),
             ("post", f"/memories/{b}/when", {"question": "When did Ann adopt Rex?"}),
             ("post", f"/memories/{b}/trends", {"question": "How often did we talk about guitars?"}),
             ("get", f"/memories/{b}/export", None)]
    for method, path, body in calls:
        with_a = getattr(client, method)(path, headers=auth_a, **({"json": body} if body else {}))
        assert with_a.status_code == 403 and with_a.json()["field"] == "authorization", path
        assert "Rex" not in with_a.text
        bare = getattr(client, method)(path, **({"json": body} if body else {}))
        assert bare.status_code == 401, path
        wrong = getattr(client, method)(path, headers={"X-API-Key": "x" * 43}, **({"json": body} if body else {}))
        assert wrong.status_code == 403, path
    unknown = client.post("/memories/mnope/ask", json={"question": "hi?"}, headers=auth_a)
    assert unknown.status_code == 403  # an unknown memory looks like a wrong key
    assert client.get(f"/memories/{b}", headers=auth_b).json()["turns"] == 5  # B untouched


def test_bad_input_names_the_field_and_writes_nothing(service):
    client, _ = service
    mid, auth = make(client)
    client.post(f"/memories/{mid}/turns", json={"turns": TURNS[:2]}, headers=auth)

    def refused(path, body, status, field):
        r = client.post(f"/memories/{mid}{path}", json=body, headers=auth)
        assert r.status_code == status, r.text
        assert r.json()["field"].startswith(field), r.json()
        return r.json()["error"]

    refused("/ask", {"question": ""}, 422, "question")
    refused("/ask", {"question": "x" * 3000}, 422, "question")
    refused("/turns", {"turns": [{"speaker": "Ann", "text": "x" * 20_001}]}, 422, "turns.0.text")
    refused("/turns", {"turns": [{"speaker": "Ann"}]}, 422, "turns.0.text")
    refused("/turns", {"turns": []}, 422, "turns")
    refused("/trends", {"question": "how often?", "period": "fortnight"}, 422, "period")
    assert "over 64000 bytes" in refused("/turns", {"turns": [{"speaker": "A", "text": "y" * 10_000}] * 8}, 413,
                                         "body")
    assert "cannot read the timestamp 'yesterday-ish'" in refused(
        "/turns", {"turns": [{"speaker": "Ann", "text": "fine", "timestamp": "2023-05-03T10:00:00+00:00"},
                             {"speaker": "Ann", "text": "bad", "timestamp": "yesterday-ish"}]}, 422, "turns")
    assert "earlier than the memory's last turn" in refused(
        "/turns", {"turns": [{"speaker": "Ann", "text": "old", "timestamp": "2020-01-01T00:00:00+00:00"}]}, 422,
        "turns")
    refused("/when", {"question": "What did we discuss?"}, 422, "question")
    refused("/turns", {"turns": [{"speaker": "Ann", "text": "   "}]}, 422, "turns.0.text")  # blank: nothing said
    assert "in the year 9999" in refused(
        "/turns", {"turns": [{"speaker": "Ann", "text": "typo", "timestamp": "9999-12-31T23:59:00-05:00"}]}, 422,
        "turns")
    r = client.post(f"/memories/{mid}/ask", content=b"{not json", headers={**auth, "content-type": "application/json"})
    assert r.status_code == 422 and r.json()["field"] == "body" and "not valid JSON" in r.json()["error"]
    assert client.get(f"/memories/{mid}", headers=auth).json()["turns"] == 2  # the refused batches left nothing
    assert MAX_TURNS == 1000


def test_keys_are_stored_hashed_and_survive_a_restart(tmp_path, encoder):
    root = tmp_path / "root"
    registry = MemoryRegistry(root, encoder)
    with TestClient(create_app(registry)) as client:  # no admin key: anyone on loopback makes memories
        made = client.post("/memories", json={"name": "ann", "tz": "Europe/London"}).json()
        auth = {"X-API-Key": made["api_key"]}
        client.post(f"/memories/{made['memory_id']}/turns", json={"turns": TURNS}, headers=auth)
    registry.close()
    assert made["api_key"].encode() not in (root / REGISTRY).read_bytes()
    (root / "m0000000000000000").mkdir()  # a folder whose registry row was never written: removed on start
    registry = MemoryRegistry(root, encoder)
    assert not (root / "m0000000000000000").exists()
    with TestClient(create_app(registry)) as client:
        info = client.get(f"/memories/{made['memory_id']}", headers=auth).json()
        assert info["turns"] == 5 and info["zone"] == "Europe/London"
    registry.close()


def serve_in_thread(app, port: int):
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            return server, thread
        time.sleep(0.05)
    raise RuntimeError("the server did not start")


def test_real_server_and_the_python_client(tmp_path, encoder):
    from retrieval.service.client import MemoryClient, ServiceError

    registry = MemoryRegistry(tmp_path / "root", encoder)
    port = free_port()
    server, thread = serve_in_thread(create_app(registry, admin_key="admin"), port)
    try:
        url = f"http://127.0.0.1:{port}"
        with pytest.raises(ServiceError) as e:
            MemoryClient.create(url)
        assert e.value.status == 403 and e.value.field == "x-admin-key"
        memory = MemoryClient.create(url, "ann", admin_key="admin")
        assert memory.add(TURNS) == [0, 1, 2, 3, 4]
        assert [r["text"] for r in memory.ask("What did we discuss on May 2nd?")["rows"]][0] == TURNS[2]["text"]
        assert memory.when("When did Ann book the trip to Lisbon?")["answer"]["answer"] == "8 May 2023"
        assert len(memory.export()) == 5 and memory.info()["turns"] == 5
        with pytest.raises(ServiceError) as e:  # five turns are too few to calibrate relevance: said, not guessed
            memory.trends("How often did we talk about guitars?")
        assert e.value.status == 422 and "at least 10" in e.value.message
        memory.add([{"speaker": "Ann", "text": f"Guitar practice, day {d}", "timestamp": f"2023-05-{d}T20:00:00Z"}
                    for d in range(10, 17)])
        trend = memory.trends("How often did we talk about guitars?", period="day")
        assert sum(p["n_docs"] for p in trend["periods"]) == 12
        memory.close()
    finally:
        server.should_exit = True
        thread.join(10)
        registry.close()


# ---- MCP ----------------------------------------------------------------------------------------------------
def tool_json(result) -> dict:
    assert not result.is_error, result
    return json.loads(result.content[0].text)


async def exercise(client) -> None:
    names = {t.name for t in (await client.list_tools()).tools}
    assert {"remember", "ask", "when"} <= names
    assert tool_json(await client.call_tool("remember", {"turns": TURNS}))["ids"] == [0, 1, 2, 3, 4]
    asked = tool_json(await client.call_tool("ask", {"question": "What did we discuss on May 2nd?"}))
    assert [r["text"] for r in asked["rows"]] == [TURNS[2]["text"], TURNS[3]["text"]]
    when = tool_json(await client.call_tool("when", {"question": "When did Ann book the trip to Lisbon?"}))
    assert when["answer"] == "8 May 2023"
    bad = await client.call_tool("ask", {"question": "  "})
    assert bad.is_error and "empty" in bad.content[0].text


def test_mcp_tools_in_process(tmp_path, encoder):
    from mcp import Client

    from retrieval.memory.temporal_memory import TemporalMemory
    from retrieval.service.mcp_tools import memory_server

    memory = TemporalMemory.open(tmp_path / "m", encoder=encoder, create=True)

    async def run():
        async with Client(memory_server(memory)) as client:
            await exercise(client)

    asyncio.run(run())
    memory.close()


@pytest.mark.parametrize("engine", ["folder", "postgresql"])
def test_mcp_over_stdio(tmp_path, tiny_backbone, engine, request):
    from mcp import Client, StdioServerParameters

    where = ["--memory", str(tmp_path / "m")] if engine == "folder" else \
        ["--memory", "agent", "--store", request.getfixturevalue("postgres_url")]
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "retrieval.service.server", "mcp", *where, "--encoder", tiny_backbone])

    async def run():
        async with Client(params) as client:
            await exercise(client)

    asyncio.run(run())


def test_mcp_over_streamable_http(tmp_path, encoder):
    from mcp import Client

    from retrieval.memory.temporal_memory import TemporalMemory
    from retrieval.service.mcp_tools import memory_server

    memory = TemporalMemory.open(tmp_path / "m", encoder=encoder, create=True)
    port = free_port()
    server, thread = serve_in_thread(memory_server(memory).streamable_http_app(), port)

    async def run():
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            await exercise(client)

    try:
        asyncio.run(run())
    finally:
        server.should_exit = True
        thread.join(10)
        memory.close()


def test_killed_under_load_loses_no_acknowledged_append(tmp_path, tiny_backbone):
    """benchmarks.service_load, small: the server is SIGKILLed in the middle of appends and questions, restarted,
    and every acknowledged append is there, whole, with the fixed questions' rows unchanged."""
    from benchmarks.service_load import main

    report = main(["--encoder", tiny_backbone, "--seconds", "4", "--clients", "6", "--memories", "2",
                   "--root", str(tmp_path / "root")])
    assert report["load"]["errors"] == 0 and report["killed"]["errors"] == 0
    assert report["load"]["append"]["n"] > 0 and report["killed"]["append"]["n"] > 0
    recovery = report["recovery"]
    assert recovery["acknowledged_appends"] > 0 and recovery["missing_or_changed"] == 0
    assert recovery["partial_turns"] == 0 and recovery["memories_with_id_gaps"] == 0
    assert recovery["n_changed"] == 0 and recovery["fixed_questions"] == 8


def test_on_postgresql_neither_a_killed_server_nor_a_killed_database_loses_an_acknowledged_append(tmp_path,
                                                                                                 tiny_backbone):
    """benchmarks.service_load on the PostgreSQL engine, small: the service is SIGKILLed, then the database server
    is, each in the middle of the load; every acknowledged append is there, whole, and the service serves again
    (8 s a phase: the database, killed at 4 s and down 1 s, is back with time left to serve)."""
    from benchmarks.service_load import main

    report = main(["--encoder", tiny_backbone, "--seconds", "8", "--clients", "4", "--memories", "2",
                   "--store", "pgserver", "--down-seconds", "1", "--root", str(tmp_path / "root")])
    assert report["engine"] == "postgresql"
    for phase in ("load", "killed", "database_killed"):
        assert report[phase]["errors"] == 0, report[phase]["first_errors"]
    assert report["database_killed"]["refused_while_database_down"] > 0  # the outage was seen, and said (503)
    assert report["database_killed"]["served_after_database_restart"] > 0
    for check in ("recovery", "database_recovery"):
        recovery = report[check]
        assert recovery["acknowledged_appends"] > 0 and recovery["missing_or_changed"] == 0
        assert recovery["partial_turns"] == 0 and recovery["memories_with_id_gaps"] == 0
        assert recovery["n_changed"] == 0


def test_questions_sent_with_their_role_are_kept_out_of_answers(service):
    client, _ = service
    mid, auth = make(client)
    asked = {"speaker": "Ann", "text": "What did we say on May 2nd?", "timestamp": "2023-05-02T19:00:00+00:00",
             "role": "question"}
    client.post(f"/memories/{mid}/turns", json={"turns": [*TURNS[:4], asked]}, headers=auth)
    body = {"question": "What did we discuss on May 2nd?", "now": "2023-05-03T00:00:00+00:00"}
    rows = client.post(f"/memories/{mid}/ask", json=body, headers=auth).json()["rows"]
    assert [r["response_idx"] for r in rows] == [2, 3]
    rows = client.post(f"/memories/{mid}/ask", json={**body, "include_asked": True}, headers=auth).json()["rows"]
    assert [r["response_idx"] for r in rows] == [2, 3, 4]
    bad = client.post(f"/memories/{mid}/turns", json={"turns": [{**asked, "role": "bot"}]}, headers=auth)
    assert bad.status_code == 422 and bad.json()["field"] == "turns.0.role"
