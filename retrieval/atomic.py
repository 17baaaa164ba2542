"""Files and folders that appear whole or not at all: the one way the project writes its outputs.

A run killed while writing (Ctrl-C, a job's time limit, a full disk) must never leave a file that later
runs read as complete: a truncated embedding cache made every later run crash until it was deleted by
hand. So every file is written to a temporary name in its own folder (the same file system, so the
rename cannot turn into a copy) and renamed over its place with :func:`os.replace`, which is atomic:
readers see the old file or the new one, never a part of either.

- :func:`write_text`, :func:`write_bytes`, :func:`write_json`: a file from its contents.
- :func:`save_with`: a file some library writes itself (``np.save``, ``fig.savefig``, ``faiss.write_index``):
  it is handed the temporary path, which keeps the final suffix, since those libraries choose the format
  by it (and ``np.save`` adds ``.npy`` to a path without one).
- :func:`replacing_folder`: a folder of outputs that belong together (a trend report's plot, report and
  numbers), written into a staging folder beside it and swapped in whole by :func:`rename_into_place`.

Temporary names start with a dot and hold the process id and a random part, so two runs writing the same
cache entry do not write into each other's file, and a name left by a killed run is never read.
Nothing is fsync'ed: the guarantee is against a killed process, not against a power cut.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


def partial_path(path: str | Path) -> Path:
    """A fresh temporary name beside ``path``, with ``path``'s suffix: ``dir/.stem.<pid>-<random>.partial.ext``."""
    path = Path(path)
    return path.with_name(f".{path.stem}.{os.getpid()}-{secrets.token_hex(4)}.partial{path.suffix}")


def save_with(save: Callable[[Path], object], path: str | Path) -> Path:
    """Call ``save(temporary path)``, then rename what it wrote to ``path`` (its folder is created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = partial_path(path)
    try:
        save(partial)
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return path


def write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path``, whole or not at all."""
    return save_with(lambda p: p.write_bytes(data), path)


def write_text(path: str | Path, text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path``, whole or not at all."""
    return write_bytes(path, text.encode(encoding))


def write_json(path: str | Path, obj: object, **dumps) -> Path:
    """Write ``obj`` as JSON (``json.dumps`` keyword arguments such as ``indent``) to ``path``, whole or not at all."""
    return write_text(path, json.dumps(obj, **dumps))


def remove(path: Path) -> None:
    """Delete a file, link or folder tree at ``path``; nothing when there is none."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


@contextmanager
def staging_folder(parent: str | Path, name: str) -> Iterator[Path]:
    """A new empty folder in ``parent`` to write ``name`` into; deleted on the way out unless moved away."""
    parent = Path(parent)
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.staging-", dir=parent))
    staging.chmod(0o755)  # mkdtemp makes it private; an output folder is meant to be shared
    try:
        yield staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def rename_into_place(staging: Path, folder: Path) -> None:
    """Rename ``staging`` to ``folder``; an older ``folder`` is moved aside first and deleted after.

    Between the two renames ``folder`` is absent (never half old, half new); a run killed there leaves the
    old one as ``.NAME.old``, which the next call clears.
    """
    old = folder.with_name(f".{folder.name}.old")
    remove(old)
    if folder.exists():
        folder.rename(old)
    staging.rename(folder)
    remove(old)


@contextmanager
def replacing_folder(folder: str | Path) -> Iterator[Path]:
    """A staging folder beside ``folder`` to write into; on a clean exit it replaces ``folder`` whole.

    An exception (or a kill) inside the block leaves ``folder`` as it was.
    """
    folder = Path(folder)
    with staging_folder(folder.parent, folder.name) as staging:
        yield staging
        rename_into_place(staging, folder)
