"""The OpenAI-compatible backend: the official ``openai`` client against a scripted chat-completions server on
127.0.0.1 (answers, client retries honouring ``Retry-After``, typed errors recorded as failures, timeouts, a batch
that keeps its other answers), ``response_format``, the sqlite cache around it, the factory's spec forms."""

from __future__ import annotations

import email.utils
import hashlib
import json
import time

import pytest
from chat_server import ChatServer

from retrieval.llm import CachedBackend, GenerationParams, OpenAIChatBackend, load_backend
from retrieval.llm.cache import cache_key
from retrieval.llm.openai_chat import NO_KEY, response_format_payload


def _user(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


@pytest.fixture
def server():
    s = ChatServer()
    yield s
    s.close()


@pytest.fixture
def backend(server):
    b = OpenAIChatBackend("test-model", base_url=server.base_url, api_key="sk-test", timeout_s=2, backoff_s=0.01)
    yield b
    b.close()


@pytest.fixture
def client_waits(monkeypatch):
    """The waits asked for before retries, recorded instead of slept (no test here sleeps otherwise)."""
    asked: list[float] = []
    monkeypatch.setattr(time, "sleep", asked.append)
    return asked


def test_answers_a_batch_in_order(server, backend):
    conversations = [[{"role": "system", "content": "be brief"}, *_user(f"q{i}")] for i in range(5)]
    results = backend.generate(conversations, max_new_tokens=7, stop=["\n"])
    assert [r.text for r in results] == [f"echo: q{i}" for i in range(5)]
    assert all(r.ok and r.error is None and r.attempts == 1 and r.latency_s > 0 for r in results)
    assert results[0].backend == "openai" and results[0].model == f"openai:test-model@{server.base_url}"
    assert results[0].completion_tokens == 2
    sent = server.requests[0]
    assert sent["model"] == "test-model" and sent["max_tokens"] == 7 and sent["temperature"] == 0.0
    assert sent["stop"] == ["\n"] and sent["messages"][0] == {"role": "system", "content": "be brief"}
    assert "response_format" not in sent
    assert server.headers[0]["authorization"] == "Bearer sk-test"
    assert "openai" in server.headers[0]["user-agent"].lower()  # the official client, not a hand-made request


def test_a_500_is_retried_by_the_client(server, backend):
    server.script["flaky"] = [("status", 500), ("text", "fine now")]
    (result,) = backend.generate([_user("flaky")])
    assert result.ok and result.text == "fine now" and result.attempts == 2
    assert server.hits("flaky") == 2
    assert [h["x-stainless-retry-count"] for h in server.headers] == ["0", "1"]


def test_429_with_an_http_date_retry_after_waits_until_that_date(server, backend):
    # The date is 1-2 s ahead (HTTP dates have whole seconds); without it the client would wait about 0.5 s.
    when = email.utils.formatdate(time.time() + 2, usegmt=True)
    server.script["busy"] = [("status", 429, {"Retry-After": when}), ("text", "served")]
    (result,) = backend.generate([_user("busy")])
    assert result.ok and result.text == "served" and result.attempts == 2
    gap = server.times[1] - server.times[0]
    assert 0.9 < gap < 5, gap


@pytest.mark.parametrize(
    ("headers", "wait"),
    [({"Retry-After": "7"}, 7.0), ({"retry-after-ms": "1500"}, 1.5), ("date", 30.0)],
    ids=["seconds", "milliseconds", "http-date"],
)
def test_every_retry_after_form_sets_the_wait(server, backend, client_waits, headers, wait):
    if headers == "date":
        headers = {"Retry-After": email.utils.formatdate(time.time() + wait, usegmt=True)}
    server.script["busy"] = [("status", 429, headers), ("status", 503, headers), ("text", "served")]
    (result,) = backend.generate([_user("busy")])
    assert result.ok and result.attempts == 3 and len(client_waits) == 2
    assert all(wait - 1.5 < w <= wait for w in client_waits), client_waits


def test_retries_happen_in_one_place_and_the_last_status_is_recorded(server, backend):
    server.script["busy"] = [("status", 429)] * 20
    (result,) = backend.generate([_user("busy")])
    assert not result.ok and result.text == "" and result.attempts == backend.max_attempts == 4
    assert server.hits("busy") == 4  # the client's 3 retries, none stacked on top by our loop
    assert "HTTP 429" in result.error and "RateLimitError" in result.error and "scripted 429" in result.error
    assert f"{server.base_url}/chat/completions" in result.error


@pytest.mark.parametrize(("code", "kind"), [(400, "BadRequestError"), (401, "AuthenticationError"),
                                            (404, "NotFoundError"), (422, "UnprocessableEntityError")])
def test_a_client_error_is_not_retried_and_is_named(server, backend, code, kind):
    server.script["bad"] = [("status", code)]
    (result,) = backend.generate([_user("bad")])
    assert not result.ok and f"HTTP {code}" in result.error and kind in result.error
    assert f"scripted {code}" in result.error and server.hits("bad") == 1 and result.attempts == 1


def test_a_timeout_ends_as_a_recorded_failure(server):
    slow = OpenAIChatBackend("m", base_url=server.base_url, timeout_s=0.2, max_attempts=2)
    server.script["slow"] = [("slow", 1.0), ("slow", 1.0)]
    start = time.perf_counter()
    results = slow.generate([_user("slow"), _user("quick")])
    assert time.perf_counter() - start < 1.8
    assert not results[0].ok and results[0].error == f"POST {server.base_url}/chat/completions timed out after 0.2s"
    assert results[0].attempts == 2 and server.hits("slow") == 2
    assert results[1].ok and results[1].text == "echo: quick"


def test_one_failure_in_a_concurrent_batch_keeps_the_other_answers_and_only_they_are_cached(server, tmp_path):
    backend = OpenAIChatBackend("m", base_url=server.base_url, timeout_s=5, max_concurrency=3)
    cached = CachedBackend(backend, tmp_path / "gen.sqlite")
    server.script["a"] = [("slow", 0.6)]
    server.script["b"] = [("status", 400)]
    server.script["c"] = [("slow", 0.6)]
    start = time.perf_counter()
    a, b, c = cached.generate([_user("a"), _user("b"), _user("c")])
    assert time.perf_counter() - start < 1.1  # the two slow answers were asked at the same time (serial: 1.2 s)
    assert a.ok and a.text == "echo: a" and c.ok and c.text == "echo: c"
    assert not b.ok and b.text == "" and "BadRequestError" in b.error
    assert len(cached) == 2
    again = cached.generate([_user("a"), _user("b"), _user("c")])
    assert [r.cached for r in again] == [True, False, True] and all(r.ok for r in again)
    assert server.hits("b") == 2 and server.hits("a") == 1 and len(cached) == 3


def test_an_empty_answer_is_asked_again_by_our_loop(server, backend):
    server.script["shy"] = [("text", ""), ("text", "  "), ("text", "found it")]
    server.script["mute"] = [("text", "")] * 10
    shy, mute = backend.generate([_user("shy"), _user("mute")])
    assert shy.ok and shy.text == "found it" and shy.attempts == 3
    assert not mute.ok and mute.error == "empty answer" and mute.attempts == 4


def test_a_malformed_body_is_recorded(server, backend):
    server.script["odd"] = [("garbage", "<html>proxy error</html>")]
    (result,) = backend.generate([_user("odd")])
    assert not result.ok and "returned no chat completion" in result.error and "proxy error" in result.error


def test_nothing_listening_is_a_connection_error_naming_the_url(server):
    url = server.base_url
    server.close()
    dead = OpenAIChatBackend("m", base_url=url, timeout_s=1, max_attempts=2)
    (result,) = dead.generate([_user("anyone?")])
    assert not result.ok and f"POST {url}/chat/completions failed: Connection error" in result.error
    assert result.attempts == 2


def test_model_url_and_key_from_the_environment(monkeypatch, server):
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("OPENAI_MODEL", "env-model")
    (result,) = OpenAIChatBackend().generate([_user("hi")])
    assert result.ok and server.requests[0]["model"] == "env-model"
    assert server.headers[0]["authorization"] == "Bearer sk-env"
    monkeypatch.setenv("GROQ_KEY", "sk-other")
    OpenAIChatBackend(api_key_env="GROQ_KEY").generate([_user("hi")])
    assert server.headers[1]["authorization"] == "Bearer sk-other"
    monkeypatch.delenv("OPENAI_API_KEY")
    OpenAIChatBackend().generate([_user("hi")])  # a local server needs no key
    assert server.headers[2]["authorization"] == f"Bearer {NO_KEY}"
    with pytest.raises(ValueError, match="MISSING_KEY is not set"):
        OpenAIChatBackend(api_key_env="MISSING_KEY")
    monkeypatch.delenv("OPENAI_MODEL")
    with pytest.raises(ValueError, match="OPENAI_MODEL"):
        OpenAIChatBackend()


def test_response_format_is_passed_through(server, backend):
    schema = {"type": "object", "properties": {"ops": {"type": "array"}}, "required": ["ops"]}
    named = {"type": "json_schema", "json_schema": {"name": "plan", "schema": schema, "strict": True}}
    llama_cpp = {"type": "json_object", "schema": schema}
    for fmt in ({"type": "json_object"}, named, llama_cpp, schema):
        (result,) = backend.generate([_user("plan")], response_format=fmt)
        assert result.ok
    sent = [r["response_format"] for r in server.requests]
    assert sent[:3] == [{"type": "json_object"}, named, llama_cpp]
    assert sent[3] == {"type": "json_schema", "json_schema": {"name": "response", "schema": schema}}
    assert response_format_payload(schema) == sent[3]
    with pytest.raises(TypeError, match="response_format must be a mapping"):
        backend.generate([_user("plan")], response_format="json")


def test_cache_keys_response_format_and_keeps_the_old_keys(server, backend, tmp_path):
    old = hashlib.sha256(json.dumps({"model": "m", "messages": _user("a"), "max_new_tokens": 5, "temperature": 0.0,
                                     "stop": []}, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    assert cache_key("m", _user("a"), GenerationParams(5)) == old  # caches written before response_format hit
    cached = CachedBackend(backend, tmp_path / "gen.sqlite")
    cached.generate([_user("a")])
    (structured,) = cached.generate([_user("a")], response_format={"type": "json_object"})
    assert not structured.cached and server.requests[1]["response_format"] == {"type": "json_object"}
    (again,) = cached.generate([_user("a")], response_format={"type": "json_object"})
    assert again.cached and len(server.requests) == 2


def test_cache_answers_a_rerun_without_the_server(server, backend, tmp_path):
    path = tmp_path / "gen.sqlite"
    cached = CachedBackend(backend, path)
    first = cached.generate([_user("a"), _user("b")], max_new_tokens=5)
    assert [r.cached for r in first] == [False, False] and len(server.requests) == 2
    second = cached.generate([_user("b"), _user("a"), _user("c")], max_new_tokens=5)
    assert [r.text for r in second] == ["echo: b", "echo: a", "echo: c"]
    assert [r.cached for r in second] == [True, True, False] and len(server.requests) == 3
    cached.generate([_user("a")], max_new_tokens=6)  # other parameters, other key
    assert len(server.requests) == 4
    cached.close()
    reopened = CachedBackend(backend, path)  # persists across processes
    (again,) = reopened.generate([_user("a")], max_new_tokens=5)
    assert again.cached and again.text == "echo: a" and again.model == backend.identity
    assert len(server.requests) == 4 and len(reopened) == 4


def test_cache_does_not_keep_failures(server, backend, tmp_path):
    cached = CachedBackend(backend, tmp_path / "gen.sqlite")
    server.script["down"] = [("status", 503)] * 4
    (failed,) = cached.generate([_user("down")])
    assert not failed.ok and len(cached) == 0
    (recovered,) = cached.generate([_user("down")])
    assert recovered.ok and not recovered.cached and server.hits("down") == 5 and len(cached) == 1


def test_malformed_messages_are_a_caller_error(backend):
    with pytest.raises(TypeError, match="list of conversations"):
        backend.generate(_user("not wrapped"))
    with pytest.raises(ValueError, match="role"):
        backend.generate([[{"role": "robot", "content": "x"}]])


def test_load_backend_specs(server, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("LOCAL_KEY", "sk-local")
    spec = {"backend": "openai", "model": "m", "base_url": server.base_url, "timeout_s": 3, "max_attempts": 2,
            "max_concurrency": 2, "api_key_env": "LOCAL_KEY", "extra_body": {"top_k": 1}}
    backend = load_backend(json.dumps(spec))
    assert isinstance(backend, OpenAIChatBackend) and backend.timeout_s == 3 and backend.client.max_retries == 1
    assert backend.generate([_user("x")])[0].text == "echo: x"
    assert server.requests[0]["top_k"] == 1 and server.headers[0]["authorization"] == "Bearer sk-local"
    assert load_backend("openai:gpt-x").model == "gpt-x"
    cached = load_backend({"backend": "openai", "model": "m", "base_url": server.base_url, "cache": tmp_path / "c"})
    assert isinstance(cached, CachedBackend) and cached.generate([_user("y")])[0].text == "echo: y"
    with pytest.raises(ValueError, match="choose one of"):
        load_backend({"backend": "gpt5"})
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['temprature'\]"):
        load_backend({"backend": "openai", "model": "m", "temprature": 0})


def test_speed_command_reports_throughput(server, capsys):
    from retrieval.llm.speed import main

    spec = {"backend": "openai", "model": "m", "base_url": server.base_url}
    report = main(["--llm", json.dumps(spec), "--max-new-tokens", "4", "--batch-size", "3"])
    assert report["model"] == f"openai:m@{server.base_url}"
    assert report["single"]["ok"] == 1 and report["batch"]["conversations"] == report["batch"]["ok"] == 3
    assert report["batch"]["tokens"] > 0 and report["batch"]["tokens_per_s"] > 0
    assert json.loads(capsys.readouterr().out) == report
