"""The Dense Table Retriever: a dual encoder over table text and a FAISS index of tables."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from models.dual_encoder import DualEncoder
from retrieval.ctbls.settings_file import load_settings, save_settings
from retrieval.ctbls.table_text import table_text
from retrieval.data.types import Table
from retrieval.search.cached_index import cached_index
from retrieval.search.dense_index import DenseIndex

SETTINGS_NAME = "table_retriever.json"


@dataclass
class TableTextSettings:
    """How tables are written as text; saved beside the encoder so inference matches training."""

    representation: str = "header"
    max_intro_words: int | None = 64

    def save(self, path: str | Path) -> None:
        save_settings(self, path, SETTINGS_NAME)

    @classmethod
    def load(cls, path: str | Path) -> TableTextSettings:
        """Settings saved in folder ``path``; a clear error when it holds none (see retrieval.ctbls.settings_file)."""
        return load_settings(cls, path, SETTINGS_NAME, "Dense Table Retriever",
                             "train/dtr.py or DenseTableRetriever.save_pretrained")

    def text(self, table: Table) -> str:
        return table_text(table, self.representation, self.max_intro_words)


class DenseTableRetriever:
    """Maps a query to the tables it is about (cTBLS's first stage)."""

    def __init__(self, encoder: DualEncoder, settings: TableTextSettings | None = None):
        self.encoder = encoder
        self.settings = settings or TableTextSettings()
        self.index: DenseIndex | None = None

    @classmethod
    def from_pretrained(cls, path: str | Path) -> DenseTableRetriever:
        """Load a folder written by :meth:`save_pretrained` or train/dtr.py: the encoder and its table-text settings."""
        settings = TableTextSettings.load(path)
        return cls(DualEncoder.from_pretrained(path), settings)

    def save_pretrained(self, path: str | Path) -> None:
        self.encoder.save_pretrained(path)
        self.settings.save(path)

    def index_tables(self, tables: Sequence[Table], factory: str = "Flat", batch_size: int = 64,
                     show_progress_bar: bool = False, cache_dir: str | Path | None = None) -> DenseIndex:
        """Encode tables (their embeddings cached in ``cache_dir``, when given) and (re)build the index over them."""
        self.index = cached_index(self.encoder, [self.settings.text(t) for t in tables], [t.uid for t in tables],
                                  cache_dir, batch_size=batch_size, show_progress_bar=show_progress_bar,
                                  factory=factory)
        return self.index

    def load_index(self, path: str | Path) -> None:
        self.index = DenseIndex.load(path, encoder_id=self.encoder.identity)

    def retrieve(self, queries: list[str], k: int = 10, subset=None) -> list[list[tuple[str, float]]]:
        """Top-k (table uid, score) per query."""
        if self.index is None:
            raise RuntimeError("no table index: call index_tables() or load_index() first")
        return self.index.search(self.encoder.encode_queries(queries), k, subset=subset)
