"""The coarse cell state tracker (cTBLS stage 2): ranks a table's cells against the dialogue so far.

A :class:`~models.dual_encoder.DualEncoder` embeds the history (query side) and the cells
(document side); the cells of every indexed table share one :class:`~retrieval.search.dense_index.DenseIndex`
under ids (table uid, row, col), and :meth:`CellStateTracker.rank` searches only the
cells of the conversation's table through the index's subset search.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict
from itertools import groupby
from pathlib import Path

from tqdm.auto import tqdm

from models.dual_encoder import DualEncoder
from models.packaged import is_packaged
from retrieval.ctbls.cell_text import (
    CellId,
    CellStats,
    CellTextSettings,
    cells_by_table,
    history_text,
    left_truncator,
    table_cells,
)
from retrieval.data.types import Conversation, Table, Turn
from retrieval.search.cached_index import cached_index
from retrieval.search.dense_index import DenseIndex
from retrieval.search.embedding_cache import cached_document_embeddings
from retrieval.search.index_record import (
    IndexMismatchError,
    file_record,
    fingerprint,
    make_record,
    mismatch,
)

History = Sequence[tuple[str, str | None]]  # earlier turns as (query, answer), oldest first


def dialogue_turns(conversation: Conversation) -> list[tuple[History, Turn]]:
    """Each turn with the (query, reference answer) pairs of the turns before it."""
    return [([(t.query, t.answer) for t in conversation.turns[:i]], turn)
            for i, turn in enumerate(conversation.turns)]


class CellStateTracker:
    """Ranks the cells of a conversation's table by relevance to its history and current query."""

    def __init__(self, encoder: DualEncoder, settings: CellTextSettings | None = None):
        self.encoder = encoder
        self.settings = settings or CellTextSettings()
        self.index: DenseIndex | None = None
        self.cells_of: dict[str, list[CellId]] = {}
        self._truncate = left_truncator(encoder.tokenizer, encoder.config.max_query_length)

    @classmethod
    def from_pretrained(cls, path: str | Path) -> CellStateTracker:
        """Load a folder written by :meth:`save_pretrained` or train/state_tracker.py: the encoder and its
        cell-text settings. ``packaged:minilm`` is the packaged MiniLM untuned, with the cell text configs/
        state_tracker.yaml trains with: a stand-in before a tracker is trained."""
        if is_packaged(path):
            return cls(DualEncoder.from_backbone(str(path), max_query_length=64, max_document_length=96),
                       CellTextSettings(row_context="row", max_row_words=24, passages=True, max_passage_words=40,
                                        history_turns=0))
        settings = CellTextSettings.load(path)
        return cls(DualEncoder.from_pretrained(path), settings)

    def save_pretrained(self, path: str | Path) -> None:
        self.encoder.save_pretrained(path)
        self.settings.save(path)

    # ---- text -----------------------------------------------------------------------------
    def history(self, previous: History, query: str) -> str:
        """The anchor text: earlier turns and the query, cut from the oldest side to the encoder's limit."""
        return history_text(previous, query, self.settings, self._truncate)

    def cells(self, tables: Iterable[Table], passages: Mapping[str, str] | None = None
              ) -> tuple[list[CellId], list[str], CellStats]:
        """Ids, texts and stats of every cell of ``tables``."""
        ids, texts, stats = [], [], CellStats()
        for table in tables:
            i, t, s = table_cells(table, passages, self.settings)
            ids += i
            texts += t
            stats.add(s)
            stats.per_table[table.uid] = s.as_dict()
        return ids, texts, stats

    # ---- index ----------------------------------------------------------------------------
    def index_tables(self, tables: Iterable[Table], passages: Mapping[str, str] | None = None,
                     factory: str = "Flat", batch_size: int = 64, cache_dir: str | Path | None = None,
                     show_progress_bar: bool = False, cache_per_table: bool = False) -> CellStats:
        """Encode every cell of ``tables`` and (re)build the cell index; returns what was unusual.

        ``cache_dir`` caches the cell embeddings of the whole set of tables, or with ``cache_per_table``
        of each table apart, so a table already encoded for another conversation, subset or run is
        never encoded again (:meth:`add_tables` adds tables one by one through the same entries).
        """
        tables = list(tables)
        ids, texts, stats = self.cells(tables, passages)
        if not ids:
            raise ValueError("no cells to index: every table given is empty")
        chunks = [len(list(run)) for _, run in groupby(ids, key=lambda i: i[0])] if cache_per_table else None
        self.index = cached_index(self.encoder, texts, ids, cache_dir, chunks=chunks, batch_size=batch_size,
                                  show_progress_bar=show_progress_bar, factory=factory)
        self.cells_of = cells_by_table(ids)
        prints = {uid: fingerprint(i, t) for uid, (i, t) in _by_table(ids, texts).items()}
        self.index.built_from = self._record(prints)
        return stats

    def add_tables(self, tables: Iterable[Table], passages: Mapping[str, str] | None = None, batch_size: int = 64,
                   cache_dir: str | Path | None = None, show_progress_bar: bool = False,
                   tables_file: str | Path | None = None, passages_file: str | Path | None = None) -> CellStats:
        """Encode the cells of the ``tables`` not indexed yet and add them to the index (made when there is none).

        Each table's embeddings are cached apart in ``cache_dir`` (the entries :meth:`index_tables` with
        ``cache_per_table`` uses), so the pipeline adds a table the first time a conversation reaches it,
        and a table index built ahead (``python -m retrieval.ctbls.build_index --tracker``) shares them.
        """
        stats = CellStats()
        new = [t for t in {t.uid: t for t in tables}.values() if t.uid not in self.cells_of]
        for table in tqdm(new, desc="encode cells", unit="table", disable=not show_progress_bar):
            ids, texts, s = table_cells(table, passages, self.settings)
            stats.add(s)
            if not ids:
                continue
            emb = cached_document_embeddings(self.encoder, texts, cache_dir, batch_size, show_progress_bar=False)
            if self.index is None:
                self.index = DenseIndex(emb.shape[1], encoder_id=self.encoder.identity)
            if self.index.built_from is None:  # a new index (or a saved one that kept no record)
                self.index.built_from = self._record({}, tables_file, passages_file)
            self.index.add(emb, ids)
            self.cells_of[table.uid] = ids
            self.index.built_from["fingerprints"][table.uid] = fingerprint(ids, texts)
        return stats

    def _record(self, fingerprints: dict[str, str], tables_file: str | Path | None = None,
                passages_file: str | Path | None = None) -> dict:
        sources = {"tables": file_record(tables_file), "passages": file_record(passages_file)}
        return make_record("cells", self.encoder, asdict(self.settings), fingerprints, sources)

    def save_index(self, path: str | Path) -> None:
        """Save the cell index with its ids, the encoder's identity and what it was built from."""
        self._need_index().save(path)

    def load_index(self, path: str | Path, tables: Iterable[Table], passages: Mapping[str, str] | None = None
                   ) -> None:
        """Load a cell index saved by :meth:`save_index` for a run over ``tables`` (and ``passages``).

        Refused (an IndexMismatchError, one line) when built with another encoder, precision or cell-text
        settings, or when a table of ``tables`` that it holds reads differently now. It may hold fewer
        tables than ``tables`` (:meth:`add_tables` adds the rest) or more (ranking stays in one table).
        """
        index = DenseIndex.load(path)
        saved = (index.built_from or {}).get("fingerprints") or {}
        prints = {t.uid: fingerprint(*self.cells([t], passages)[:2]) for t in tables if t.uid in saved}
        reason = mismatch(index.built_from, "cells", self.encoder, asdict(self.settings), prints, complete=False)
        if reason:
            raise IndexMismatchError(f"{path}: the saved cell index does not fit: {reason}")
        self.index = index
        self.cells_of = cells_by_table(index.ids)

    def _need_index(self) -> DenseIndex:
        if self.index is None:
            raise RuntimeError("no cell index: call index_tables() or load_index() first")
        return self.index

    # ---- ranking --------------------------------------------------------------------------
    def rank(self, history: History, query: str, table_uid: str, k: int = 10) -> list[tuple[CellId, float]]:
        """Top-k ((uid, row, col), score) cells of table ``table_uid`` for one turn, best first."""
        return self.rank_texts([self.history(history, query)], [table_uid], k)[0]

    def rank_texts(self, anchors: list[str], table_uids: list[str], k: int = 10,
                   batch_size: int = 64) -> list[list[tuple[CellId, float]]]:
        """Batched :meth:`rank` over ready-made anchor texts, one table each (an unindexed table ranks nothing)."""
        index = self._need_index()
        emb = self.encoder.encode_queries(anchors, batch_size=batch_size)
        return [index.search(e[None], k, subset=self.cells_of.get(uid, []), encoder_id=self.encoder.identity)[0]
                for e, uid in zip(emb, table_uids)]


def _by_table(ids: Sequence[CellId], texts: Sequence[str]) -> dict[str, tuple[list[CellId], list[str]]]:
    """Cell ids and texts grouped by table, in order."""
    out: dict[str, tuple[list[CellId], list[str]]] = {}
    for i, t in zip(ids, texts):
        group = out.setdefault(i[0], ([], []))
        group[0].append(i)
        group[1].append(t)
    return out
