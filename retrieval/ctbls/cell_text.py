"""Text views of table cells and of the dialogue history, as the coarse state tracker sees them.

A cell reads "<header> : <value> . <key header> : <key value> . txt: <linked page intro>", as
cTBLS writes its cell candidates: the value alone ("1998") says nothing; its column, its
row's key and the page it links to say what it is. The history reads "q1 a1 | q2 a2 | q",
oldest first, and is cut from the oldest side to the encoder's limit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from retrieval.ctbls.settings_file import load_settings, save_settings
from retrieval.data.types import Table

CellId = tuple[str, int, int]  # (table uid, row, col)
ROW_CONTEXTS = ("key", "row", "none")
EMPTY = "(empty)"
SETTINGS_NAME = "state_tracker.json"


@dataclass
class CellTextSettings:
    """How cells and histories are written as text; saved beside the encoder so inference matches training.

    ``row_context``: "key" adds the row's first cell (its key, e.g. the player's name), "row"
    the row's other cells, "none" nothing. ``history_turns``: how many earlier turns the history
    keeps (None = all that fit the encoder's limit; 0 = the current query alone).
    """

    row_context: str = "key"
    max_row_words: int = 32
    passages: bool = True
    max_passage_words: int | None = 48
    history_turns: int | None = None
    history_answers: bool = True

    def __post_init__(self) -> None:
        if self.row_context not in ROW_CONTEXTS:
            raise ValueError(f"unknown row_context {self.row_context!r}; choose from {ROW_CONTEXTS}")

    def save(self, path: str | Path) -> None:
        save_settings(self, path, SETTINGS_NAME)

    @classmethod
    def load(cls, path: str | Path) -> CellTextSettings:
        """Settings saved in folder ``path``; a clear error when it holds none (see retrieval.ctbls.settings_file)."""
        return load_settings(cls, path, SETTINGS_NAME, "cell state tracker",
                             "train/state_tracker.py or CellStateTracker.save_pretrained")


@dataclass
class CellStats:
    """What was unusual in the tables whose cells were written: reported, never skipped silently."""

    tables: int = 0
    cells: int = 0
    empty_cells: int = 0  # no value: the text carries "(empty)" with the header and row key
    ragged_tables: int = 0  # rows of unequal length, or longer than the header
    cells_without_header: int = 0
    links: int = 0
    links_without_passage: int = 0
    per_table: dict = field(default_factory=dict, repr=False)

    def add(self, other: CellStats) -> None:
        for name in ("tables", "cells", "empty_cells", "ragged_tables", "cells_without_header", "links",
                     "links_without_passage"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def as_dict(self) -> dict[str, int]:
        d = asdict(self)
        d.pop("per_table")
        return d


def _words(text: str, limit: int | None) -> str:
    if limit is None:
        return text
    return " ".join(text.split()[:limit])


def _header(table: Table, col: int) -> str:
    return table.header[col].strip() if col < len(table.header) else ""


def cell_text(table: Table, row: int, col: int, passages: Mapping[str, str] | None = None,
              settings: CellTextSettings | None = None) -> str:
    """Linearise cell (row, col) of ``table``; raises IndexError for a position outside the table."""
    settings = settings or CellTextSettings()
    cell = table.cell(row, col)
    if cell is None:
        raise IndexError(f"cell ({row}, {col}) lies outside table {table.uid!r} ({table.n_rows} rows)")
    value = cell.text.strip() or EMPTY
    header = _header(table, col)
    parts = [f"{header} : {value}" if header else value]
    cells = table.rows[row]
    if settings.row_context == "key" and col != 0 and cells:
        key = cells[0].text.strip()
        if key:
            key_header = _header(table, 0)
            parts.append(f"{key_header} : {key}" if key_header else key)
    elif settings.row_context == "row":
        others = [f"{_header(table, c)} : {x.text.strip()}" if _header(table, c) else x.text.strip()
                  for c, x in enumerate(cells) if c != col and x.text.strip()]
        if others:
            parts.append(_words(" ; ".join(others), settings.max_row_words))
    if settings.passages and passages:
        found = [passages[link] for link in cell.links if passages.get(link)]
        if found:
            parts.append("txt: " + _words(" ".join(found), settings.max_passage_words))
    return " . ".join(parts)


def table_cells(table: Table, passages: Mapping[str, str] | None = None,
                settings: CellTextSettings | None = None) -> tuple[list[CellId], list[str], CellStats]:
    """Every cell of ``table`` as (ids, texts, stats); ragged rows keep the cells they have."""
    settings = settings or CellTextSettings()
    ids, texts, stats = [], [], CellStats(tables=1)
    lengths = {len(r) for r in table.rows}
    if len(lengths) > 1 or max(lengths, default=0) > len(table.header):
        stats.ragged_tables = 1
    for r, cells in enumerate(table.rows):
        for c, cell in enumerate(cells):
            ids.append((table.uid, r, c))
            texts.append(cell_text(table, r, c, passages, settings))
            stats.cells += 1
            stats.empty_cells += not cell.text.strip()
            stats.cells_without_header += not _header(table, c)
            stats.links += len(cell.links)
            if passages is not None and settings.passages:
                stats.links_without_passage += sum(1 for link in cell.links if not passages.get(link))
    return ids, texts, stats


def cells_by_table(ids: Iterable[CellId]) -> dict[str, list[CellId]]:
    """Cell ids grouped by their table's uid, each group in the order given."""
    groups: dict[str, list[CellId]] = {}
    for i in ids:
        groups.setdefault(i[0], []).append(i)
    return groups


def history_text(previous: Sequence[tuple[str, str | None]], query: str,
                 settings: CellTextSettings | None = None,
                 truncate: Callable[[str], str] | None = None) -> str:
    """The tracker's anchor: earlier (query, answer) pairs, oldest first, then the current query.

    ``truncate`` cuts the text to the encoder's limit from the oldest side (see
    :func:`left_truncator`), so the current query always survives whole when it fits.
    """
    settings = settings or CellTextSettings()
    turns = list(previous)
    if settings.history_turns is not None:
        turns = turns[len(turns) - settings.history_turns:] if settings.history_turns > 0 else []
    segments = [f"{q} {a}" if settings.history_answers and a else q for q, a in turns]
    text = " | ".join(segments + [query])
    return truncate(text) if truncate is not None else text


def left_truncator(tokenizer, max_tokens: int) -> Callable[[str], str]:
    """A function cutting a text to ``max_tokens`` tokens (special tokens included) from the left."""
    room = max_tokens - tokenizer.num_special_tokens_to_add(pair=False)

    def truncate(text: str) -> str:
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        if len(ids) <= room:
            return text
        return tokenizer.decode(ids[len(ids) - room:], clean_up_tokenization_spaces=True).strip()

    return truncate
