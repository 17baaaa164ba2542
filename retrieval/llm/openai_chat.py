"""OpenAI-compatible chat completions over HTTP: hosted APIs, vLLM, Ollama, llama.cpp's server.

Standard library only (``urllib``), so talking to a server adds no dependency. The conversations of a
batch go out as concurrent requests (``max_concurrency``); each one is retried on timeouts, connection
errors, 408/409/429 and 5xx, with exponential backoff (or the server's ``Retry-After``).
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from retrieval.llm.base import AttemptError, Chat, Completion, GenerationParams, RetryingBackend

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_RETRYABLE_STATUS = {408, 409, 429}


class OpenAIChatBackend(RetryingBackend):
    """``POST {base_url}/chat/completions`` for each conversation.

    ``base_url``, ``api_key`` and ``model`` default to the environment variables ``OPENAI_BASE_URL``,
    ``OPENAI_API_KEY`` and ``OPENAI_MODEL`` (read here, when the backend is made). Local servers
    usually need no key; the model name is whatever the server was started with.
    """

    name = "openai"

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        max_attempts: int = 4,
        backoff_s: float = 1.0,
        max_backoff_s: float = 30.0,
        max_concurrency: int = 4,
        extra_body: dict | None = None,
    ):
        super().__init__(max_attempts=max_attempts, backoff_s=backoff_s, max_backoff_s=max_backoff_s)
        self.model = model or os.environ.get("OPENAI_MODEL")
        if not self.model:
            raise ValueError("OpenAIChatBackend needs a model name: pass model=... or set OPENAI_MODEL")
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.url = f"{self.base_url}/chat/completions"
        self._api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.timeout_s = timeout_s
        self.max_concurrency = max(1, max_concurrency)
        self.extra_body = dict(extra_body or {})

    @property
    def identity(self) -> str:
        return f"openai:{self.model}@{self.base_url}"

    def __repr__(self) -> str:
        return f"OpenAIChatBackend(model={self.model!r}, url={self.url!r})"

    def _attempt(
        self, conversations: Sequence[Chat], params: GenerationParams
    ) -> list[Completion | AttemptError]:
        if len(conversations) == 1 or self.max_concurrency == 1:
            return [self._request(c, params) for c in conversations]
        with ThreadPoolExecutor(min(self.max_concurrency, len(conversations))) as pool:
            return list(pool.map(lambda c: self._request(c, params), conversations))

    def _payload(self, conversation: Chat, params: GenerationParams) -> dict:
        payload = {
            "model": self.model,
            "messages": conversation,
            "max_tokens": params.max_new_tokens,
            "temperature": params.temperature,
            **self.extra_body,
        }
        if params.stop:
            payload["stop"] = list(params.stop)
        return payload

    def _request(self, conversation: Chat, params: GenerationParams) -> Completion | AttemptError:
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        body = json.dumps(self._payload(conversation, params)).encode()
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        start = time.perf_counter()
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")[:300]
            retryable = exc.code in _RETRYABLE_STATUS or exc.code >= 500
            return AttemptError(
                f"POST {self.url} -> HTTP {exc.code} {exc.reason}: {detail}",
                retryable=retryable,
                retry_after_s=_retry_after(exc.headers.get("Retry-After")),
                latency_s=time.perf_counter() - start,
            )
        except TimeoutError as exc:
            return AttemptError(
                f"POST {self.url} timed out after {self.timeout_s:g}s ({exc})", latency_s=time.perf_counter() - start
            )
        except urllib.error.URLError as exc:
            timed_out = isinstance(exc.reason, TimeoutError)
            what = f"timed out after {self.timeout_s:g}s" if timed_out else f"failed: {exc.reason}"
            return AttemptError(f"POST {self.url} {what}", latency_s=time.perf_counter() - start)
        except OSError as exc:  # connection reset mid-response and the like
            return AttemptError(f"POST {self.url} failed: {exc}", latency_s=time.perf_counter() - start)
        latency = time.perf_counter() - start
        try:
            data = json.loads(raw)
            choice = data["choices"][0]
            text = choice["message"].get("content") or ""
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            return AttemptError(
                f"POST {self.url} returned no chat completion: {raw[:300].decode('utf-8', 'replace')!r}",
                latency_s=latency,
            )
        usage = data.get("usage") or {}
        return Completion(text=text, completion_tokens=usage.get("completion_tokens"), latency_s=latency)


def _retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header in its delta-seconds form (the HTTP-date form is ignored)."""
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None
