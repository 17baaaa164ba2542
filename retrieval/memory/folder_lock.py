"""One writer per memory: an exclusive lock on the folder for as long as the memory is open.

The files beside the database (vectors, BM25 segments, the snapshot) are appended to without a transaction, so two
writers would interleave them. The kernel drops the lock when the process dies, so a crash never leaves a memory
locked.
"""

from __future__ import annotations

import fcntl
from pathlib import Path
from typing import TextIO

from retrieval.data.jsonio import DataError


class MemoryInUseError(DataError):
    """The memory is open for writing elsewhere (another process, or another object in this one)."""


def take_lock(path: Path) -> TextIO:
    """An exclusive lock on ``path/lock`` for as long as the returned file stays open (the kernel drops it when the
    process dies): one writer per memory, since the files beside the database are appended to without it."""
    f = (path / "lock").open("a+")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.close()
        raise MemoryInUseError(f"{path}: this memory is open in another process or object; close it first "
                               "(one writer at a time)") from None
    return f
