"""Where the data lives by default (``$CTBLS_DATA_DIR`` when set, else ``../shared/data`` beside the repository),
and where caches go.

Every command takes its data paths as arguments; this is only their default. Each dataset's folder is a
sub-folder of :data:`DATA_DIR` (``ottqa/``, ``zyphra_temporal/``, ``locomo/``, ``sqa/``). A command's
``--data-dir`` is always this root (:func:`data_dir_option`); a flag for one dataset's folder or file names the
dataset (``--zyphra-dir``, ``--locomo``).

Caches (document embeddings, LLM generations, the converted SmolLM2) are kept under one folder,
:func:`default_cache_dir`: ``$CTBLS_CACHE_DIR`` when set, else ``runs/cache`` under the working
directory. Every command's ``--cache-dir`` / ``--cache`` default comes from it, so one variable moves
them all (a cache is only ever a speed-up: deleting it changes no result).
"""

from __future__ import annotations

import os
import typing
from pathlib import Path

from retrieval.config import option

CACHE_DIR_VARIABLE = "CTBLS_CACHE_DIR"
DEFAULT_CACHE_DIR = "runs/cache"  # relative: under the working directory, where the figures' caches were made

DATA_DIR_VARIABLE = "CTBLS_DATA_DIR"
DATA_DIR = Path(os.environ.get(DATA_DIR_VARIABLE) or Path(__file__).resolve().parents[3] / "shared" / "data")
OTTQA_DIR = DATA_DIR / "ottqa"
ZYPHRA_DIR = DATA_DIR / "zyphra_temporal"
LOCOMO_FILE = DATA_DIR / "locomo" / "locomo_open.json"
SQA_DIR = DATA_DIR / "sqa"


def default_cache_dir(*parts: str, unset: str = DEFAULT_CACHE_DIR) -> str:
    """The cache folder ``$CTBLS_CACHE_DIR/PARTS`` (``unset/PARTS`` when the variable is unset or empty).

    ``default_cache_dir("temporal")`` is the temporal memory's embedding cache; ``unset`` lets a cache that
    should outlive the working directory (a converted model) fall back elsewhere.
    """
    return str(Path(os.environ.get(CACHE_DIR_VARIABLE) or unset, *parts))


def data_dir_option(holding: str, **metadata) -> typing.Any:
    """A command's ``--data-dir``: the data root, default :data:`DATA_DIR`; ``holding`` names the sub-folders the
    command reads (``"ottqa/ and sqa/"``). One definition, so the flag means the same in every command."""
    return option(str(DATA_DIR), f"the data root, holding {holding}; ${DATA_DIR_VARIABLE} sets the default",
                  **metadata)
