"""The memory as an HTTP service (FastAPI): make a memory, append turns, ask, ask when, trends, export.

    POST /memories                         {"name"?, "tz"?}                     -> {"memory_id", "api_key"}
    POST /memories/{id}/turns              {"turns": [{"speaker", "text", "timestamp"?, "session"?}, ...]}
                                            -> {"ids": [...], "skipped": duplicates, "count"}
    POST /memories/{id}/ask                {"question", "history"?, "now"?}    -> as ``ask --json``: plan, rows, answer
    POST /memories/{id}/when               {"question", "now"?}                -> the when-answer and its evidence
    POST /memories/{id}/trends             {"question", "period"?, "topic"?}   -> counts per period, samples
    GET  /memories/{id}/export                                                  -> the turns, JSON Lines
    GET  /memories/{id}                                                         -> name, turns, span, zone
    GET  /docs                                                                  -> OpenAPI documentation

Every ``/memories/{id}`` route needs that memory's key, as ``Authorization: Bearer KEY`` or ``X-API-Key: KEY``
(401 without one, 403 with another memory's or a wrong one: the two are not told apart). Making a memory needs the
service's admin key when it was started with one. Bad input is a 4xx with a JSON body ``{"error", "field"?}``
naming the field: a body over :data:`MAX_BODY_BYTES` (413), a field too long or of the wrong type (422), a
timestamp that does not read, goes back in time or lies past the server's clock by more than ten minutes (422).
Turns are appended in one transaction: all of a request's turns or none; a turn already there (same time, speaker
and text) is skipped and counted, so a retried request adds nothing twice. A memory made without a zone takes the
one its first turns are written in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Depends, FastAPI, Header, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, Field

from retrieval.data.jsonio import INPUT_ERRORS
from retrieval.service.registry import AccessDenied, MemoryRegistry, StoreUnavailable
from retrieval.trends.analysis import TrendConfig, analyse_trend
from retrieval.trends.corpus import Corpus
from retrieval.trends.periods import PERIODS

MAX_BODY_BYTES = 1 << 20  # 1 MiB a request
MAX_TURNS = 1000  # turns a request
MAX_TEXT = 20_000  # characters a turn
MAX_QUESTION = 2_000  # characters a question


@dataclass(frozen=True)
class Limits:
    """What the service accepts beyond the fields' own limits: the size of a request's body."""

    body_bytes: int = MAX_BODY_BYTES


class NewMemory(BaseModel):
    name: str = Field("", max_length=200)
    tz: str | None = Field(None, max_length=64, description="the calendar's zone (IANA name); default the service's")


class TurnIn(BaseModel):
    speaker: str = Field(min_length=1, max_length=200, pattern=r"\S")
    text: str = Field(min_length=1, max_length=MAX_TEXT, pattern=r"\S", description="a turn with something said")
    timestamp: str | None = Field(None, max_length=64, description="ISO 8601; default: when it arrives")
    session: int | None = Field(None, ge=0)
    role: str = Field("utterance", pattern="^(utterance|question|answer)$",
                      description="a question put to the memory or an LLM's answer is kept, but not evidence")


class Turns(BaseModel):
    turns: list[TurnIn] = Field(min_length=1, max_length=MAX_TURNS)


class Question(BaseModel):
    question: str = Field(min_length=1, max_length=MAX_QUESTION)
    history: list[Annotated[str, Field(max_length=MAX_QUESTION)]] = Field([], max_length=20,
                                                                          description="earlier turns, oldest first")
    now: str | None = Field(None, max_length=64, description="the reference time, ISO 8601 (default: the last turn)")
    include_asked: bool = Field(False, description="answer from the turns recorded as questions and answers too")


class TrendQuestion(BaseModel):
    question: str = Field(min_length=1, max_length=MAX_QUESTION)
    period: str = Field("auto", pattern="^(" + "|".join(("auto", *PERIODS)) + ")$")
    topic: str | None = Field(None, max_length=200)


class Problem(Exception):
    """A request the service refuses: its status, message and the field at fault."""

    def __init__(self, status: int, message: str, field: str | None = None):
        super().__init__(message)
        self.status, self.message, self.field = status, message, field


def _error(status: int, message: str, field: str | None = None) -> JSONResponse:
    return JSONResponse({"error": message, **({"field": field} if field else {})}, status_code=status)


def api_key(authorization: Annotated[str | None, Header()] = None,
            x_api_key: Annotated[str | None, Header()] = None) -> str:
    """The request's key: ``Authorization: Bearer KEY`` or ``X-API-Key: KEY``."""
    if x_api_key:
        return x_api_key
    if authorization and authorization.lower().startswith("bearer "):
        return authorization[7:].strip()
    raise Problem(401, "an API key is needed: 'Authorization: Bearer KEY' or 'X-API-Key: KEY'", "authorization")


def memory_summary(memory_id: str, name: str, memory) -> dict:
    table = memory.table
    last = table.last_row()
    return {"memory_id": memory_id, "name": name, "turns": len(table), "zone": str(table.tz),
            "sessions": 0 if last is None else int(last["session"]),
            "first": table.frame["timestamp"].iloc[0].isoformat() if len(table) else None,
            "last": None if last is None else last["timestamp"].isoformat()}


def create_app(registry: MemoryRegistry, admin_key: str | None = None, limits: Limits = Limits()) -> FastAPI:
    """The service over ``registry``'s memories (see the module docstring)."""
    app = FastAPI(title="cTBLS temporal memory", version="1",
                  description="A conversation memory that answers what was said, and when. Each memory has its own "
                              "API key.")
    add_error_handling(app, limits)
    app.include_router(memory_routes(registry, admin_key))
    return app


