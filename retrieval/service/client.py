"""A small Python client of the memory service (``retrieval.service.api``), over ``httpx``.

    admin = MemoryClient.create("http://127.0.0.1:8000", name="ann")   # a new memory; admin.key is shown once
    memory = MemoryClient("http://127.0.0.1:8000", admin.memory_id, admin.key)
    memory.add([{"speaker": "Ann", "text": "We adopted a cat", "timestamp": "2023-05-01T10:00:00+01:00"}])
    memory.ask("What did we talk about on May 1st?")["rows"]
    memory.when("When did we adopt the cat?")["answer"]["answer"]

A refused request raises :class:`ServiceError` with the service's status, message and field.
"""

from __future__ import annotations

import json

import httpx


class ServiceError(Exception):
    def __init__(self, status: int, message: str, field: str | None = None):
        super().__init__(f"{status}: {message}" + (f" ({field})" if field else ""))
        self.status, self.message, self.field = status, message, field


def _result(response: httpx.Response):
    if response.is_success:
        return response.json()
    try:
        body = response.json()
    except ValueError:
        body = {"error": response.text}
    raise ServiceError(response.status_code, body.get("error", response.reason_phrase), body.get("field"))


class MemoryClient:
    """One memory of a service, reached with its key."""

    def __init__(self, url: str, memory_id: str, key: str, timeout: float = 60.0):
        self.url, self.memory_id, self.key = url.rstrip("/"), memory_id, key
        self.path = f"/memories/{memory_id}"
        self.http = httpx.Client(base_url=self.url, timeout=timeout, headers={"Authorization": f"Bearer {key}"})

    @classmethod
    def create(cls, url: str, name: str = "", tz: str | None = None, admin_key: str | None = None) -> MemoryClient:
        """Make a memory on the service at ``url``; a client of it (its key in :attr:`key`)."""
        headers = {"X-Admin-Key": admin_key} if admin_key else {}
        made = _result(httpx.post(f"{url.rstrip('/')}/memories", json={"name": name, "tz": tz}, headers=headers))
        return cls(url, made["memory_id"], made["api_key"])

    def add(self, turns: list[dict]) -> list[int]:
        """Append turns ({"speaker", "text", "timestamp"?, "session"?}) in one transaction; their ids."""
        return _result(self.http.post(f"{self.path}/turns", json={"turns": turns}))["ids"]

    def ask(self, question: str, history: list[str] | None = None, now: str | None = None) -> dict:
        body = {"question": question, "history": history or [], "now": now}
        return _result(self.http.post(f"{self.path}/ask", json=body))

    def when(self, question: str, now: str | None = None) -> dict:
        return _result(self.http.post(f"{self.path}/when", json={"question": question, "now": now}))

    def trends(self, question: str, period: str = "auto", topic: str | None = None) -> dict:
        body = {"question": question, "period": period, "topic": topic}
        return _result(self.http.post(f"{self.path}/trends", json=body))

    def info(self) -> dict:
        return _result(self.http.get(self.path))

    def export(self) -> list[dict]:
        response = self.http.get(f"{self.path}/export")
        if not response.is_success:
            _result(response)
        return [json.loads(line) for line in response.text.splitlines() if line.strip()]

    def close(self) -> None:
        self.http.close()
