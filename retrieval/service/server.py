"""Serve memories: the HTTP API (``serve``) or one memory as an MCP server (``mcp``).

    python -m retrieval.service.server serve --root runs/service [--port 8000] [--page]
    python -m retrieval.service.server serve --store postgresql://me@dbhost/memories   # memories in PostgreSQL
    CTBLS_ADMIN_KEY=... ctbls serve --root runs/service               # making a memory then needs X-Admin-Key
    python -m retrieval.service.server mcp --memory runs/my_memory [--transport streamable-http --port 8765]

``serve`` holds every memory under ``--root`` (``retrieval.service.registry``) behind the API of
``retrieval.service.api`` (documentation at ``/docs``), on 127.0.0.1 by default. ``--page`` also mounts the web page
(``retrieval.app``) at ``/app``. The admin key is read from ``$CTBLS_ADMIN_KEY`` (never from the command line, where
other users see it); without it anyone who reaches the port can make a memory, so keep such a service on loopback.
On SIGTERM or Ctrl-C every memory is closed (snapshots written); a SIGKILL loses nothing acknowledged (each append
is committed before its reply) and the next start recovers the folders.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass

from models.dual_encoder import DualEncoder
from retrieval.config import option, parse_command
from retrieval.data.jsonio import INPUT_ERRORS
from retrieval.memory.relevance.choices import AUTO, RELEVANCE_HELP

ADMIN_KEY_VARIABLE = "CTBLS_ADMIN_KEY"


@dataclass(kw_only=True)
class ServeArguments:
    """Serve the memories under a root folder over HTTP."""

    root: str = option("runs/service", "the folder holding the memories (made when missing; unused with --store)")
    store: str | None = option(None, "a PostgreSQL URL (postgresql://user@host/db; the password from PGPASSWORD or "
                               "~/.pgpass): the memories and their keys are kept in that database")
    encoder: str | None = option(None, "the memories' dual encoder (default: the packaged MiniLM)")
    relevance: str = option(AUTO, "every memory: " + RELEVANCE_HELP)
    tz: str | None = option(None, "the calendar zone of new memories that name none (default UTC)")
    host: str = option("127.0.0.1", "address to serve on (127.0.0.1: this machine only)")
    port: int = option(8000, "port")
    page: bool = option(False, "also serve the web page at /app (loads the tables and logs: slower to start)")


@dataclass(kw_only=True)
class McpArguments:
    """Serve one memory folder as an MCP server."""

    memory: str = option(help="the memory's folder, or its name in --store (made when missing)")
    store: str | None = option(None, "a PostgreSQL URL: the memory is kept in that database")
    encoder: str | None = option(None, "dual encoder of a new memory (default: the packaged MiniLM)")
    relevance: str = option(AUTO, RELEVANCE_HELP)
    tz: str | None = option(None, "calendar zone of a new memory (default UTC)")
    transport: str = option("stdio", "how the agent reaches it", choices=("stdio", "streamable-http"))
    host: str = option("127.0.0.1", "with streamable-http: the address")
    port: int = option(8765, "with streamable-http: the port (the endpoint is /mcp)")


def service_app(args: ServeArguments, encoder: DualEncoder | None = None):
    """The FastAPI app of ``serve``, its registry closed when the app shuts down."""
    from fastapi import FastAPI

    from models.dual_encoder import load_encoder
    from retrieval.service.api import create_app
    from retrieval.service.registry import MemoryRegistry

    registry = MemoryRegistry(args.root, encoder or load_encoder(args.encoder), args.tz, args.store,
                              relevance=args.relevance)
    app = create_app(registry, os.environ.get(ADMIN_KEY_VARIABLE) or None)

    @asynccontextmanager
    async def lifespan(_: FastAPI):
        yield
        registry.close()

    app.router.lifespan_context = lifespan
    if args.page:
        from retrieval.app.page import AppArguments, build_page, load_services, mount_page

        mount_page(app, build_page(load_services(AppArguments(live="none"))), "/app")
    return app


def main(argv: Sequence[str] | None = None) -> int:
    commands = {"serve": (ServeArguments, ServeArguments.__doc__), "mcp": (McpArguments, McpArguments.__doc__)}
    name, args = parse_command(commands, argv, prog="python -m retrieval.service.server",
                               description=__doc__.split("\n")[0])
    try:
        if name == "serve":
            import uvicorn

            uvicorn.run(service_app(args), host=args.host, port=args.port, log_level="warning")
        else:
            from retrieval.memory.relevance.rerank import use_relevance
            from retrieval.memory.temporal_memory import TemporalMemory
            from retrieval.service.mcp_tools import memory_server

            memory = use_relevance(TemporalMemory.open(args.memory, create=True, encoder_spec=args.encoder,
                                                       tz=args.tz, store=args.store), args.relevance)
            try:
                server = memory_server(memory)
                if args.transport == "stdio":
                    server.run("stdio")
                else:
                    server.run("streamable-http", host=args.host, port=args.port)
            finally:
                memory.close()
    except (*INPUT_ERRORS, ValueError, ConnectionError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


def cli() -> int:
    return main()


if __name__ == "__main__":
    sys.exit(main())
