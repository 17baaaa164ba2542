"""LLM layer: the HTTP backend against a real local chat-completions server, retries, the cache,
JSON parsing, the factory, and the transformers backend on a tiny random model (the real SmolLM2 is
behind ``slow``)."""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from retrieval.llm import (
    CachedBackend,
    LLMOutputError,
    OpenAIChatBackend,
    RetryingBackend,
    load_backend,
    parse_json,
)


class ChatServer:
    """A chat-completions server on 127.0.0.1 whose behaviour is scripted per user message.

    ``script[content]`` is a list of actions taken by successive requests whose last message is
    ``content``: ``("status", code)``, ``("sleep", seconds)``, ``("text", answer)``, ``("garbage", body)``.
    With the script used up, it answers ``"echo: <content>"``.
    """

    def __init__(self) -> None:
        self.script: dict[str, list[tuple[str, object]]] = defaultdict(list)
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                content = body["messages"][-1]["content"]
                with server._lock:
                    server.requests.append(body)
                    server.headers.append(dict(self.headers))
                    steps = server.script[content]
                    action = steps.pop(0) if steps else ("text", f"echo: {content}")
                kind, value = action
                try:
                    if kind == "sleep":
                        time.sleep(value)
                        self._reply(200, _completion("too late"))
                    elif kind == "status":
                        self._reply(value, {"error": {"message": f"scripted {value}"}}, {"Retry-After": "0"})
                    elif kind == "garbage":
                        self._reply(200, value)
                    else:
                        self._reply(200, _completion(value))
                except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting
                    pass

            def _reply(self, code: int, payload, headers: dict | None = None) -> None:
                data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def hits(self, content: str) -> int:
        return sum(r["messages"][-1]["content"] == content for r in self.requests)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _completion(text: str) -> dict:
    return {
        "id": "x",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": len(text.split()), "total_tokens": 3},
    }


