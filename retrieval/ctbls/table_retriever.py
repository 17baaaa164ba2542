"""The Dense Table Retriever: a dual encoder over table text and a FAISS index of tables."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from models.dual_encoder import DualEncoder
from models.packaged import is_packaged
from retrieval.ctbls.settings_file import load_settings, save_settings
from retrieval.ctbls.table_text import table_text
from retrieval.data.types import Table
from retrieval.search.cached_index import cached_index
from retrieval.search.dense_index import DenseIndex
from retrieval.search.index_record import (
    IndexMismatchError,
    file_record,
    fingerprint,
    make_record,
    mismatch,
)

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
        self.subset: list[str] | None = None  # the tables searched, when a loaded index holds more

    @classmethod
    def from_pretrained(cls, path: str | Path) -> DenseTableRetriever:
        """Load a folder written by :meth:`save_pretrained` or train/dtr.py: the encoder and its table-text settings.
        ``packaged:minilm`` is the packaged MiniLM untuned, with the settings configs/dtr.yaml trains with: a
        stand-in before a DTR is trained."""
        if is_packaged(path):
            return cls(DualEncoder.from_backbone(str(path), max_query_length=64, max_document_length=128),
                       TableTextSettings("header", 64))
        settings = TableTextSettings.load(path)
        return cls(DualEncoder.from_pretrained(path), settings)

    def save_pretrained(self, path: str | Path) -> None:
        self.encoder.save_pretrained(path)
        self.settings.save(path)

    def index_tables(self, tables: Sequence[Table], factory: str = "Flat", batch_size: int = 64,
                     show_progress_bar: bool = False, cache_dir: str | Path | None = None,
                     tables_file: str | Path | None = None) -> DenseIndex:
        """Encode tables (their embeddings cached in ``cache_dir``, when given) and (re)build the index over them.

        The index records what it was built from (``tables_file`` names their file), so that
        :meth:`save_index` and :meth:`load_index` can keep it for later runs.
        """
        texts = [self.settings.text(t) for t in tables]
        self.index = cached_index(self.encoder, texts, [t.uid for t in tables], cache_dir, batch_size=batch_size,
                                  show_progress_bar=show_progress_bar, factory=factory)
        prints = {t.uid: fingerprint([t.uid], [text]) for t, text in zip(tables, texts)}
        self.index.built_from = make_record("tables", self.encoder, asdict(self.settings), prints,
                                            {"tables": file_record(tables_file)})
        self.subset = None
        return self.index

    def fingerprints(self, tables: Sequence[Table]) -> dict[str, str]:
        """Each table's fingerprint (uid and text), as a saved index records them."""
        return {t.uid: fingerprint([t.uid], [self.settings.text(t)]) for t in tables}

    def save_index(self, path: str | Path) -> None:
        """Save the index with its ids, the encoder's identity and what it was built from (``path/index.*``)."""
        if self.index is None:
            raise RuntimeError("no table index: call index_tables() first")
        self.index.save(path)

    def load_index(self, path: str | Path, tables: Sequence[Table]) -> None:
        """Load an index saved by :meth:`save_index` to search ``tables`` (all of them, or some of its own).

        An index built with another encoder, precision (``autocast_dtype``) or table-text settings, or from
        tables that read differently or lack some of ``tables``, is refused: an IndexMismatchError, one line
        naming the difference. When ``tables`` are fewer than the index holds, searches are kept to them.
        """
        index = DenseIndex.load(path)
        reason = mismatch(index.built_from, "tables", self.encoder, asdict(self.settings), self.fingerprints(tables),
                          complete=True)
        if reason:
            raise IndexMismatchError(f"{path}: the saved table index does not fit: {reason}")
        self.index = index
        self.subset = [t.uid for t in tables] if len(tables) < len(index) else None

    def retrieve(self, queries: list[str], k: int = 10, subset=None) -> list[list[tuple[str, float]]]:
        """Top-k (table uid, score) per query (among ``subset``, or the tables the index was loaded for)."""
        if self.index is None:
            raise RuntimeError("no table index: call index_tables() or load_index() first")
        return self.index.search(self.encoder.encode_queries(queries), k,
                                 subset=subset if subset is not None else self.subset)
