"""The LLM interface every stage talks to (:class:`LLMBackend`), and the retry loop concrete backends share.

A backend turns a batch of chat conversations (lists of ``{"role", "content"}`` messages) into one
:class:`GenerationResult` per conversation. ``generate`` never raises for a failed generation: a timeout,
a server error or an empty answer is retried, then returned with ``ok=False`` and its reason, so an
evaluation loop over thousands of turns never loses its run to one bad call.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

Message = dict[str, str]
Chat = list[Message]  # one chat conversation sent to an LLM (not a benchmark's retrieval.data.types.Conversation)

DEFAULT_MAX_NEW_TOKENS = 256
_ROLES = {"system", "user", "assistant"}


@dataclass(frozen=True)
class GenerationParams:
    """What, besides the messages, determines an answer (and so belongs in a cache key).

    ``response_format`` (optional) constrains the answer's shape where the backend can: ``{"type": "json_object"}``
    (any JSON object), ``{"type": "json_schema", "json_schema": {"name": ..., "schema": {...}}}``, a server's own
    form such as llama.cpp's ``{"type": "json_object", "schema": {...}}``, or a bare JSON schema (sent as a
    ``json_schema``). The OpenAI-compatible backend passes it to the server; the local transformers backends cannot
    constrain decoding and ignore it, so a prompt still asks for JSON and :func:`~retrieval.llm.parsing.parse_json`
    still reads the answer.
    """

    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS
    temperature: float = 0.0
    stop: tuple[str, ...] = ()
    response_format: Mapping[str, Any] | None = field(default=None, hash=False)

    def __post_init__(self) -> None:
        if self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {self.max_new_tokens}")
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if self.response_format is not None and not isinstance(self.response_format, Mapping):
            raise TypeError(f"response_format must be a mapping, got {type(self.response_format).__name__}")


@dataclass(frozen=True)
class GenerationResult:
    """One conversation's answer.

    ``backend`` is the backend kind (``"openai"``, ``"transformers"``, ``"smollm2"``) and ``model`` its
    full identity (model name and where it is served from), the string cache keys are made of.
    ``text`` is ``""`` whenever ``ok`` is False; ``error`` then says why. ``latency_s`` is the wall time
    spent on this conversation in this call, retries included (for a batched local backend, the
    batch's time shared equally); ``attempts`` the requests (or decoding passes) made for it, retries
    included. ``completion_tokens`` is the number of generated tokens when known.
    """

    text: str
    ok: bool
    error: str | None
    latency_s: float
    backend: str
    model: str
    attempts: int = 1
    cached: bool = False
    completion_tokens: int | None = None


class AttemptError(Exception):
    """One failed attempt at one conversation; ``retryable`` says whether trying again can help.

    ``attempts`` is how many requests the attempt made (more than 1 when a client retried inside it).
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = True,
        retry_after_s: float | None = None,
        latency_s: float = 0.0,
        attempts: int = 1,
    ):
        super().__init__(message)
        self.retryable = retryable
        self.retry_after_s = retry_after_s
        self.latency_s = latency_s
        self.attempts = attempts


@dataclass
class Completion:
    """What one successful attempt produced (``attempts``: the requests it took, client retries included)."""

    text: str
    completion_tokens: int | None = None
    latency_s: float = 0.0
    attempts: int = 1


def validate_conversations(conversations: Sequence[Chat]) -> None:
    """Fail fast (this *is* a caller bug, not a generation failure) on malformed chat messages."""
    if isinstance(conversations, dict) or (conversations and isinstance(conversations[0], dict)):
        raise TypeError("generate() takes a list of conversations, each a list of messages; wrap one in [...]")
    for i, conversation in enumerate(conversations):
        if not conversation:
            raise ValueError(f"conversation {i} has no messages")
        for message in conversation:
            if (
                not isinstance(message, dict)
                or message.get("role") not in _ROLES
                or not isinstance(message.get("content"), str)
            ):
                raise ValueError(
                    f"conversation {i}: every message must be {{'role': one of {sorted(_ROLES)}, "
                    f"'content': str}}, got {message!r}"
                )


def truncate_at_stop(text: str, stop: Sequence[str]) -> str:
    """Cut ``text`` at the earliest stop string (servers and local decoding may leave it in)."""
    cut = min((i for s in stop if s and (i := text.find(s)) >= 0), default=len(text))
    return text[:cut]


