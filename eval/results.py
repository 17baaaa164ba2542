"""Headline results: what an evaluation writes under ``results/`` with ``--results FILE``, and where it came from.

A results file holds the evaluation's headline rows (:class:`Headline`: the figure, the baselines measured in the
same run, the published anchor beside it) and its provenance: the command line, the resolved settings, the commit
(and whether the tree had changes), the date, and every data file read with its size and SHA-256. README's
"Results at a glance" is rendered from these files by ``python -m eval.results_table``; a test fails when the two
differ.
"""

from __future__ import annotations

import dataclasses
import hashlib
import platform
import shlex
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from retrieval import atomic
from retrieval.data.jsonio import DataError
from retrieval.data.paths import DATA_DIR

REPO = Path(__file__).resolve().parents[1]
FORMAT = 1  # the layout of a results file; bumped when a field changes meaning


@dataclass(frozen=True)
class Headline:
    """One row of the results table: ``metric`` of ``ours`` on ``task``, beside ``baselines`` of the same run.

    ``scale``: 100 for a percentage, 1 for a fraction; ``digits`` after the point. ``anchor``: the published figure
    it is read against, in words, saying when it is a different metric or a different test set."""

    task: str
    metric: str
    ours: float
    baselines: dict[str, float] = field(default_factory=dict)
    anchor: str = ""
    scale: float = 1.0
    digits: int = 3

    def text(self, value: float) -> str:
        return f"{value * self.scale:.{self.digits}f}"


def file_digest(path: Path) -> dict:
    """A data file's size and SHA-256, or a folder's (its files' paths, sizes and digests, hashed in order)."""
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file())
        digest = hashlib.sha256()
        for p in files:
            d = file_digest(p)
            digest.update(f"{p.relative_to(path).as_posix()}\0{d['bytes']}\0{d['sha256']}\n".encode())
        return {"files": len(files), "bytes": sum(p.stat().st_size for p in files), "sha256": digest.hexdigest()}
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return {"bytes": path.stat().st_size, "sha256": digest.hexdigest()}


def shown_path(path: str | Path) -> str:
    """A path as another checkout would name it: under the data root ``$DATA/...``, under the repository relative
    to it, else as given."""
    resolved = Path(path).resolve()
    for root, prefix in ((DATA_DIR.resolve(), "$DATA/"), (REPO, "")):
        if resolved.is_relative_to(root):
            return prefix + resolved.relative_to(root).as_posix()
    return str(path)


def commit() -> dict:
    """The checkout's commit and how many of its tracked files had changes (None outside a git checkout), not
    counting the results files themselves (``results/``: an earlier evaluation of the same ``make results`` run
    writes them; they are outputs, not code or settings)."""
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    head = git("rev-parse", "HEAD")
    changes = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)results")
    return {"commit": head, "changed_files": None if changes is None else len(changes.splitlines())}


def record(prog: str, argv: Sequence[str] | None, settings: object, rows: Sequence[Headline],
           data: Sequence[str | Path]) -> dict:
    """The results file's content: ``rows`` with where they came from (``prog`` and ``argv`` the command line)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    return {
        "format": FORMAT,
        "rows": [dataclasses.asdict(r) for r in rows],
        "command": f"{prog} {shlex.join(argv)}".strip(),
        "settings": {k: shown_path(v) if isinstance(v, str) and Path(v).is_absolute() else v
                     for k, v in dataclasses.asdict(settings).items()},
        **commit(),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "data": [{"path": shown_path(p), **file_digest(Path(p))} for p in data],
    }


def write_results(path: str | None, prog: str, argv: Sequence[str] | None, settings: object,
                  headline: Callable[[], Sequence[Headline]], data: Sequence[str | Path]) -> None:
    """Write the results file ``path`` whole, its rows from ``headline`` (called only then); nothing when ``path`` is
    None. A run with no headline row (e.g. eval.retrieval without a DTR) is a DataError: the table would lose it."""
    if not path:
        return
    rows = headline()
    if not rows:
        raise DataError(f"{path}: this run has no headline row for README's table (see the command's headline())")
    atomic.write_json(path, record(prog, argv, settings, rows, data), indent=2)
    print(f"wrote {path} ({len(rows)} headline rows)")


def read_rows(results: dict) -> list[Headline]:
    """A results file's rows; a KeyError naming what is missing."""
    return [Headline(**r) for r in results["rows"]]