def _user(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


@pytest.fixture
def server():
    s = ChatServer()
    yield s
    s.close()


@pytest.fixture
def backend(server):
    return OpenAIChatBackend("test-model", base_url=server.base_url, api_key="sk-test", timeout_s=2, backoff_s=0.01)


def test_http_backend_answers_a_batch_in_order(server, backend):
    conversations = [[{"role": "system", "content": "be brief"}, *_user(f"q{i}")] for i in range(5)]
    results = backend.generate(conversations, max_new_tokens=7, stop=["\n"])
    assert [r.text for r in results] == [f"echo: q{i}" for i in range(5)]
    assert all(r.ok and r.error is None and r.attempts == 1 and r.latency_s > 0 for r in results)
    assert results[0].backend == "openai" and results[0].model == f"openai:test-model@{server.base_url}"
    assert results[0].completion_tokens == 2
    sent = server.requests[0]
    assert sent["model"] == "test-model" and sent["max_tokens"] == 7 and sent["temperature"] == 0.0
    assert sent["stop"] == ["\n"] and sent["messages"][0] == {"role": "system", "content": "be brief"}
    assert server.headers[0]["Authorization"] == "Bearer sk-test"


def test_http_backend_retries_a_500_then_succeeds(server, backend):
    server.script["flaky"] = [("status", 500), ("text", "fine now")]
    (result,) = backend.generate([_user("flaky")])
    assert result.ok and result.text == "fine now" and result.attempts == 2
    assert server.hits("flaky") == 2


def test_http_backend_retries_429_and_gives_up_with_the_status(server, backend):
    server.script["busy"] = [("status", 429)] * 10
    (result,) = backend.generate([_user("busy")])
    assert not result.ok and result.text == "" and result.attempts == backend.max_attempts == 4
    assert "HTTP 429" in result.error and f"{server.base_url}/chat/completions" in result.error


def test_http_backend_does_not_retry_a_client_error(server, backend):
    server.script["bad"] = [("status", 401)]
    (result,) = backend.generate([_user("bad")])
    assert not result.ok and "HTTP 401" in result.error and "scripted 401" in result.error
    assert server.hits("bad") == 1


def test_http_backend_timeout_ends_as_a_recorded_failure(server):
    slow = OpenAIChatBackend("m", base_url=server.base_url, timeout_s=0.2, max_attempts=2, backoff_s=0.01)
    server.script["slow"] = [("sleep", 1.0), ("sleep", 1.0)]
    start = time.perf_counter()
    results = slow.generate([_user("slow"), _user("quick")])
    assert time.perf_counter() - start < 1.5
    assert not results[0].ok and "timed out after 0.2s" in results[0].error and server.base_url in results[0].error
    assert results[0].attempts == 2 and server.hits("slow") == 2
    assert results[1].ok and results[1].text == "echo: quick"  # one failure never costs the batch


def test_http_backend_retries_an_empty_answer(server, backend):
    server.script["shy"] = [("text", ""), ("text", "  "), ("text", "found it")]
    server.script["mute"] = [("text", "")] * 10
    shy, mute = backend.generate([_user("shy"), _user("mute")])
    assert shy.ok and shy.text == "found it" and shy.attempts == 3
    assert not mute.ok and mute.error == "empty answer" and mute.attempts == 4


def test_http_backend_reports_a_malformed_body(server, backend):
    server.script["odd"] = [("garbage", "<html>proxy error</html>")] * 10
    (result,) = backend.generate([_user("odd")])
    assert not result.ok and "returned no chat completion" in result.error and "proxy error" in result.error


def test_http_backend_names_the_url_when_nothing_listens(server):
    url = server.base_url
    server.close()
    dead = OpenAIChatBackend("m", base_url=url, timeout_s=1, max_attempts=2, backoff_s=0.01)
    (result,) = dead.generate([_user("anyone?")])
    assert not result.ok and f"{url}/chat/completions" in result.error and result.attempts == 2


def test_http_backend_reads_the_environment(monkeypatch, server):
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("OPENAI_MODEL", "env-model")
    (result,) = OpenAIChatBackend().generate([_user("hi")])
    assert result.ok and server.requests[0]["model"] == "env-model"
    assert server.headers[0]["Authorization"] == "Bearer sk-env"
    monkeypatch.delenv("OPENAI_MODEL")
    with pytest.raises(ValueError, match="OPENAI_MODEL"):
        OpenAIChatBackend()


def test_malformed_messages_are_a_caller_error(backend):
    with pytest.raises(TypeError, match="list of conversations"):
        backend.generate(_user("not wrapped"))
    with pytest.raises(ValueError, match="role"):
        backend.generate([[{"role": "robot", "content": "x"}]])


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
    assert recovered.ok and not recovered.cached and server.hits("down") == 5


def test_load_backend_specs(server, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    backend = load_backend({"backend": "openai", "model": "m", "base_url": server.base_url, "timeout_s": 3})
    assert isinstance(backend, OpenAIChatBackend) and backend.timeout_s == 3
    assert load_backend("openai:gpt-x").model == "gpt-x"
    cached = load_backend({"backend": "openai", "model": "m", "base_url": server.base_url, "cache": tmp_path / "c"})
    assert isinstance(cached, CachedBackend) and cached.generate([_user("x")])[0].text == "echo: x"
    with pytest.raises(ValueError, match="choose one of"):
        load_backend({"backend": "gpt5"})
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['temprature'\]"):
        load_backend({"backend": "openai", "model": "m", "temprature": 0})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"op": "filter", "col": "session"}', {"op": "filter", "col": "session"}),
        ('Here is the plan:\n```json\n[{"op": "sort"}]\n```\nHope this helps!', [{"op": "sort"}]),
        ('See [1] and [2]. ```\n{"a": {"b": [1, 2]}}\n```', {"a": {"b": [1, 2]}}),
        ('Plan: {"steps": ["a", "b"]} and then {"other": 1}', {"steps": ["a", "b"]}),
        ("Note {not json} but then [1, 2, 3]", [1, 2, 3]),
    ],
)
def test_parse_json_finds_the_first_object_or_array(text, expected):
    assert parse_json(text) == expected


def test_parse_json_raises_naming_the_text():
    with pytest.raises(LLMOutputError, match="no valid JSON dict or list.*I cannot plan that") as info:
        parse_json("I cannot plan that {op: filter}")
    assert info.value.text == "I cannot plan that {op: filter}"
    with pytest.raises(LLMOutputError, match="no valid JSON dict"):
        parse_json("[1, 2]", expect=dict)


class CrashingBackend(RetryingBackend):
    name = "crash"
    identity = "crash:test"

    def __init__(self):
        super().__init__(max_attempts=3, backoff_s=0)
        self.calls = 0

    def _attempt(self, conversations, params):
        self.calls += 1
        raise RuntimeError("CUDA out of memory")


def test_a_crashing_backend_returns_failures_instead_of_raising():
    crashing = CrashingBackend()
    results = crashing.generate([_user("a"), _user("b")])
    assert [r.ok for r in results] == [False, False] and crashing.calls == 1  # a crash is not retried
    assert results[0].error == "RuntimeError: CUDA out of memory" and results[0].model == "crash:test"


# --- local transformers backend, on a tiny random Llama saved in a temp folder -------------------


