"""Shared data types: a table, a cell, a turn, a conversation, and an earlier turn of a temporal question.

The OTT-QA and HybriDialogue readers produce tables, turns and conversations, and every retriever,
tracker and evaluation consumes them. Other things that look alike are named apart: a long
conversation log's turn is a :class:`retrieval.data.conversation_log.Utterance` (speaker, time,
session), a chat sent to an LLM is a :data:`retrieval.llm.base.Chat` (role/content messages), and
the cTBLS pipeline's history is a :data:`retrieval.ctbls.state_tracker.History` of (query, answer) pairs.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Cell:
    """One table cell: its text and the pages it links to (e.g. "/wiki/Page")."""

    text: str
    links: tuple[str, ...] = ()


@dataclass
class Table:
    """A table with its context (title, section, intro) and rows of cells.

    ``rows`` may be ragged in raw data; readers keep them as they are and the
    consumers decide (see :meth:`cell`).
    """

    uid: str
    title: str
    header: list[str]
    rows: list[list[Cell]]
    section_title: str = ""
    section_text: str = ""
    intro: str = ""
    split: str | None = None

    @property
    def n_rows(self) -> int:
        return len(self.rows)

    @property
    def n_cols(self) -> int:
        return max([len(self.header)] + [len(r) for r in self.rows])

    def cell(self, row: int, col: int) -> Cell | None:
        """The cell at (row, col), or None when the position lies outside the table."""
        if 0 <= row < len(self.rows) and 0 <= col < len(self.rows[row]):
            return self.rows[row][col]
        return None

    def at(self, row: int, col: int) -> Cell:
        """The cell at (row, col), a position of the table (a ranked cell's); an IndexError naming it otherwise."""
        cell = self.cell(row, col)
        if cell is None:
            raise IndexError(f"table {self.uid!r} has no cell at row {row}, column {col}")
        return cell


@dataclass
class Turn:
    """One turn of a conversation: a query, its reference answer and the answer's cells."""

    turn_id: str
    query: str
    answer: str | None = None
    table_id: str | None = None
    targets: list[tuple[int, int]] = field(default_factory=list)


@dataclass
class Conversation:
    """A conversation about one table; the first turn must find the table."""

    conv_id: str
    table_id: str
    turns: list[Turn]


ContextTurn = str | dict[str, str]
"""An earlier turn of a question put to the temporal memory: its text, or ``{"speaker", "text"}`` (as in
Zyphra's ambiguous questions). The context a rewrite joins to the query; unlike a :class:`Turn` it has no
reference answer and no table."""