def add_error_handling(app: FastAPI, limits: Limits) -> None:
    """The body limit, and every refusal as ``{"error", "field"?}`` with its status."""

    @app.middleware("http")
    async def body_limit(request: Request, call_next):
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > limits.body_bytes):
            return _error(413, f"the body is over {limits.body_bytes} bytes", "body")
        if length is None and request.method in ("POST", "PUT", "PATCH"):
            body = await request.body()  # chunked: read it, then measure it
            if len(body) > limits.body_bytes:
                return _error(413, f"the body is over {limits.body_bytes} bytes", "body")
        return await call_next(request)

    @app.exception_handler(Problem)
    async def problem(_: Request, e: Problem):
        return _error(e.status, e.message, e.field)

    @app.exception_handler(StoreUnavailable)
    async def unavailable(_: Request, e: StoreUnavailable):
        response = _error(503, str(e), "store")
        response.headers["Retry-After"] = "1"
        return response

    @app.exception_handler(AccessDenied)
    async def denied(_: Request, e: AccessDenied):
        return _error(403, str(e), "authorization")

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, e: RequestValidationError):
        first = e.errors()[0] if e.errors() else {}
        if first.get("type") == "json_invalid":  # its loc is a character's position, not a field
            at = first.get("loc", ("body", "?"))[-1]
            return _error(422, f"body: not valid JSON (at character {at}: {first.get('ctx', {}).get('error', '')})",
                          "body")
        where = ".".join(str(p) for p in first.get("loc", ()) if p not in ("body", "header", "path"))
        return _error(422, f"{where or 'body'}: {first.get('msg', 'invalid')}", where or "body")


def memory_routes(registry: MemoryRegistry, admin_key: str | None) -> APIRouter:
    """The routes of the module docstring, each memory's behind its key."""
    router = APIRouter()

    def refused(e: Exception, field: str) -> Problem:
        return Problem(422, str(e), field)

    @router.post("/memories", status_code=201, summary="Make a memory; its API key is shown once")
    def create(body: NewMemory, x_admin_key: Annotated[str | None, Header()] = None) -> dict:
        if admin_key is not None and x_admin_key != admin_key:
            raise Problem(403, "making a memory needs the service's admin key (X-Admin-Key)", "x-admin-key")
        try:
            memory_id, key = registry.create(body.name, body.tz)
        except (*INPUT_ERRORS, ValueError) as e:
            raise refused(e, "tz") from e
        return {"memory_id": memory_id, "api_key": key}

    @router.get("/memories/{memory_id}", summary="The memory: name, turns, sessions, span, zone")
    def describe(memory_id: str, key: Annotated[str, Depends(api_key)]) -> dict:
        with registry.use(memory_id, key) as memory:
            return memory_summary(memory_id, registry.name(memory_id), memory)

    @router.post("/memories/{memory_id}/turns", summary="Append turns in one transaction (all or none)")
    def append(memory_id: str, body: Turns, key: Annotated[str, Depends(api_key)]) -> dict:
        with registry.use(memory_id, key) as memory:
            try:
                appended = memory.append([t.model_dump() for t in body.turns])
            except (*INPUT_ERRORS, ValueError) as e:
                raise refused(e, "turns") from e
            return {"ids": appended.ids, "skipped": appended.skipped, "count": len(memory.table)}

    @router.post("/memories/{memory_id}/ask", summary="Ask: the plan, its rows and, for a when-question, the answer")
    def ask(memory_id: str, body: Question, key: Annotated[str, Depends(api_key)]) -> dict:
        with registry.use(memory_id, key) as memory:
            try:
                return memory.ask(body.question, history=body.history or None, now=body.now,
                                  include_asked=body.include_asked).to_dict()
            except (*INPUT_ERRORS, ValueError) as e:
                raise refused(e, "question") from e

    @router.post("/memories/{memory_id}/when", summary="When did something happen: the date, its evidence, how")
    def when(memory_id: str, body: Question, key: Annotated[str, Depends(api_key)]) -> dict:
        with registry.use(memory_id, key) as memory:
            try:
                result = memory.ask(body.question, history=body.history or None, now=body.now,
                                    include_asked=body.include_asked)
            except (*INPUT_ERRORS, ValueError) as e:
                raise refused(e, "question") from e
            if result.answer is None:
                raise Problem(422, "not a when-question ('when did ...?', 'how long ago ...?'): use /ask",
                              "question")
            return {"question": result.question, "answer": result.answer.to_dict()}

    @router.post("/memories/{memory_id}/trends", summary="How much a topic is talked about, period by period")
    def trends(memory_id: str, body: TrendQuestion, key: Annotated[str, Depends(api_key)]) -> dict:
        with registry.use(memory_id, key) as memory:
            try:
                result = analyse_trend(Corpus(memory.table, path=memory_id), body.question,
                                       TrendConfig(period=body.period, topic=body.topic))
            except (*INPUT_ERRORS, ValueError) as e:
                raise refused(e, "question") from e
            return result.to_dict()

    @router.get("/memories/{memory_id}/export", summary="Every turn, as JSON Lines")
    def export(memory_id: str, key: Annotated[str, Depends(api_key)]) -> StreamingResponse:
        with registry.use(memory_id, key) as memory:
            frame = memory.table.frame
            lines = [json.dumps({"response_idx": int(i), "session": int(r["session"]), "speaker": r["speaker"],
                                 "timestamp": r["timestamp"].isoformat(), "text": r["text"]}) + "\n"
                     for i, r in frame.iterrows()]
        return StreamingResponse(iter(lines), media_type="application/x-ndjson")

    return router
