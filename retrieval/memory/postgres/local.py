"""A PostgreSQL to try the engine on, with nothing installed but a wheel: ``pgserver`` (PostgreSQL 16 with pgvector)
started in a folder, on a Unix socket only, and stopped afterwards. For evaluations, benchmarks and tests; a real
deployment names its own server by URL."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

LOCAL = "pgserver"  # the --store value that asks for a temporary local server


@contextlib.contextmanager
def database_url(store: str | None, folder: str | Path | None = None) -> Iterator[tuple[str | None, object]]:
    """(the URL, the pgserver handle or None): ``store`` itself (a URL, or None for the embedded engine), or with
    ``store`` = :data:`LOCAL` a server started in ``folder`` (default: a temporary one), stopped on exit."""
    if store != LOCAL:
        yield store, None
        return
    try:
        import pgserver
    except ImportError as e:
        raise ImportError("--store pgserver starts a local PostgreSQL from the pgserver wheel: pip install "
                          "pgserver (it is in the project's dev extra)") from e
    with contextlib.ExitStack() as stack:
        if folder is None:
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="ctbls-pg-"))
        Path(folder).parent.mkdir(parents=True, exist_ok=True)
        server = pgserver.get_server(Path(folder), cleanup_mode="stop")
        stack.callback(server.cleanup)
        yield server.get_uri(), server


def new_database(url: str, name: str) -> str:
    """Create database ``name`` on ``url``'s server (dropped first when it is there); its URL."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return urlsplit(url)._replace(path=f"/{name}").geturl()
