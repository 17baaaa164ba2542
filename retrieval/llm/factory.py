"""Backends from config: ``load_backend({"backend": "smollm2"})`` and friends.

Spec forms (a YAML mapping or a string):

- ``"smollm2"`` or ``{"backend": "smollm2"}``: the offline default (SmolLM2-135M-Instruct on transformers).
- ``"transformers:PATH"`` or ``{"backend": "transformers", "model": PATH, "gguf_file": NAME}``: any local
  causal LM folder, hub name, or ``.gguf`` file.
- ``"openai:MODEL"`` or ``{"backend": "openai", "model": M, "base_url": URL, "api_key_env": VAR, "timeout_s": 60,
  "max_attempts": 4, "max_concurrency": 4, "extra_body": {...}}``: an OpenAI-compatible server (hosted, vLLM, Ollama,
  llama.cpp) through the official ``openai`` client; unset fields come from ``OPENAI_MODEL``, ``OPENAI_BASE_URL``,
  ``OPENAI_API_KEY`` (``api_key_env`` names another variable to read the key from; ``api_key`` gives it inline).

Any spec may add ``"cache": PATH`` to wrap the backend in a sqlite :class:`CachedBackend`. On the command line
(``--llm``) a spec is one of the strings, a JSON mapping, or ``none`` (no LLM); :func:`llm_spec` reads every form.
"""

from __future__ import annotations

import importlib
import inspect
import json
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


def llm_spec(spec: Mapping[str, Any] | str | None) -> dict | None:
    """The one reading of an LLM spec (a ``--llm`` flag, a config's ``llm`` key) as a mapping.

    ``None``, ``""`` and ``"none"``: no LLM (None). A mapping, or a string holding a JSON mapping: that mapping.
    ``"kind"`` or ``"kind:model"``: ``{"backend": kind, "model": model}``. ``ValueError`` on anything else.
    """
    if spec is None:
        return None
    if isinstance(spec, Mapping):
        return dict(spec)
    if not isinstance(spec, str):
        raise TypeError(f"an LLM spec is a mapping or a string, got {type(spec).__name__}")
    text = spec.strip()
    if text.lower() in ("", "none"):
        return None
    if text.startswith("{"):
        try:
            mapping = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"LLM spec {spec!r}: invalid JSON: {e.msg}") from None
        if not isinstance(mapping, dict):
            raise ValueError(f"LLM spec {spec!r}: expected a JSON mapping")
        return mapping
    kind, _, model = text.partition(":")
    return {"backend": kind, **({"model": model} if model else {})}


def load_backend(spec: Mapping[str, Any] | str, cache: str | None = None) -> LLMBackend:
    """The backend a spec (:func:`llm_spec`) names, in a sqlite cache at ``cache`` (or the spec's ``cache``) when
    given; raises ``ValueError`` naming the allowed choices on a bad spec, or when the spec says no LLM."""
    options = llm_spec(spec)
    if options is None:
        raise ValueError(f"LLM spec {spec!r} names no backend; choose one of {sorted(_BACKENDS)}")
    kind = options.pop("backend", None)
    cache = cache or options.pop("cache", None)
    options.pop("cache", None)  # an explicit ``cache`` argument wins over the spec's
    if kind not in _BACKENDS:
        raise ValueError(f"unknown LLM backend {kind!r} in {spec!r}; choose one of {sorted(_BACKENDS)}")
    module, _, name = _BACKENDS[kind].partition(":")
    cls = getattr(importlib.import_module(module), name)
    allowed = {p for p in inspect.signature(cls.__init__).parameters if p != "self"}
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} for LLM backend {kind!r}; allowed: {sorted(allowed)}")
    backend = cls(**options)
    return CachedBackend(backend, cache) if cache else backend