class LLMBackend(Protocol):
    """Chat LLM: ``generate(conversations) -> list[GenerationResult]``, one result per conversation.

    The interface the backends here share (:class:`RetryingBackend` and its subclasses, the sqlite
    :class:`~retrieval.llm.cache.CachedBackend`); any object with these members stands in where a signature asks
    for one (a test's scripted backend). A class deriving from it inherits :meth:`count_tokens`."""

    @property
    def name(self) -> str:
        """The backend kind (``"openai"``, ``"transformers"``, ``"smollm2"``), which its results name."""
        ...

    @property
    def identity(self) -> str:
        """A stable string naming the model and where it runs (no secrets): the cache key's prefix."""
        ...

    def generate(
        self,
        conversations: Sequence[Chat],
        *,
        max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
        response_format: Mapping[str, Any] | None = None,
    ) -> list[GenerationResult]:
        """Answer each conversation; failures come back as results with ``ok=False``, never raised.

        ``response_format``: see :class:`GenerationParams` (backends that cannot constrain decoding ignore it).
        """
        ...

    def count_tokens(self, text: str) -> int:
        """Tokens in ``text`` by this backend's tokenizer; whitespace words when it has none."""
        return len(text.split())


class RetryingBackend(LLMBackend):
    """A backend that answers through ``_attempt``, retried for failed or empty answers.

    Subclasses implement ``_attempt(conversations, params)`` returning, per conversation, a
    :class:`Completion` or an :class:`AttemptError`. Only the conversations that failed retryably or
    answered empty are tried again, after an exponential backoff (``backoff_s * 2**round``, or the
    server's ``Retry-After`` when larger), up to ``max_attempts`` attempts in all.
    """

    name: str = "llm"  # the backend kind a result names (GenerationResult.backend)

    def __init__(self, *, max_attempts: int = 3, backoff_s: float = 1.0, max_backoff_s: float = 30.0):
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
        self.max_attempts = max_attempts
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s

    @abstractmethod
    def _attempt(
        self, conversations: Sequence[Chat], params: GenerationParams
    ) -> list[Completion | AttemptError]:
        """One try at each conversation; must return one entry per conversation, in order."""

    def generate(
        self,
        conversations: Sequence[Chat],
        *,
        max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
        response_format: Mapping[str, Any] | None = None,
    ) -> list[GenerationResult]:
        validate_conversations(conversations)
        params = GenerationParams(max_new_tokens, temperature, tuple(stop or ()), response_format)
        n = len(conversations)
        outcome: list[Completion | AttemptError | None] = [None] * n
        latency = [0.0] * n
        attempts = [0] * n
        pending = list(range(n))
        for round_ in range(self.max_attempts):
            if round_ > 0:
                time.sleep(self._backoff(round_, [outcome[i] for i in pending]))
            start = time.perf_counter()
            try:
                answers = self._attempt([conversations[i] for i in pending], params)
            except Exception as exc:  # a backend bug or a crash inside the model: record, don't lose the batch
                shared = (time.perf_counter() - start) / len(pending)
                answers = [
                    AttemptError(f"{type(exc).__name__}: {exc}", retryable=False, latency_s=shared) for _ in pending
                ]
            if len(answers) != len(pending):
                raise RuntimeError(f"{type(self).__name__}._attempt returned {len(answers)} for {len(pending)}")
            for i, answer in zip(pending, answers):
                attempts[i] += answer.attempts
                if isinstance(answer, Completion):
                    answer.text = truncate_at_stop(answer.text, params.stop)
                latency[i] += answer.latency_s
                outcome[i] = answer
            pending = [i for i in pending if self._should_retry(outcome[i])]
            if not pending:
                break
        return [self._result(outcome[i], latency[i], attempts[i]) for i in range(n)]

    @staticmethod
    def _should_retry(answer: Completion | AttemptError | None) -> bool:
        if isinstance(answer, AttemptError):
            return answer.retryable
        return answer is None or not answer.text.strip()

    def _backoff(self, round_: int, failures: list[Completion | AttemptError | None]) -> float:
        delay = self.backoff_s * 2 ** (round_ - 1)
        asked = [f.retry_after_s for f in failures if isinstance(f, AttemptError) and f.retry_after_s]
        return min(max([delay, *asked]), self.max_backoff_s)

    def _result(self, answer: Completion | AttemptError | None, latency_s: float, attempts: int) -> GenerationResult:
        def result(text: str, error: str | None, completion_tokens: int | None = None) -> GenerationResult:
            return GenerationResult(text, error is None, error, latency_s, self.name, self.identity, attempts,
                                    completion_tokens=completion_tokens)

        if isinstance(answer, AttemptError):
            return result("", str(answer))
        if answer is None or not answer.text.strip():
            return result("", "empty answer")
        return result(answer.text.strip(), None, answer.completion_tokens)
