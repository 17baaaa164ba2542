"""Every LLM step through a real OpenAI-compatible server: llama.cpp's (``llama-cpp-python[server]``) serving the
packaged SmolLM2 GGUF on 127.0.0.1, reached by the ``openai`` backend as any vLLM, Ollama or hosted endpoint is.

The chat command answers one turn, the response evaluation runs on two conversations, the LLM planner plans
over a small conversation table (also with a ``response_format`` schema), and a second evaluation has its
server killed mid-run: the failures are recorded, the run finishes, and the answers before the kill are kept.
Skipped when llama-cpp-python is not installed (``make llm-server`` builds it, about 5 minutes).
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from ctbls_fixtures import write_checkpoints, write_tiny_ottqa

pytestmark = pytest.mark.slow

_SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")
_missing = [m for m in _SERVER_MODULES if importlib.util.find_spec(m) is None]
if _missing:
    pytest.skip(f"llama-cpp-python[server] is not installed (no {', '.join(_missing)}): `make llm-server` builds it "
                "(about 5 minutes)", allow_module_level=True)

from eval import response  # noqa: E402  (after the skip: collecting without the server stays cheap)
from retrieval.ctbls import chat  # noqa: E402
from retrieval.llm import CachedBackend, load_backend, parse_json  # noqa: E402
from retrieval.llm.smollm2 import smollm2_gguf_path  # noqa: E402

SERVER_LIFETIME_S = 900  # a hard cap: the server dies then even if this process is killed before its finalizer
MODEL = "smollm2-135m"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """``python -m llama_cpp.server`` on a free port of 127.0.0.1, in its own process group, log to a file."""

    def __init__(self, gguf, log_path):
        self.port = _free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.log_path = log_path
        command = ["timeout", "-s", "KILL", str(SERVER_LIFETIME_S), sys.executable, "-m", "llama_cpp.server",
                   "--model", str(gguf), "--model_alias", MODEL, "--host", "127.0.0.1", "--port", str(self.port),
                   "--n_ctx", "2048", "--n_threads", "2"]
        with open(log_path, "wb") as log:
            self.proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self._wait_ready(timeout_s=180)

    def _wait_ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.kill()
                pytest.fail(f"llama_cpp.server exited ({self.proc.returncode}):\n{self.log()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.5)
        self.kill()
        pytest.fail(f"llama_cpp.server not ready after {timeout_s} s:\n{self.log()[-3000:]}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def spec(self, **options) -> dict:
        return {"backend": "openai", "model": MODEL, "base_url": self.base_url, "timeout_s": 120, **options}

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # `timeout` and the server share the group
        except ProcessLookupError:  # already gone (killed by another thread, or its lifetime ran out)
            pass
        self.proc.wait(timeout=30)


@pytest.fixture(scope="module")
def gguf():
    try:
        return smollm2_gguf_path()
    except (ModuleNotFoundError, FileNotFoundError) as e:
        pytest.skip(str(e))


@pytest.fixture(scope="module")
def server(gguf, tmp_path_factory):
    s = LlamaServer(gguf, tmp_path_factory.mktemp("llama") / "server.log")
    yield s
    s.kill()


@pytest.fixture(scope="module")
def tiny(tiny_backbone, tmp_path_factory):
    root = tmp_path_factory.mktemp("served")
    data = write_tiny_ottqa(root / "ottqa")
    dtr, tracker = write_checkpoints(tiny_backbone, root)
    return {"data": data, "dtr": dtr, "tracker": tracker}


def _data_args(tiny) -> list[str]:
    data = tiny["data"]
    return ["--dtr", str(tiny["dtr"]), "--tracker", str(tiny["tracker"]), "--tables", str(data / "tables.jsonl"),
            "--passages", str(data / "passages_dev.jsonl"), "--cache-dir", ""]


def test_chat_once_answers_through_the_server(server, tiny, capsys):
    chat.main([*_data_args(tiny), "--llm", json.dumps(server.spec()), "--cache", "",
               "--once", "How long is the Amazon river?", "--k", "2"])
    out = json.loads(capsys.readouterr().out)
    assert out["llm_ok"] is True and out["error"] is None and out["answer"].strip()
    assert out["prompt"][-1]["role"] == "user" and "Amazon" in out["prompt"][-1]["content"]


def _evaluate(server, tiny, tmp_path, cache, **spec_options) -> dict:
    data = tiny["data"]
    return response.main([*_data_args(tiny), "--questions", str(data / "questions_dev.json"),
                          "--llm", json.dumps(server.spec(**spec_options)), "--cache", str(cache),
                          "--max-conversations", "2", "--max-new-tokens", "24", "--chunk", "4",
                          "--output", str(tmp_path / "results.json")])


def test_response_evaluation_on_two_conversations(server, tiny, tmp_path):
    results = _evaluate(server, tiny, tmp_path, tmp_path / "gen.sqlite")
    d = results["_data"]
    assert d["conversations"] == 2 and d["turns"] == 4 and d["llm"] == f"openai:{MODEL}@{server.base_url}"
    assert d["failed_generations"] == 0 and results["failures"] == []
    assert all(results[name]["n"] == 4 and results[name]["failed"] == 0 for name in response.setting_names())
    assert json.loads((tmp_path / "results.json").read_text())["_data"]["generations"] == d["generations"] == 28
    again = _evaluate(server, tiny, tmp_path, tmp_path / "gen.sqlite")  # a rerun is answered by the cache
    assert again["_data"]["cached_generations"] == 28


UTC = ZoneInfo("UTC")
QUESTIONS = ["What did we discuss 2 sessions ago?", "What did Bob say in our first session?",
             "What did we talk about last Friday?"]
PLAN_SCHEMA = {"type": "object", "properties": {"ops": {"type": "array", "items": {"type": "object"}}},
               "required": ["ops"]}


@pytest.fixture(scope="module")
def frame():
    from retrieval.data.conversation_log import Utterance
    from retrieval.memory.conversation_table import utterance_frame

    starts = [datetime(2023, 10, 6, 8), datetime(2023, 10, 13, 8), datetime(2023, 10, 20, 7)]
    utterances = [Utterance(3 * s + i, s + 1, "Ann" if i % 2 == 0 else "Bob",
                            (start + timedelta(minutes=i)).replace(tzinfo=UTC), f"session {s + 1} line {i}")
                  for s, start in enumerate(starts) for i in range(3)]
    return utterance_frame(utterances)


def test_llm_planner_plans_through_the_server(server, frame):
    from retrieval.memory.planner import LLMPlanner
    from retrieval.memory.table_ops import execute

    backend = load_backend(server.spec())
    planner = LLMPlanner(backend, frame.columns)
    now = frame["timestamp"].max().to_pydatetime() + timedelta(days=2)
    plans = [planner.plan(q, now, ["Ann", "Bob"]) for q in QUESTIONS]
    for plan in plans:  # the server answered each time; a plan the 135M model got wrong fell back to the rules
        assert plan.planner in ("llm", "llm->rule") and not any("the LLM call failed" in n for n in plan.notes)
        execute(plan.ops, frame, ranker=lambda query, k, ids, prefer=(), margin=None: [(i, 1.0) for i in ids[:k]])
    # The same prompts constrained by a schema (llama.cpp's json_object + schema): always a JSON object with ops.
    structured = backend.generate([planner.prompt(q, now) for q in QUESTIONS], max_new_tokens=160,
                                  response_format={"type": "json_object", "schema": PLAN_SCHEMA})
    assert all(r.ok for r in structured)
    assert all(isinstance(parse_json(r.text, dict).get("ops"), list) for r in structured)


class KillsTheServer:
    """Passes calls to ``backend``; ``delay_s`` into the second call, kills ``server`` (requests in flight)."""

    def __init__(self, backend, server, delay_s: float = 0.5):
        self.backend, self.server, self.delay_s, self.calls = backend, server, delay_s, 0
        self.name, self.identity, self.count_tokens = backend.name, backend.identity, backend.count_tokens

    def generate(self, conversations, **kwargs):
        self.calls += 1
        if self.calls == 2:
            threading.Timer(self.delay_s, self.server.kill).start()
        return self.backend.generate(conversations, **kwargs)


def test_a_server_killed_mid_run_leaves_recorded_failures_and_kept_answers(gguf, tiny, tmp_path, monkeypatch):
    doomed = LlamaServer(gguf, tmp_path / "doomed.log")
    wrapped: list[KillsTheServer] = []

    def load(spec, cache=None):
        wrapped.append(KillsTheServer(load_backend(spec, cache=cache), doomed))
        return wrapped[0]

    monkeypatch.setattr(response, "load_backend", load)
    cache = tmp_path / "gen.sqlite"
    try:
        results = _evaluate(doomed, tiny, tmp_path, cache, max_attempts=2)
    finally:
        doomed.kill()
    d = results["_data"]
    assert wrapped[0].calls > 2 and doomed.proc.returncode is not None  # the run went on after the kill
    assert 4 <= d["generations"] - d["failed_generations"] < d["generations"] == 28
    assert len(results["failures"]) == d["failed_generations"]
    assert all("Connection error" in f["error"] and f["attempts"] == 2 for f in results["failures"])  # retried once
    assert json.loads((tmp_path / "results.json").read_text())["failures"] == results["failures"]
    kept = CachedBackend(load_backend(doomed.spec()), cache)
    assert len(kept) >= 4  # the first chunk's answers (at least) survived the kill
    kept.close()
    monkeypatch.setattr(response, "load_backend", load_backend)
    rerun = _evaluate(doomed, tiny, tmp_path, cache, max_attempts=1)  # the server is gone; the cache is not
    assert rerun["_data"]["cached_generations"] >= 4
    assert rerun["_data"]["failed_generations"] == 28 - rerun["_data"]["cached_generations"]
