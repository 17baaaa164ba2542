"""A persistent generation cache around any backend, so rerunning an evaluation costs no LLM calls.

Entries live in one sqlite file, keyed by a SHA-256 of (backend identity, messages, generation
parameters). Only successful answers are stored: a failure is asked again next time. A sampled answer
(``temperature > 0``) is cached too, which makes reruns reproducible rather than re-sampled.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from retrieval.llm.base import (
    DEFAULT_MAX_NEW_TOKENS,
    Chat,
    GenerationParams,
    GenerationResult,
    LLMBackend,
    validate_conversations,
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS generations (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    completion_tokens INTEGER,
    latency_s REAL NOT NULL,
    created REAL NOT NULL
)
"""


def cache_key(identity: str, conversation: Chat, params: GenerationParams) -> str:
    """Hex SHA-256 of everything that determines the answer (``response_format`` only when set, so the keys
    of calls without one are those earlier versions wrote)."""
    fields = {
        "model": identity,
        "messages": conversation,
        "max_new_tokens": params.max_new_tokens,
        "temperature": params.temperature,
        "stop": list(params.stop),
    }
    if params.response_format is not None:
        fields["response_format"] = dict(params.response_format)
    blob = json.dumps(fields, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


class CachedBackend(LLMBackend):
    """Answers from ``path`` when it has them; asks ``backend`` for the rest and stores its successes.

    A cache hit comes back with ``cached=True``, ``attempts=0`` and ``latency_s`` of the lookup, not of
    the original call.
    """

    def __init__(self, backend: LLMBackend, path: str | Path):
        self.backend = backend
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        # One connection, guarded by a lock; WAL lets several processes read while one writes.
        self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(_SCHEMA)
        self._db.commit()

    @property
    def name(self) -> str:
        return self.backend.name

    @property
    def identity(self) -> str:
        return self.backend.identity

    def count_tokens(self, text: str) -> int:
        return self.backend.count_tokens(text)

    def __repr__(self) -> str:
        return f"CachedBackend({self.backend!r}, path={str(self.path)!r})"

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM generations").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()

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
        keys = [cache_key(self.identity, c, params) for c in conversations]
        results: list[GenerationResult | None] = [self._lookup(k) for k in keys]
        misses = [i for i, r in enumerate(results) if r is None]
        if misses:
            # response_format goes on only when set, so a backend written before it existed still works here
            extra = {"response_format": response_format} if response_format is not None else {}
            fresh = self.backend.generate(
                [conversations[i] for i in misses],
                max_new_tokens=max_new_tokens,
                temperature=temperature,
                stop=stop,
                **extra,
            )
            for i, result in zip(misses, fresh):
                results[i] = result
                if result.ok:
                    self._store(keys[i], result)
        return [r for r in results if r is not None]  # every one answered by now

    def _lookup(self, key: str) -> GenerationResult | None:
        start = time.perf_counter()
        with self._lock:
            row = self._db.execute("SELECT text, completion_tokens FROM generations WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return GenerationResult(
            text=row[0],
            ok=True,
            error=None,
            latency_s=time.perf_counter() - start,
            backend=self.name,
            model=self.identity,
            attempts=0,
            cached=True,
            completion_tokens=row[1],
        )

    def _store(self, key: str, result: GenerationResult) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO generations VALUES (?, ?, ?, ?, ?, ?)",
                (key, result.model, result.text, result.completion_tokens, result.latency_s, time.time()),
            )
            self._db.commit()