@pytest.fixture(scope="module")
def tiny_lm_dir(tmp_path_factory):
    import torch
    import transformers

    from models.packaged import default_encoder_path

    tokenizer = transformers.AutoTokenizer.from_pretrained(default_encoder_path())
    tokenizer.chat_template = (
        "{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }} {% endfor %}"
        "{% if add_generation_prompt %}[assistant]{% endif %}"
    )
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=256,
        bos_token_id=tokenizer.cls_token_id,
        eos_token_id=tokenizer.sep_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    folder = tmp_path_factory.mktemp("tiny-llama")
    transformers.LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_transformers_backend_batches_like_single_calls(tiny_lm_dir):
    local = load_backend({"backend": "transformers", "model": str(tiny_lm_dir), "batch_size": 3, "device": "cpu"})
    conversations = [_user("short"), _user("a much longer question about the table and its cells"), _user("mid one")]
    batch = local.generate(conversations, max_new_tokens=6)
    single = [local.generate([c], max_new_tokens=6)[0] for c in conversations]
    assert [r.text for r in batch] == [r.text for r in single]  # left padding leaves answers unchanged
    assert [r.text for r in local.generate(conversations, max_new_tokens=6)] == [r.text for r in batch]
    assert all(r.backend == "transformers" and r.model == f"transformers:{tiny_lm_dir}" for r in batch)
    assert all(r.ok and r.text and 0 < r.completion_tokens <= 6 for r in batch)
    assert local.count_tokens("hello world") == 2


def test_transformers_backend_cuts_at_stop_strings(tiny_lm_dir):
    local = load_backend(f"transformers:{tiny_lm_dir}")
    (free,) = local.generate([_user("stop test")], max_new_tokens=8)
    words = free.text.split()
    assert free.ok and len(words) >= 2
    (cut,) = local.generate([_user("stop test")], max_new_tokens=8, stop=[words[1]])
    assert words[1] not in cut.text and free.text.startswith(cut.text.strip())


def test_transformers_backend_reports_a_missing_gguf(tiny_lm_dir):
    with pytest.raises(FileNotFoundError, match="no GGUF file"):
        load_backend({"backend": "transformers", "model": str(tiny_lm_dir), "gguf_file": "nope.gguf"})


@pytest.mark.slow
def test_smollm2_answers_deterministically():
    """The real offline default: converts the packaged GGUF once (~20 s), then reloads the cached copy."""
    smollm = load_backend("smollm2")
    conversations = [_user("What is the capital of France? Answer in one word."), _user("Say hello.")]
    first = smollm.generate(conversations, max_new_tokens=8)
    second = smollm.generate(conversations, max_new_tokens=8)
    assert all(r.ok for r in first) and [r.text for r in first] == [r.text for r in second]
    assert "paris" in first[0].text.lower()
    assert first[0].model == "smollm2:SmolLM2-135M-Instruct.Q4_1.gguf" and first[0].backend == "smollm2"
    assert smollm.count_tokens("The capital of France") < 8


@pytest.mark.slow
def test_smollm2_conversion_writes_a_complete_folder(tmp_path):
    from retrieval.llm.local import TransformersBackend
    from retrieval.llm.smollm2 import ensure_smollm2

    folder = ensure_smollm2(tmp_path / "smollm2")
    assert {"config.json", "model.safetensors", "tokenizer.json", "chat_template.jinja"} <= {
        p.name for p in folder.iterdir()
    }
    assert "quantization_config" not in json.loads((folder / "config.json").read_text())
    assert [p.name for p in tmp_path.iterdir()] == ["smollm2"]  # no staging folder left behind
    assert ensure_smollm2(folder) == folder  # a second call converts nothing
    conversation = _user("Name a colour.")
    fresh = TransformersBackend(folder).generate([conversation], max_new_tokens=6)[0]
    cached = load_backend("smollm2").generate([conversation], max_new_tokens=6)[0]
    assert fresh.ok and fresh.text == cached.text


def test_speed_command_reports_throughput(server, capsys):
    from retrieval.llm.speed import main

    spec = {"backend": "openai", "model": "m", "base_url": server.base_url}
    report = main(["--llm", json.dumps(spec), "--max-new-tokens", "4", "--batch-size", "3"])
    assert report["model"] == f"openai:m@{server.base_url}"
    assert report["single"]["ok"] == 1 and report["batch"]["conversations"] == report["batch"]["ok"] == 3
    assert report["batch"]["tokens"] > 0 and report["batch"]["tokens_per_s"] > 0
    assert json.loads(capsys.readouterr().out) == report
