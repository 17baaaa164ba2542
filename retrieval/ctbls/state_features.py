"""What the state-aware re-ranker sees of one (turn, cell): the tracker's view and the dialogue state beside it.

A dense cosine between the history and a cell ignores the dialogue *state*: in SQA a follow-up's answer cells are
mostly in the previous answer's rows ("which of those ...?"), or its column, or the column the question names.
:func:`turn_features` turns one turn's ranking of a table into a matrix, one row per cell, columns
:data:`FEATURES`:

- the tracker: its score, the gap to the top score, 1 / (1 + rank), the gaps of the cell's column and row (their
  best and the column's mean score) to the top;
- words: BM25 of the question on the cell's value and on its whole row (within the table, scaled by the table's
  best), the share of the question's content words in the column header and in the cell's value, whether the
  question names the cell's value as a phrase, and whether it names another value of the cell's row;
- the state: whether there is a previous answer, whether the cell, its row, its column is in it, the share of the
  table's rows it holds, whether the question holds a word that points back ("those", "them", "their", ...);
- the question's position (0, 1, 2, 3 = later) and the share of the cell's column that states a quantity
  (:mod:`retrieval.ctbls.cell_values`: numbers, durations, dates);
- whether the cell's column is the one whose header shares most of the question's words; whether the question
  asks for the most or the least ("highest", "fewer", ...) or holds a word of order ("first", "last", ...), and
  whether the cell holds its column's largest or smallest quantity, or lies in the first or last row, among the
  rows in play (the previous answer's, else the whole table's);
- the column the question names (the header sharing most of its words): whether the cell's row holds that
  column's largest or smallest quantity among the rows in play ("which date had the highest attendance?"),
  meets the question's comparison with a number ("more than 21 losses"), or has that column empty ("which one
  has no birth date?");
- the question's words (:mod:`retrieval.ctbls.question_cues`): a negation; the header sharing the word a wh-word
  heads ("which *date* ...") or a word of the previous question; and of the table: the column's place, whether it
  is the first column of text (the rows' names), whether the cell repeats its header (a header row in the table).

Every value is computed from the table, the question, the ranking, the previous question and the previous
answer's cells only: the same
features for the reference answers (evaluating the tracker) and for the system's own (answering).
"""

from __future__ import annotations

import re
from collections.abc import Sequence, Set
from dataclasses import dataclass

import numpy as np

from retrieval.ctbls.answer_sets import cells_named, normalize_cell_text
from retrieval.ctbls.cell_text import CellId
from retrieval.ctbls.cell_values import magnitude
from retrieval.ctbls.question_cues import (
    NEGATING,
    ORDER_WORDS,
    POINTING_BACK,
    WANTS_LEAST,
    WANTS_MOST,
    comparison,
    question_words,
    wh_heads,
)
from retrieval.data.types import Table
from retrieval.search.bm25 import BM25Retriever
from retrieval.search.english import ENGLISH_STOP_WORDS, english_stemmer

FEATURES = (
    "score", "score_gap", "inverse_rank", "column_best_gap", "column_mean_gap", "row_best_gap",
    "bm25_value", "bm25_row", "header_overlap", "value_overlap", "value_named", "row_named",
    "has_previous", "in_previous", "previous_row", "previous_column", "previous_row_share", "points_back",
    "position", "numeric_column", "header_best", "wants_most", "wants_least", "order_word", "column_max",
    "column_min", "first_row", "last_row", "row_max_named", "row_min_named", "comparison_holds", "row_empty_named",
    "negation", "wh_head_header", "previous_question_header", "column_position", "first_text_column", "header_like",
)
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class TurnState:
    """One turn as the re-ranker reads it: the question, its position (0 = first), the previous answer's cells as
    (row, col) of the same table (empty on a first turn, or when the previous answer was empty) and the previous
    question ("" on a first turn)."""

    query: str
    position: int
    previous: frozenset[tuple[int, int]] = frozenset()
    previous_query: str = ""


class _Words:
    """Content words: lower case, no stop words, stemmed (PyStemmer, a dependency of the project)."""

    def __init__(self) -> None:
        self._stem = english_stemmer().stemWord

    def __call__(self, text: str) -> set[str]:
        return {self._stem(w) for w in _WORD.findall(text.lower()) if w not in ENGLISH_STOP_WORDS}


