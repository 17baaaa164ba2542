"""OpenAI-compatible chat completions through the official ``openai`` client: hosted APIs, vLLM, Ollama,
llama.cpp's server, anything that answers ``POST {base_url}/chat/completions``.

Retries are the client's, and only the client's: a timeout, a connection error, 408/409/429 or a 5xx is retried
up to ``max_attempts - 1`` times, with jittered exponential backoff or after the wait the server asks for
(``retry-after-ms``, or ``Retry-After`` in seconds or as an HTTP date; a server's ``x-should-retry`` is obeyed).
What still fails comes back from the client as a typed error (``APITimeoutError``, ``APIConnectionError``,
``RateLimitError``, ``BadRequestError``, ... ``APIStatusError``), which becomes that conversation's recorded failure
(``ok=False`` with the reason) and is not retried again here. The retry loop of :class:`RetryingBackend` asks
again only for an empty answer, which no HTTP client can see as a failure. The conversations of a batch go out as
concurrent requests (``max_concurrency``), each on its own, so one failure never costs the others their answers.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from retrieval.llm.base import AttemptError, Chat, Completion, GenerationParams, RetryingBackend

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
# Local servers (llama.cpp, vLLM, Ollama) take no key, but the client insists on one; a hosted API answers 401.
NO_KEY = "no-key"
_FORMAT_TYPES = {"text", "json_object", "json_schema"}


def _openai():
    try:
        import openai
    except ModuleNotFoundError as e:  # a dependency of the package; missing only in a hand-made environment
        raise ModuleNotFoundError("the OpenAI-compatible backend needs the openai client: pip install openai") from e
    return openai


def resolve_api_key(api_key: str | None = None, api_key_env: str | None = None) -> str:
    """``api_key`` itself; else the variable ``api_key_env`` names (which must be set); else ``$OPENAI_API_KEY``;
    else a placeholder, which servers without authentication ignore."""
    if api_key:
        return api_key
    if api_key_env:
        key = os.environ.get(api_key_env)
        if not key:
            raise ValueError(f"api_key_env={api_key_env!r}, but the environment variable {api_key_env} is not set")
        return key
    return os.environ.get(DEFAULT_API_KEY_ENV) or NO_KEY


def response_format_payload(response_format: Mapping[str, Any]) -> dict:
    """The ``response_format`` a request carries: a mapping whose ``type`` is ``text``, ``json_object`` or
    ``json_schema`` goes as it is (so does a server's own extension of one, like llama.cpp's
    ``{"type": "json_object", "schema": ...}``); anything else is taken for a bare JSON schema and wrapped as
    ``{"type": "json_schema", "json_schema": {"name": "response", "schema": ...}}``."""
    fmt = dict(response_format)
    if fmt.get("type") in _FORMAT_TYPES:
        return fmt
    return {"type": "json_schema", "json_schema": {"name": "response", "schema": fmt}}


class OpenAIChatBackend(RetryingBackend):
    """One chat completion request per conversation, through an ``openai.OpenAI`` client.

    ``model`` and ``base_url`` default to ``OPENAI_MODEL`` and ``OPENAI_BASE_URL`` (read when the backend is made);
    the key is ``api_key``, else the environment variable named by ``api_key_env``, else ``OPENAI_API_KEY``, else
    a placeholder for servers that need none. ``timeout_s`` bounds each request; ``max_attempts`` counts the
    first request and the client's retries. ``backoff_s``/``max_backoff_s`` pace re-asking after an empty answer.
    ``extra_body`` is merged into every request's JSON (server-specific fields such as ``top_k``).
    """

    name = "openai"

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str | None = None,
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
        self.timeout_s = timeout_s
        self.max_concurrency = max(1, max_concurrency)
        self.extra_body = dict(extra_body or {})
        self._openai = _openai()
        self.client = self._openai.OpenAI(
            base_url=self.base_url,
            api_key=resolve_api_key(api_key, api_key_env),
            timeout=timeout_s,
            max_retries=max_attempts - 1,
        )

    @property
    def identity(self) -> str:
        return f"openai:{self.model}@{self.base_url}"  # as before the openai client: old caches stay valid

    def __repr__(self) -> str:
        return f"OpenAIChatBackend(model={self.model!r}, url={self.url!r})"

    def close(self) -> None:
        self.client.close()

    def _attempt(self, conversations: Sequence[Chat], params: GenerationParams) -> list[Completion | AttemptError]:
        if len(conversations) == 1 or self.max_concurrency == 1:
            return [self._request(c, params) for c in conversations]
        with ThreadPoolExecutor(min(self.max_concurrency, len(conversations))) as pool:
            return list(pool.map(lambda c: self._request(c, params), conversations))

    def _arguments(self, conversation: Chat, params: GenerationParams) -> dict:
        arguments: dict[str, Any] = {
            "model": self.model,
            "messages": conversation,
            "max_tokens": params.max_new_tokens,
            "temperature": params.temperature,
        }
        if params.stop:
            arguments["stop"] = list(params.stop)
        if params.response_format is not None:
            arguments["response_format"] = response_format_payload(params.response_format)
        if self.extra_body:
            arguments["extra_body"] = self.extra_body
        return arguments

    def _request(self, conversation: Chat, params: GenerationParams) -> Completion | AttemptError:
        start = time.perf_counter()
        try:
            raw = self.client.chat.completions.with_raw_response.create(**self._arguments(conversation, params))
        except self._openai.APIError as exc:
            return AttemptError(
                self._describe(exc),
                retryable=False,  # the client has retried what was worth retrying
                latency_s=time.perf_counter() - start,
                attempts=_requests_made(exc.request),
            )
        except Exception as exc:  # anything else in the client: this conversation's failure, not the batch's
            return AttemptError(
                f"POST {self.url} failed: {type(exc).__name__}: {exc}",
                retryable=False,
                latency_s=time.perf_counter() - start,
            )
        latency = time.perf_counter() - start
        attempts = int(getattr(raw, "retries_taken", 0) or 0) + 1
        try:
            completion = raw.parse()
            text = completion.choices[0].message.content or ""
        except Exception:  # a 200 whose body is no chat completion (a proxy's page, another API)
            return AttemptError(
                f"POST {self.url} returned no chat completion: {raw.text[:300]!r}",
                retryable=False,
                latency_s=latency,
                attempts=attempts,
            )
        usage = getattr(completion, "usage", None)
        return Completion(
            text=text,
            completion_tokens=getattr(usage, "completion_tokens", None),
            latency_s=latency,
            attempts=attempts,
        )

    def _describe(self, exc: Exception) -> str:
        """The recorded reason for a typed client error: the URL, what happened, the server's own message."""
        errors = self._openai
        if isinstance(exc, errors.APITimeoutError):
            return f"POST {self.url} timed out after {self.timeout_s:g}s"
        if isinstance(exc, errors.APIConnectionError):
            cause = exc.__cause__
            return f"POST {self.url} failed: {exc.message}" + (f" ({type(cause).__name__}: {cause})" if cause else "")
        if isinstance(exc, errors.APIStatusError):
            reason = getattr(exc.response, "reason_phrase", "") or ""
            return f"POST {self.url} -> HTTP {exc.status_code} {reason} ({type(exc).__name__}): {_detail(exc)}"
        return f"POST {self.url} failed: {type(exc).__name__}: {exc}"


def _detail(exc) -> str:
    """The server's error message when its body has one (``{"error": {"message": ...}}``), else the body's start."""
    body = exc.body
    error = body.get("error", body) if isinstance(body, Mapping) else None
    message = error.get("message") if isinstance(error, Mapping) else None
    if isinstance(message, str) and message:
        return message[:300]
    try:
        return exc.response.text[:300]
    except Exception:  # a streamed body that was closed unread
        return str(body)[:300]


def _requests_made(request) -> int:
    """Requests the client sent for one call: its last request carries ``x-stainless-retry-count``."""
    try:
        return int(request.headers.get("x-stainless-retry-count", 0)) + 1
    except (AttributeError, TypeError, ValueError):
        return 1
