"""LLM backends behind one interface: ``backend.generate(conversations) -> list[GenerationResult]``.

``load_backend(spec)`` builds one from config (``"smollm2"``, ``"transformers:PATH"``, ``"openai:MODEL"``
or a mapping; see :mod:`retrieval.llm.factory`); ``llm_spec(text)`` reads a ``--llm`` value (``none``: no LLM).
The local backends import torch only when made.
"""

from __future__ import annotations

from retrieval.llm.base import GenerationParams, GenerationResult, LLMBackend, RetryingBackend
from retrieval.llm.cache import CachedBackend
from retrieval.llm.factory import llm_spec, load_backend
from retrieval.llm.openai_chat import OpenAIChatBackend
from retrieval.llm.parsing import LLMOutputError, parse_json

__all__ = [
    "CachedBackend",
    "GenerationParams",
    "GenerationResult",
    "LLMBackend",
    "LLMOutputError",
    "OpenAIChatBackend",
    "RetryingBackend",
    "llm_spec",
    "load_backend",
    "parse_json",
]
