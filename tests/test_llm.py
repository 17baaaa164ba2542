"""LLM layer: JSON parsing, the retry loop's crash handling, and the transformers backend on a tiny random model
(the real SmolLM2 is behind ``slow``). The OpenAI-compatible backend, the cache and the factory are in
test_openai_backend.py; the same backend against a real llama.cpp server in test_llm_server.py."""

from __future__ import annotations

import json

import pytest

from retrieval.llm import LLMOutputError, RetryingBackend, load_backend, parse_json


def _user(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


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

