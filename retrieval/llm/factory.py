"""Backends from config: ``load_backend({"backend": "smollm2"})`` and friends.

Spec forms (a YAML mapping or a string):

- ``"smollm2"`` or ``{"backend": "smollm2"}``: the offline default (SmolLM2-135M-Instruct on transformers).
- ``"transformers:PATH"`` or ``{"backend": "transformers", "model": PATH, "gguf_file": NAME}``: any local
  causal LM folder, hub name, or ``.gguf`` file.
- ``"openai:MODEL"`` or ``{"backend": "openai", "model": M, "base_url": URL, "api_key": KEY, "timeout_s": 60}``:
  an OpenAI-compatible server; unset fields come from ``OPENAI_MODEL``, ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``.

Any spec may add ``"cache": PATH`` to wrap the backend in a sqlite :class:`CachedBackend`.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping
from typing import Any

from retrieval.llm.base import LLMBackend
from retrieval.llm.cache import CachedBackend

# Imported on demand, so asking for a server never imports torch.
_BACKENDS = {
    "openai": "retrieval.llm.openai_chat:OpenAIChatBackend",
    "transformers": "retrieval.llm.local:TransformersBackend",
    "smollm2": "retrieval.llm.smollm2:SmolLM2Backend",
}


def load_backend(spec: Mapping[str, Any] | str) -> LLMBackend:
    """The backend a config names; raises ``ValueError`` naming the allowed choices on a bad spec."""
    if isinstance(spec, str):
        kind, _, model = spec.partition(":")
        spec = {"backend": kind, **({"model": model} if model else {})}
    if not isinstance(spec, Mapping):
        raise TypeError(f"an LLM spec is a mapping or a string, got {type(spec).__name__}")
    options = dict(spec)
    kind = options.pop("backend", None)
    cache = options.pop("cache", None)
    if kind not in _BACKENDS:
        raise ValueError(f"unknown LLM backend {kind!r} in {dict(spec)!r}; choose one of {sorted(_BACKENDS)}")
    module, _, name = _BACKENDS[kind].partition(":")
    cls = getattr(importlib.import_module(module), name)
    allowed = {p for p in inspect.signature(cls.__init__).parameters if p != "self"}
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} for LLM backend {kind!r}; allowed: {sorted(allowed)}")
    backend = cls(**options)
    return CachedBackend(backend, cache) if cache else backend
