"""The memory service under load, and killed in the middle of it: throughput, latency, errors, nothing lost.

    python -m benchmarks.service_load --output runs/bench/service_load.json [--seconds 60 --clients 50 --memories 20]

The service (``python -m retrieval.service.server serve``) runs as its own process on 127.0.0.1, over a fresh root
of ``--memories`` memories, each seeded with a dozen dated turns. ``--clients`` threads, each with its own HTTP
connection and its own memory (client k uses memory k mod M, so several clients share each memory), send a mix of
appends (one turn, stamped by the server) and questions (``--ask-share`` of requests) for ``--seconds`` or
``--max-requests`` in all, whichever comes first.

1. **Load**: requests per second, p50 / p95 / p99 latency per kind, and errors (any status but 200, any
   exception), the goal being none.
2. **Killed**: the same load again. Half-way through, the server gets SIGKILL (no shutdown, no snapshot). It is
   restarted, and each memory is exported. Three checks follow:
   - every append the server acknowledged is there, with its id and text;
   - no turn is partial, and ids run 0..n-1;
   - fixed questions (a fixed "now", within the seeded dates) give the same rows as before the kill.
   Requests cut off by the kill are counted apart, not as errors.

3. **Database killed** (``--store pgserver`` only): the same load against the PostgreSQL engine, and half-way
   through the database server (the postmaster and its backends) gets SIGKILL, stays down for ``--down-seconds``,
   and is started again on the same data folder; the service keeps running. Requests refused while it is down
   (503, "store": those in flight after the kill and sent before 2 s after the database is back) are counted
   apart; any other failure, or a 503 to a request sent later, is an error. Then the same three checks.

The engine is the embedded one (SQLite WAL and the memory folders) by default; ``--store`` names a PostgreSQL
(a URL, or ``pgserver``: a temporary one from the pgserver wheel, in the run's folder). Either way each append is
committed before its reply.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np

from benchmarks.common import RunArguments, command_line, machine, write_report
from eval.report import print_table
from retrieval.config import option, parse_config, write_config
from retrieval.memory.postgres.local import database_url

ADMIN = "load-test-admin"
SEED_TURNS = [("Ann", "I adopted a beagle called Rex", "2023-05-01T10:00:00+00:00"),
              ("Bob", "Rex is a lovely name for a beagle", "2023-05-01T10:01:00+00:00"),
              ("Ann", "My guitar lesson was cancelled today", "2023-05-02T18:00:00+00:00"),
              ("Bob", "Shame, guitar lessons are fun", "2023-05-02T18:02:00+00:00"),
              ("Ann", "We booked a trip to Lisbon yesterday", "2023-05-09T09:00:00+00:00"),
              ("Bob", "Lisbon in June will be warm", "2023-05-09T09:05:00+00:00"),
              ("Ann", "I practised the guitar for an hour", "2023-05-10T19:00:00+00:00"),
              ("Bob", "My knee hurts after the run", "2023-05-10T19:03:00+00:00"),
              ("Ann", "Rex chewed my guitar strap", "2023-05-12T08:00:00+00:00"),
              ("Bob", "Beagles chew everything", "2023-05-12T08:01:00+00:00"),
              ("Ann", "Work was busy all week", "2023-05-15T17:30:00+00:00"),
              ("Bob", "Mine too, lots of meetings", "2023-05-15T17:31:00+00:00")]
FIXED_NOW = "2023-05-16T12:00:00+00:00"
FIXED_QUESTIONS = ["What did we discuss on May 2nd?", "What did Ann say about the guitar last week?",
                   "What did we talk about the week before last?", "What did Bob say about his knee?"]
LOAD_QUESTIONS = ["What did we just talk about?", "What did Ann say about Rex?", "When did Ann book the trip?",
                  "What did we discuss today?", "What did Bob say about work?"]
TOPICS = ["the garden", "a new recipe", "the football match", "my sister's wedding", "the rent", "a podcast",
          "the bike repair", "our holiday plans", "the dentist", "a film we saw"]


@dataclass(kw_only=True)
class LoadArguments(RunArguments):
    """The memory service under load, then killed under load and restarted."""

    clients: int = option(50, "concurrent clients, one connection each")
    memories: int = option(20, "memories the clients share")
    seconds: float = option(60.0, "length of each load phase")
    max_requests: int = option(200_000, "requests per phase at most")
    ask_share: float = option(0.5, "share of requests that are questions (the rest append a turn)")
    encoder: str | None = option(None, "the service's encoder (default: the packaged MiniLM)")
    root: str | None = option(None, "the service's folder (default: a new temporary one)")
    store: str | None = option(None, "the memories' PostgreSQL: a URL, or 'pgserver' (a temporary server, which the "
                               "third phase kills); default: the embedded engine")
    down_seconds: float = option(2.0, "how long the killed database stays down")


DB_GRACE = 2.0  # seconds after the database is back in which a 503 still counts as the outage's


@dataclass
class Phase:
    latencies: dict[str, list[float]] = field(default_factory=lambda: {"append": [], "ask": []})
    errors: list[str] = field(default_factory=list)
    cut_off: int = 0  # requests that failed because the server was killed
    killed: bool = False  # the server has been killed: failures from here on are cut-offs, not errors
    unavailable: int = 0  # 503s while the database was down (or within DB_GRACE of its return)
    database_down: float | None = None  # when the database was killed (perf_counter), and when it was back
    database_back: float | None = None
    served_after_restart: int = 0  # requests answered after the database was back
    acknowledged: list[tuple[str, int, str]] = field(default_factory=list)  # (memory, id, text)
    seconds: float = 0.0

    def refused_for_outage(self, sent: float, answered: float) -> bool:
        """A 503 to a request in flight while the database was away: answered after the kill, and sent before the
        database was back plus DB_GRACE."""
        if self.database_down is None or answered < self.database_down:
            return False
        return self.database_back is None or sent < self.database_back + DB_GRACE


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(root: Path, port: int, encoder: str | None, store: str | None = None) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "retrieval.service.server", "serve", "--root", str(root), "--port", str(port)]
    if encoder:
        cmd += ["--encoder", encoder]
    if store:
        cmd += ["--store", store]
    proc = subprocess.Popen(cmd, env={**os.environ, "CTBLS_ADMIN_KEY": ADMIN}, stdout=subprocess.DEVNULL,
                            stderr=open(root.parent / "server.log", "a"))  # noqa: SIM115  (the child holds it)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}; see {root.parent / 'server.log'}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/openapi.json", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError("the server did not answer within 300 s")


def make_memories(url: str, n: int) -> list[tuple[str, str]]:
    made = []
    for i in range(n):
        r = httpx.post(f"{url}/memories", json={"name": f"load {i}"}, headers={"X-Admin-Key": ADMIN}, timeout=60)
        r.raise_for_status()
        mid, key = r.json()["memory_id"], r.json()["api_key"]
        turns = [{"speaker": s, "text": t, "timestamp": ts} for s, t, ts in SEED_TURNS]
        httpx.post(f"{url}/memories/{mid}/turns", json={"turns": turns}, headers={"X-API-Key": key},
                   timeout=120).raise_for_status()
        made.append((mid, key))
    return made


def fixed_rows(url: str, memories: Sequence[tuple[str, str]]) -> dict:
    """Each memory's rows for the fixed questions, asked at the fixed now."""
    out = {}
    for mid, key in memories:
        for q in FIXED_QUESTIONS:
            r = httpx.post(f"{url}/memories/{mid}/ask", json={"question": q, "now": FIXED_NOW},
                           headers={"X-API-Key": key}, timeout=120)
            r.raise_for_status()
            out[f"{mid}: {q}"] = [row["response_idx"] for row in r.json()["rows"]]
    return out