class TableView:
    """What the features need of one table, computed once: cell values, header and value words, the cells'
    quantities (:func:`~retrieval.ctbls.cell_values.magnitude`) and each column's share of them, the cells that
    repeat their header (a header row inside the table), BM25 over the values and over the rows."""

    def __init__(self, table: Table, words: _Words):
        self.table = table
        self.cells = [(r, c) for r, row in enumerate(table.rows) for c in range(len(row))]
        self.index = {cell: i for i, cell in enumerate(self.cells)}
        values = [table.rows[r][c].text for r, c in self.cells]
        self.named_input = list(zip(self.cells, values))
        self.value_words = [words(v) for v in values]
        header = list(table.header) + [""] * (table.n_cols - len(table.header))
        self.header_words = [words(h) for h in header]
        self.rows = np.array([r for r, _ in self.cells])
        self.cols = np.array([c for _, c in self.cells])
        self.number = np.array([magnitude(v) for v in values])
        self.empty = np.array([not v.strip() for v in values])
        self.numeric = np.zeros(table.n_cols)
        for c in range(table.n_cols):
            filled = (self.cols == c) & ~self.empty
            self.numeric[c] = np.mean(~np.isnan(self.number[filled])) if filled.any() else 0.0
        text_columns = [c for c in range(table.n_cols) if self.numeric[c] < 0.5]
        self.first_text_column = text_columns[0] if text_columns else -1
        self.header_like = np.array([bool(v.strip()) and normalize_cell_text(v) == normalize_cell_text(header[c])
                                     for v, (_, c) in zip(values, self.cells)])
        rows = [" ".join(cell.text for cell in row) for row in table.rows]
        self._bm25_value = BM25Retriever([v or "-" for v in values], self.cells) if self.cells else None
        self._bm25_row = BM25Retriever([t or "-" for t in rows], list(range(len(rows)))) if rows else None

    def bm25(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """BM25 of ``query`` on each cell's value and on each cell's row, each scaled by its best in the table."""
        value = self._bm25_value.scores(query) if self._bm25_value else np.zeros(0)
        row = self._bm25_row.scores(query) if self._bm25_row else np.zeros(0)
        row = row[[r for r, _ in self.cells]] if len(row) else np.zeros(len(self.cells))

        def scaled(s: np.ndarray) -> np.ndarray:
            return s / s.max() if len(s) and s.max() > 0 else np.zeros(len(self.cells))

        return scaled(value), scaled(row)


class StateFeaturizer:
    """Builds :func:`turn_features` matrices, keeping each table's :class:`TableView` for the next turn."""

    def __init__(self) -> None:
        self.words = _Words()
        self._views: dict[str, TableView] = {}

    def view(self, table: Table) -> TableView:
        if table.uid not in self._views:
            self._views[table.uid] = TableView(table, self.words)
        return self._views[table.uid]

    def __call__(self, ranked: Sequence[tuple[CellId, float]], table: Table, state: TurnState
                 ) -> tuple[list[CellId], np.ndarray]:
        return turn_features(ranked, self.view(table), state, self.words)


def _tracker_columns(ranked: Sequence[tuple[CellId, float]], view: TableView) -> np.ndarray:
    """(N, 6): score, gap to the top, 1 / (1 + rank), column best / column mean / row best gaps to the top.
    A cell the ranking left out scores as the ranking's lowest."""
    n = len(view.cells)
    low = min((s for _, s in ranked), default=0.0)
    score, rank = np.full(n, low, dtype=np.float64), np.full(n, float(len(ranked)))
    for i, ((_, r, c), s) in enumerate(ranked):
        j = view.index.get((r, c))
        if j is not None:
            score[j], rank[j] = s, i
    top = score.max() if n else 0.0
    rows, cols = view.rows, view.cols
    col_best = {c: score[cols == c].max() for c in set(cols.tolist())}
    col_mean = {c: score[cols == c].mean() for c in set(cols.tolist())}
    row_best = {r: score[rows == r].max() for r in set(rows.tolist())}
    return np.stack([score, score - top, 1.0 / (1.0 + rank),
                     np.array([col_best[c] for c in cols]) - top, np.array([col_mean[c] for c in cols]) - top,
                     np.array([row_best[r] for r in rows]) - top], axis=1)


def _extremes(view: TableView, in_play: np.ndarray, plain: set[str], header_overlap: np.ndarray) -> np.ndarray:
    """(N, 8): :data:`FEATURES` from "header_best" to "last_row" (see the module's description)."""
    out = np.zeros((len(view.cells), 8))
    best = header_overlap.max()
    out[:, 0] = (header_overlap == best) & (best > 0)
    out[:, 1], out[:, 2], out[:, 3] = bool(plain & WANTS_MOST), bool(plain & WANTS_LEAST), bool(plain & ORDER_WORDS)
    for c in np.unique(view.cols):
        here = (view.cols == c) & in_play & ~np.isnan(view.number)
        if here.any():
            out[:, 4] += here & (view.number == view.number[here].max())
            out[:, 5] += here & (view.number == view.number[here].min())
    played = view.rows[in_play]
    if len(played):
        out[:, 6] = in_play & (view.rows == played.min())
        out[:, 7] = in_play & (view.rows == played.max())
    return out


def _named_column(view: TableView, header_overlap: np.ndarray, numeric: bool, asked: Set[str] = frozenset()
                  ) -> int | None:
    """The column whose header shares most of the question's words; if ``numeric``, among the numeric columns
    whose header shares no word in ``asked`` (the column a wh-word heads holds the answer, not the criterion:
    "which *date* had the highest attendance?")."""
    best, column = 0.0, None
    for c in range(view.table.n_cols):
        here = view.cols == c
        if not here.any() or header_overlap[here][0] <= best:
            continue
        if not numeric or (view.numeric[c] >= 0.5 and not asked & view.header_words[c]):
            best, column = header_overlap[here][0], c
    return column


def _named_column_rows(view: TableView, in_play: np.ndarray, words: list[str], header_overlap: np.ndarray,
                       asked: Set[str]) -> np.ndarray:
    """(N, 4): whether the cell's row holds the largest / the smallest quantity (among the rows in play) of the
    numeric column the question names, whether it meets the question's comparison with a number (in that column,
    else in any numeric one), and whether its cell in the column the question names (of any kind) is empty."""
    out = np.zeros((len(view.cells), 4))
    column = _named_column(view, header_overlap, numeric=True, asked=asked)
    if column is not None:
        here = (view.cols == column) & in_play & ~np.isnan(view.number)
        if here.any():
            out[:, 0] = np.isin(view.rows, view.rows[here & (view.number == view.number[here].max())])
            out[:, 1] = np.isin(view.rows, view.rows[here & (view.number == view.number[here].min())])
    compared = comparison(words)
    if compared is not None:
        value, above = compared
        columns = [column] if column is not None else np.flatnonzero(view.numeric >= 0.5).tolist()
        here = np.isin(view.cols, columns) & ~np.isnan(view.number)
        meets = here & ((view.number > value) if above else (view.number < value))
        out[:, 2] = np.isin(view.rows, view.rows[meets])
    any_column = _named_column(view, header_overlap, numeric=False)
    if any_column is not None:
        out[:, 3] = np.isin(view.rows, view.rows[(view.cols == any_column) & view.empty])
    return out


def _question_columns(view: TableView, state: TurnState, words: list[str], heads: set[str], stem: _Words
                      ) -> np.ndarray:
    """(N, 6): :data:`FEATURES` from "negation" on: negation in the question, the cell's header sharing a word the
    question's wh-word heads (``heads``, stemmed), or a word of the previous question; the column's place (0 first,
    1 last), whether it is the table's first column of text, whether the cell repeats its header."""
    out = np.zeros((len(view.cells), 6))
    out[:, 0] = bool(set(words) & NEGATING)
    previous = stem(state.previous_query)
    out[:, 1] = [bool(heads & view.header_words[c]) for c in view.cols]
    out[:, 2] = [bool(previous & view.header_words[c]) for c in view.cols]
    out[:, 3] = view.cols / max(view.table.n_cols - 1, 1)
    out[:, 4] = view.cols == view.first_text_column
    out[:, 5] = view.header_like
    return out


def turn_features(ranked: Sequence[tuple[CellId, float]], view: TableView, state: TurnState, words: _Words
                  ) -> tuple[list[CellId], np.ndarray]:
    """The cells of ``view``'s table (ids (uid, row, col)) and their (N, len(FEATURES)) feature matrix for one turn
    ranked by the tracker as ``ranked`` (((uid, row, col), score), best first)."""
    n = len(view.cells)
    if not n:
        return [], np.zeros((0, len(FEATURES)))
    bm25_value, bm25_row = view.bm25(state.query)
    question = words(state.query)
    named = set(cells_named(state.query, view.named_input))
    named_rows: dict[int, int] = {}
    for r, _ in named:
        named_rows[r] = named_rows.get(r, 0) + 1
    prev_rows = {r for r, _ in state.previous}
    prev_cols = {c for _, c in state.previous}
    has_prev = float(bool(state.previous))
    plain = question_words(state.query)  # unstemmed: the closed classes are lists of whole words
    points_back = float(bool(set(plain) & POINTING_BACK))
    share = len(prev_rows) / max(view.table.n_rows, 1)
    out = np.zeros((n, len(FEATURES)))
    out[:, :6] = _tracker_columns(ranked, view)
    out[:, 6], out[:, 7] = bm25_value, bm25_row
    for i, (r, c) in enumerate(view.cells):
        header, value = view.header_words[c], view.value_words[i]
        is_named = (r, c) in named
        out[i, 8:20] = (len(question & header) / max(len(question), 1), len(question & value) / max(len(value), 1),
                        float(is_named), float(named_rows.get(r, 0) > is_named),
                        has_prev, float((r, c) in state.previous), float(r in prev_rows), float(c in prev_cols),
                        share, points_back, float(min(state.position, 3)), view.numeric[c])
    in_play = np.isin(view.rows, list(prev_rows)) if prev_rows else np.ones(n, dtype=bool)
    out[:, 20:28] = _extremes(view, in_play, set(plain), out[:, 8])
    heads = words(" ".join(wh_heads(plain)))
    out[:, 28:32] = _named_column_rows(view, in_play, plain, out[:, 8], heads)
    out[:, 32:] = _question_columns(view, state, plain, heads, words)
    uid = view.table.uid
    return [(uid, r, c) for r, c in view.cells], out
