"""What retrieval asks of a text encoder: queries and documents embedded into one space, under a name that
fingerprints the weights (the interface of sentence-transformers' and MTEB's encoders, with the query and document
sides apart as in BEIR).

:class:`~models.dual_encoder.DualEncoder` is the one this repository trains and loads; any object with these members
(an ONNX export, a test's bag of words) can stand in where a signature asks for an :class:`Encoder`.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np


class Encoder(Protocol):
    """Embeds texts as (N, dim) float32 rows; a query and a document side, which may be one model."""

    @property
    def identity(self) -> str:
        """Names the encoder and fingerprints its weights: stored with every index it fills, checked on search."""
        ...

    @property
    def dim(self) -> int:
        """The embeddings' width."""
        ...

    def encode_queries(self, texts: list[str], batch_size: int = 64, show_progress_bar: bool = False) -> np.ndarray:
        """(N,) texts -> (N, dim) float32, the query side."""
        ...

    def encode_documents(self, texts: list[str], batch_size: int = 64,
                         show_progress_bar: bool = False) -> np.ndarray:
        """(N,) texts -> (N, dim) float32, the document side."""
        ...