def client_loop(k: int, url: str, memory: tuple[str, str], a: LoadArguments, phase: Phase, stop: threading.Event,
                budget: list[int], lock: threading.Lock) -> None:
    rng = random.Random(a.seed * 1000 + k)
    mid, key = memory
    n = 0
    with httpx.Client(base_url=url, headers={"X-API-Key": key}, timeout=120) as http:
        while not stop.is_set():
            with lock:
                if budget[0] <= 0:
                    return
                budget[0] -= 1
            asking = rng.random() < a.ask_share
            text = f"client {k} turn {n}: let me tell you about {rng.choice(TOPICS)}"
            start = time.perf_counter()
            try:
                if asking:
                    r = http.post(f"/memories/{mid}/ask", json={"question": rng.choice(LOAD_QUESTIONS)})
                else:
                    r = http.post(f"/memories/{mid}/turns", json={"turns": [{"speaker": f"c{k}", "text": text}]})
            except httpx.HTTPError as e:
                with lock:
                    if stop.is_set() or phase.killed:
                        phase.cut_off += 1
                    else:
                        phase.errors.append(f"{type(e).__name__}: {e}")
                if phase.killed:
                    return
                continue
            took = time.perf_counter() - start
            with lock:
                if r.status_code == 503 and phase.refused_for_outage(start, start + took):
                    phase.unavailable += 1
                    outage = True
                else:
                    outage = False
                    if phase.database_back is not None and r.status_code == 200:
                        phase.served_after_restart += 1
            if outage:
                time.sleep(0.05)  # a client waits a little before it tries again
                continue
            with lock:
                if r.status_code != 200:
                    phase.errors.append(f"{r.status_code}: {r.text[:200]}")
                    continue
                phase.latencies["ask" if asking else "append"].append(took)
                if not asking:
                    phase.acknowledged.append((mid, r.json()["ids"][0], text))
            n += 1


