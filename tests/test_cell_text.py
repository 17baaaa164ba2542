"""Cell and history linearisation for the state tracker."""

import pytest
from transformers import AutoTokenizer

from models.packaged import default_encoder_path
from retrieval.ctbls.cell_text import CellTextSettings, cell_text, history_text, left_truncator, table_cells
from retrieval.data.types import Cell, Table


@pytest.fixture
def table() -> Table:
    return Table(uid="t", title="Squad", header=["Player", "Club", "Goals"], rows=[
        [Cell("Ann Lee", ("/wiki/Ann_Lee",)), Cell("Reds"), Cell("12")],
        [Cell("Bo Chan"), Cell(""), Cell("3"), Cell("extra")],  # empty cell; longer than the header
        [Cell("Cy Dee")],  # short row
    ])


PASSAGES = {"/wiki/Ann_Lee": "Ann Lee is an English footballer who plays as a striker for the Reds."}


def test_cell_carries_header_row_key_and_linked_passage(table):
    assert cell_text(table, 0, 2) == "Goals : 12 . Player : Ann Lee"
    text = cell_text(table, 0, 0, PASSAGES, CellTextSettings(max_passage_words=5))
    assert text == "Player : Ann Lee . txt: Ann Lee is an English"
    assert cell_text(table, 0, 0, PASSAGES, CellTextSettings(passages=False)) == "Player : Ann Lee"


def test_row_context_variants(table):
    assert cell_text(table, 0, 1, settings=CellTextSettings(row_context="none")) == "Club : Reds"
    row = cell_text(table, 0, 1, settings=CellTextSettings(row_context="row"))
    assert row == "Club : Reds . Player : Ann Lee ; Goals : 12"
    with pytest.raises(ValueError):
        CellTextSettings(row_context="column")


def test_empty_ragged_and_outside_cells_are_handled_and_counted(table):
    assert cell_text(table, 1, 1) == "Club : (empty) . Player : Bo Chan"
    assert cell_text(table, 1, 3) == "extra . Player : Bo Chan"  # no header for the 4th column
    with pytest.raises(IndexError):
        cell_text(table, 2, 1)
    ids, texts, stats = table_cells(table, PASSAGES)
    assert ids == [("t", 0, 0), ("t", 0, 1), ("t", 0, 2), ("t", 1, 0), ("t", 1, 1), ("t", 1, 2), ("t", 1, 3),
                   ("t", 2, 0)]
    assert len(texts) == 8 and all(texts)
    assert (stats.cells, stats.empty_cells, stats.ragged_tables, stats.cells_without_header) == (8, 1, 1, 1)
    assert (stats.links, stats.links_without_passage) == (1, 0)


def test_history_keeps_order_answers_and_turn_limit():
    previous = [("who scored most?", "Ann Lee"), ("for which club?", None)]
    assert history_text(previous, "how many goals?") == "who scored most? Ann Lee | for which club? | how many goals?"
    last = CellTextSettings(history_turns=1)
    assert history_text(previous, "how many goals?", last) == "for which club? | how many goals?"
    assert history_text(previous, "q", CellTextSettings(history_turns=0)) == "q"
    no_answers = CellTextSettings(history_answers=False)
    assert history_text(previous, "q", no_answers) == "who scored most? | for which club? | q"


def test_history_is_cut_from_the_oldest_side():
    tokenizer = AutoTokenizer.from_pretrained(default_encoder_path())
    truncate = left_truncator(tokenizer, 12)
    previous = [(f"old question number {i}", f"answer {i}") for i in range(20)]
    text = history_text(previous, "which club does ann play for", truncate=truncate)
    assert text.endswith("which club does ann play for")
    assert len(tokenizer(text)["input_ids"]) <= 12
    assert "number 0 " not in text
    assert truncate("short text") == "short text"


def test_settings_round_trip(tmp_path):
    s = CellTextSettings(row_context="row", max_passage_words=None, history_turns=2)
    s.save(tmp_path)
    assert CellTextSettings.load(tmp_path) == s
    (tmp_path / "encoder_only").mkdir()
    with pytest.raises(FileNotFoundError, match=r"encoder_only: no state_tracker.json, so this is not a complete cell"):
        CellTextSettings.load(tmp_path / "encoder_only")  # never the defaults: they may not be what was trained
    with pytest.raises(FileNotFoundError, match=r"nothing: no such folder \(a cell state tracker checkpoint"):
        CellTextSettings.load(tmp_path / "nothing")
