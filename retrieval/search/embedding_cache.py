"""Document embeddings cached on disk, keyed by the encoder's identity and the texts.

Entries are written whole (:func:`retrieval.atomic.save_with`), so a killed run leaves no entry rather
than a truncated one. An entry that still fails to load, or holds the wrong shape (a file damaged or
copied from elsewhere), is discarded with a warning and encoded again: a cache can only cost time, never
end a run or change its numbers.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

import numpy as np

from models.dual_encoder import DualEncoder
from models.encoder import Encoder
from retrieval.atomic import save_with

logger = logging.getLogger(__name__)


def cache_path(encoder: Encoder, texts: list[str], cache_dir: str | Path) -> Path:
    """``cache_dir/docs-<key>.npy``, the key a hash of the encoder's identity, its autocast type (a
    :class:`~models.dual_encoder.DualEncoder`'s; another encoder's identity says it all) and the texts."""
    autocast = encoder.autocast_dtype if isinstance(encoder, DualEncoder) else None
    h = hashlib.sha1(f"{encoder.identity}|{autocast}".encode())
    for t in texts:
        h.update(t.encode("utf-8"))
        h.update(b"\0")
    return Path(cache_dir) / f"docs-{h.hexdigest()[:20]}.npy"


def read_entry(path: Path, shape: tuple[int, int]) -> np.ndarray | None:
    """The embeddings stored at ``path``; None (with a warning) when the file does not load as an array of
    floats of ``shape``."""
    try:
        emb = np.load(path)
    except (OSError, ValueError, EOFError) as e:
        logger.warning("%s: unreadable embedding cache entry (%s); discarding it and encoding again", path, e)
        return None
    if emb.shape != shape or emb.dtype.kind != "f":
        logger.warning("%s: embedding cache entry holds %s %s, not %s floats; discarding it and encoding again",
                       path, emb.dtype, emb.shape, shape)
        return None
    return emb


def cached_document_embeddings(encoder: Encoder, texts: list[str], cache_dir: str | Path | None,
                               batch_size: int = 64, show_progress_bar: bool = True) -> np.ndarray:
    """Encode ``texts`` as documents, reusing ``cache_dir/<key>.npy`` when present and sound; no cache when
    ``cache_dir`` is None or '' (the commands' ``--cache-dir ''``, which must not mean the working directory)."""
    if cache_dir is None or str(cache_dir) == "":
        return encoder.encode_documents(texts, batch_size, show_progress_bar)
    path = cache_path(encoder, texts, cache_dir)
    if path.is_file() and (emb := read_entry(path, (len(texts), encoder.dim))) is not None:
        return emb
    emb = encoder.encode_documents(texts, batch_size, show_progress_bar)
    save_with(lambda partial: np.save(partial, emb), path)
    return emb
