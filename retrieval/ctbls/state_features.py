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
- the question's position (0, 1, 2, 3 = later) and the share of the cell's column that reads as a number;
- whether the cell's column is the one whose header shares most of the question's words; whether the question
  holds a superlative ("most", "lowest", ...) or a word of order ("first", "last", ...), and whether the cell
  holds its column's largest or smallest number, or lies in the first or last row, among the rows in play (the
  previous answer's, else the whole table's).

Every value is computed from the table, the question, the ranking and the previous answer's cells only: the same
features for the reference answers (evaluating the tracker) and for the system's own (answering).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from retrieval.ctbls.answer_sets import answer_value, cells_named
from retrieval.ctbls.cell_text import CellId
from retrieval.data.types import Table
from retrieval.search.bm25 import BM25Retriever
from retrieval.search.english import ENGLISH_STOP_WORDS, english_stemmer

FEATURES = (
    "score", "score_gap", "inverse_rank", "column_best_gap", "column_mean_gap", "row_best_gap",
    "bm25_value", "bm25_row", "header_overlap", "value_overlap", "value_named", "row_named",
    "has_previous", "in_previous", "previous_row", "previous_column", "previous_row_share", "points_back",
    "position", "numeric_column", "header_best", "superlative", "order_word", "column_max", "column_min",
    "first_row", "last_row",
)
# Words that point back at an earlier answer ("which of those ...", "what about their ages?"): English anaphora,
# a closed class, not a list chosen from the data.
POINTING_BACK = frozenset("those these them they their theirs that this it its he she his her him".split())
# Superlatives and the words of order: the answer is then an extreme of a column, or the first or last row, among
# the rows in play (the previous answer's, else the table's). English closed classes again.
SUPERLATIVES = frozenset("most least highest lowest largest smallest biggest greatest fewest longest shortest oldest "
                         "youngest newest earliest latest best worst maximum minimum max min more less".split())
ORDER_WORDS = frozenset("first last top bottom final next previous".split())
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class TurnState:
    """One turn as the re-ranker reads it: the question, its position (0 = first) and the previous answer's cells
    as (row, col) of the same table (empty on a first turn, or when the previous answer was empty)."""

    query: str
    position: int
    previous: frozenset[tuple[int, int]] = frozenset()


class _Words:
    """Content words: lower case, no stop words, stemmed (PyStemmer, a dependency of the project)."""

    def __init__(self) -> None:
        self._stem = english_stemmer().stemWord

    def __call__(self, text: str) -> set[str]:
        return {self._stem(w) for w in _WORD.findall(text.lower()) if w not in ENGLISH_STOP_WORDS}


class TableView:
    """What the features need of one table, computed once: cell values, header and value words, numeric columns,
    BM25 over the values and over the rows."""

    def __init__(self, table: Table, words: _Words):
        self.table = table
        self.cells = [(r, c) for r, row in enumerate(table.rows) for c in range(len(row))]
        self.index = {cell: i for i, cell in enumerate(self.cells)}
        values = [table.rows[r][c].text for r, c in self.cells]
        self.named_input = list(zip(self.cells, values))
        self.value_words = [words(v) for v in values]
        self.header_words = [words(h) for h in table.header] + [set()] * (table.n_cols - len(table.header))
        numbers = [answer_value(v) for v in values]
        self.number = np.array([x if isinstance(x, float) else np.nan for x in numbers])
        self.numeric = np.zeros(table.n_cols)
        for c in range(table.n_cols):
            column = [v for (r, cc), v in zip(self.cells, values) if cc == c and v.strip()]
            self.numeric[c] = np.mean([isinstance(answer_value(v), float) for v in column]) if column else 0.0
        self.rows = np.array([r for r, _ in self.cells])
        self.cols = np.array([c for _, c in self.cells])
        rows = [" ".join(cell.text for cell in row) for row in table.rows]
        self._bm25_value = BM25Retriever([v or "-" for v in values], self.cells) if self.cells else None
        self._bm25_row = BM25Retriever([t or "-" for t in rows], list(range(len(rows)))) if rows else None

    def bm25(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """BM25 of ``query`` on each cell's value and on each cell's row, each scaled by its best in the table."""
        value = self._bm25_value.scores(query) if self._bm25_value else np.zeros(0)
        row = self._bm25_row.scores(query) if self._bm25_row else np.zeros(0)
        row = row[[r for r, _ in self.cells]] if len(row) else np.zeros(len(self.cells))
        return tuple(s / s.max() if len(s) and s.max() > 0 else np.zeros(len(self.cells)) for s in (value, row))


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


def _extremes(view: TableView, state: TurnState, query_words: set[str], header_overlap: np.ndarray) -> np.ndarray:
    """(N, 7): :data:`FEATURES` from "header_best" on (see the module's description)."""
    n = len(view.cells)
    in_play = np.isin(view.rows, [r for r, _ in state.previous]) if state.previous else np.ones(n, dtype=bool)
    out = np.zeros((n, 7))
    best = header_overlap.max() if n else 0.0
    out[:, 0] = (header_overlap == best) & (best > 0)
    out[:, 1] = bool(query_words & SUPERLATIVES)
    out[:, 2] = bool(query_words & ORDER_WORDS)
    for c in np.unique(view.cols):
        here = (view.cols == c) & in_play & ~np.isnan(view.number)
        if here.any():
            out[:, 3] += here & (view.number == view.number[here].max())
            out[:, 4] += here & (view.number == view.number[here].min())
    played = view.rows[in_play]
    if len(played):
        out[:, 5] = in_play & (view.rows == played.min())
        out[:, 6] = in_play & (view.rows == played.max())
    return out


def turn_features(ranked: Sequence[tuple[CellId, float]], view: TableView, state: TurnState, words: _Words
                  ) -> tuple[list[CellId], np.ndarray]:
    """The cells of ``view``'s table (ids (uid, row, col)) and their (N, len(FEATURES)) feature matrix for one turn
    ranked by the tracker as ``ranked`` (((uid, row, col), score), best first)."""
    n = len(view.cells)
    if not n:
        return [], np.zeros((0, len(FEATURES)))
    tracker = _tracker_columns(ranked, view)
    bm25_value, bm25_row = view.bm25(state.query)
    question = words(state.query)
    named = set(cells_named(state.query, view.named_input))
    named_rows: dict[int, int] = {}
    for r, _ in named:
        named_rows[r] = named_rows.get(r, 0) + 1
    prev_rows = {r for r, _ in state.previous}
    prev_cols = {c for _, c in state.previous}
    has_prev = float(bool(state.previous))
    plain = set(_WORD.findall(state.query.lower()))  # unstemmed: the closed classes are lists of whole words
    points_back = float(bool(plain & POINTING_BACK))
    share = len(prev_rows) / max(view.table.n_rows, 1)
    out = np.zeros((n, len(FEATURES)))
    out[:, :6] = tracker
    out[:, 6], out[:, 7] = bm25_value, bm25_row
    for i, (r, c) in enumerate(view.cells):
        header, value = view.header_words[c], view.value_words[i]
        is_named = (r, c) in named
        out[i, 8:20] = (len(question & header) / max(len(question), 1), len(question & value) / max(len(value), 1),
                      float(is_named), float(named_rows.get(r, 0) > is_named),
                      has_prev, float((r, c) in state.previous), float(r in prev_rows), float(c in prev_cols),
                      share, points_back, float(min(state.position, 3)), view.numeric[c])
    out[:, 20:] = _extremes(view, state, plain, out[:, 8])
    uid = view.table.uid
    return [(uid, r, c) for r, c in view.cells], out
