"""Document embeddings cached on disk, keyed by the encoder's identity and the texts."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from models.dual_encoder import DualEncoder


def cached_document_embeddings(encoder: DualEncoder, texts: list[str], cache_dir: str | Path | None,
                               batch_size: int = 64, show_progress_bar: bool = True) -> np.ndarray:
    """Encode ``texts`` as documents, reusing ``cache_dir/<key>.npy`` when present."""
    if cache_dir is None:
        return encoder.encode_documents(texts, batch_size, show_progress_bar)
    h = hashlib.sha1(f"{encoder.identity}|{encoder.autocast_dtype}".encode())
    for t in texts:
        h.update(t.encode("utf-8"))
        h.update(b"\0")
    path = Path(cache_dir) / f"docs-{h.hexdigest()[:20]}.npy"
    if path.is_file():
        return np.load(path)
    emb = encoder.encode_documents(texts, batch_size, show_progress_bar)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, emb)
    return emb