def run_phase(url: str, memories: Sequence[tuple[str, str]], a: LoadArguments, kill: subprocess.Popen | None = None,
              database=None) -> Phase:
    """One load phase; with ``kill``, that process gets SIGKILL half-way through; with ``database`` (a pgserver
    handle), the database server does, and is started again after ``a.down_seconds``."""
    phase, stop, lock, budget = Phase(), threading.Event(), threading.Lock(), [a.max_requests]
    threads = [threading.Thread(target=client_loop, args=(k, url, memories[k % len(memories)], a, phase, stop,
                                                          budget, lock), daemon=True) for k in range(a.clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    if kill is not None:
        time.sleep(a.seconds / 2)
        phase.killed = True
        kill.send_signal(signal.SIGKILL)
        kill.wait()
        stop.set()
    else:
        deadline = start + a.seconds
        if database is not None:
            time.sleep(a.seconds / 2)
            phase.database_down = time.perf_counter()
            kill_database(database)
            time.sleep(a.down_seconds)
            database.ensure_postgres_running()  # the same data folder: recovery from its write-ahead log
            phase.database_back = time.perf_counter()
        while time.perf_counter() < deadline and any(t.is_alive() for t in threads):
            time.sleep(0.2)
        stop.set()
    for t in threads:
        t.join(180)
    phase.seconds = time.perf_counter() - start if kill is None else a.seconds / 2
    return phase


def kill_database(server) -> None:
    """SIGKILL the pgserver's postmaster and its backends (a crash: no checkpoint, no shutdown)."""
    pid = server.get_pid()
    children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    for p in [pid, *map(int, children)]:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in [pid, *map(int, children)]):
        time.sleep(0.05)


def figures(phase: Phase) -> dict:
    out = {"seconds": round(phase.seconds, 1), "errors": len(phase.errors), "first_errors": phase.errors[:5],
           "cut_off_by_kill": phase.cut_off, "refused_while_database_down": phase.unavailable}
    if phase.database_back is not None:
        out["served_after_database_restart"] = phase.served_after_restart
    total = 0
    for kind, xs in phase.latencies.items():
        ms = 1000 * np.asarray(xs) if xs else np.zeros(1)
        total += len(xs)
        out[kind] = {"n": len(xs), "p50_ms": round(float(np.percentile(ms, 50)), 1),
                     "p95_ms": round(float(np.percentile(ms, 95)), 1), "p99_ms": round(float(np.percentile(ms, 99)), 1)}
    out["requests"] = total
    out["requests_per_s"] = round(total / phase.seconds, 1) if phase.seconds else None
    return out


def check_recovery(url: str, memories: Sequence[tuple[str, str]], acknowledged: list, before: dict) -> dict:
    """After the restart: every acknowledged append there, no partial turn, the fixed questions' rows unchanged."""
    stored, partial, gaps = {}, 0, 0
    for mid, key in memories:
        r = httpx.get(f"{url}/memories/{mid}/export", headers={"X-API-Key": key}, timeout=120)
        r.raise_for_status()
        rows = [json.loads(line) for line in r.text.splitlines() if line.strip()]
        ids = [row["response_idx"] for row in rows]
        gaps += ids != list(range(len(rows)))
        partial += sum(not (row.get("speaker") and row.get("text") and row.get("timestamp")) for row in rows)
        stored.update({(mid, row["response_idx"]): row["text"] for row in rows})
    missing = [(m, i) for m, i, text in acknowledged if stored.get((m, i)) != text]
    after = fixed_rows(url, memories)
    changed = [q for q in before if before[q] != after.get(q)]
    return {"acknowledged_appends": len(acknowledged), "missing_or_changed": len(missing),
            "first_missing": missing[:5], "partial_turns": partial, "memories_with_id_gaps": gaps,
            "fixed_questions": len(before), "fixed_questions_changed": changed[:5], "n_changed": len(changed)}


def main(argv: Sequence[str] | None = None) -> dict:
    a = parse_config(LoadArguments, argv, prog="python -m benchmarks.service_load", description=__doc__.split("\n")[0])
    root = Path(a.root) if a.root else Path(tempfile.mkdtemp(prefix="service_load_")) / "root"
    root.parent.mkdir(parents=True, exist_ok=True)
    with database_url(a.store, root.parent / "pgdata") as (store, pg):
        report = load_and_kill(a, root, store, pg)
    report["command"] = command_line("benchmarks.service_load", argv)
    phases = [("load", "load"), ("killed half-way", "killed")] + ([("database killed", "database_killed")]
                                                                   if "database_killed" in report else [])
    rows = {name: {"req/s": report[key]["requests_per_s"],
                   **{f"{k} {p[:3]}": report[key][k][p] for k in ("append", "ask") for p in ("p50_ms", "p95_ms",
                                                                                              "p99_ms")},
                   "errors": report[key]["errors"], "cut off": report[key]["cut_off_by_kill"],
                   "503 (db down)": report[key]["refused_while_database_down"]} for name, key in phases}
    print_table(rows, title=f"latency in ms, {report['engine']} engine")
    for key in ("recovery", "database_recovery"):
        if key in report:
            r = report[key]
            print(f"{key}: acknowledged appends {r['acknowledged_appends']}, missing {r['missing_or_changed']}, "
                  f"partial turns {r['partial_turns']}, fixed questions changed {r['n_changed']} of "
                  f"{r['fixed_questions']}")
    print(f"service restart {report['restart_s']:.1f} s")
    write_report(report, a.output)
    if a.output:
        write_config(a)
    return report


def load_and_kill(a: LoadArguments, root: Path, store: str | None, pg) -> dict:
    """The phases of the module docstring against a service over ``store`` (None: the embedded engine)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = start_server(root, port, a.encoder, store)
    out: dict = {}
    try:
        memories = make_memories(url, a.memories)
        print(f"{a.memories} memories seeded; load: {a.clients} clients for {a.seconds:.0f} s", flush=True)
        load = run_phase(url, memories, a)
        before = fixed_rows(url, memories)
        print("load again, with the server killed half-way", flush=True)
        killed = run_phase(url, memories, a, kill=server)
        restart_start = time.perf_counter()
        server = start_server(root, port, a.encoder, store)
        out["restart_s"] = round(time.perf_counter() - restart_start, 1)
        acknowledged = load.acknowledged + killed.acknowledged
        out["recovery"] = check_recovery(url, memories, acknowledged, before)
        if pg is not None:
            print("load again, with the database server killed half-way", flush=True)
            out["database_killed"] = figures(down := run_phase(url, memories, a, database=pg))
            out["database_recovery"] = check_recovery(url, memories, acknowledged + down.acknowledged, before)
    finally:
        server.terminate()
        server.wait(60)
    return {"machine": machine(), "engine": "postgresql" if store else "embedded",
            "settings": {k: getattr(a, k) for k in ("clients", "memories", "seconds", "ask_share", "encoder",
                                                    "down_seconds")},
            "load": figures(load), "killed": figures(killed), **out}


if __name__ == "__main__":
    main()
