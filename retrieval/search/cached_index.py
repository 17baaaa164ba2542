"""A dense index over documents whose embeddings are cached on disk: the one way texts become an index.

Tables (the DTR), cells (the state tracker) and utterances (conversation tables) all go through
:func:`cached_index`: encode the texts as documents, reusing the cache of
:mod:`retrieval.search.embedding_cache`, and build a :class:`~retrieval.search.dense_index.DenseIndex`
under their ids, stamped with the encoder's identity.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from models.encoder import Encoder
from retrieval.search.dense_index import DenseIndex
from retrieval.search.embedding_cache import cached_document_embeddings


def cached_index(encoder: Encoder, texts: Sequence[str], ids: Sequence, cache_dir: str | Path | None, *,
                 chunks: Sequence[int] | None = None, batch_size: int = 64, show_progress_bar: bool = False,
                 factory: str = "Flat") -> DenseIndex:
    """A ``factory`` index of ``texts`` encoded as documents, under ``ids`` (one per text).

    ``chunks`` (sizes adding up to ``len(texts)``) encodes and caches consecutive runs of texts apart,
    e.g. one table's cells, so a run already encoded with other company is never encoded again;
    without it the texts are one run. Empty runs are skipped.
    """
    if chunks is not None and sum(chunks) != len(texts):
        raise ValueError(f"chunks add up to {sum(chunks)} texts, not {len(texts)}")
    sizes = [n for n in chunks or [] if n] or [len(texts)]
    parts, start = [], 0
    for n in sizes:
        parts.append(cached_document_embeddings(encoder, list(texts[start:start + n]), cache_dir, batch_size,
                                                show_progress_bar))
        start += n
    emb = parts[0] if len(parts) == 1 else np.concatenate(parts)
    return DenseIndex.build(emb, ids, factory=factory, encoder_id=encoder.identity)
