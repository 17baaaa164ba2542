"""SQA's answer comparison and the extractive cell selector: hand-made cases whose right answer is known."""

from __future__ import annotations

import pytest

from retrieval.ctbls.answer_sets import answer_value, cells_named, normalize_cell_text, same_answer
from retrieval.ctbls.cell_selector import SelectionRule, candidate_rules, select_cells


@pytest.mark.parametrize("text, normalized", [
    ("Córdoba CF", "cordoba cf"),
    ("−20 °C", "-20 degc"),
    ('"Dig a Hole"', "dig a hole"),
    ("Valley HS (Las Vegas, NV)", "valley hs"),
    ("(1) Opening", "(1) opening"),  # a parenthetical that starts the text stays
    ("Ben McDonald[1]", "ben mcdonald"),
    ("Calleen\n(previously Hiawatha)", "calleen"),
    ("Monday–Friday", "monday-friday"),
    ("  U.S.  ", "u.s"),
    ("Champions †", "champions"),
])
def test_normalization(text, normalized):
    assert normalize_cell_text(text) == normalized


def test_numbers_compare_as_numbers_and_sets_as_sets():
    assert answer_value("1,000") == answer_value("1000") == 1000.0 and answer_value("3.0") == 3.0
    assert answer_value("1-0") == "1-0" and answer_value("") == ""
    assert same_answer(["Cordoba CF", "1,000"], ["1000", "Córdoba CF"])
    assert not same_answer(["Cordoba CF"], ["Cordoba CF", "Malaga"])
    assert same_answer([], []) and not same_answer([], ["x"])


RANKED = [(("t", 0, 2), 0.90), (("t", 1, 2), 0.85), (("t", 0, 1), 0.80), (("t", 2, 2), 0.60), (("t", 3, 2), 0.50)]


def test_selector_keeps_the_top_cells_column_within_the_margin():
    assert select_cells(RANKED, SelectionRule("top", "absolute", 0.0)) == [("t", 0, 2)]
    assert select_cells(RANKED, SelectionRule("column", "absolute", 0.1)) == [("t", 0, 2), ("t", 1, 2)]
    assert select_cells(RANKED, SelectionRule("column", "absolute", 0.35)) == [("t", 0, 2), ("t", 1, 2), ("t", 2, 2)]
    # relative: a share of the column's spread (0.90 - 0.50): 0.5 keeps scores >= 0.70
    assert select_cells(RANKED, SelectionRule("column", "relative", 0.5)) == [("t", 0, 2), ("t", 1, 2)]
    assert len(select_cells(RANKED, SelectionRule("column", "relative", 1.0))) == 4  # the whole column
    assert select_cells([], SelectionRule()) == []


def test_rules_check_their_settings_and_the_grid_is_distinct():
    with pytest.raises(ValueError, match="unknown scope"):
        SelectionRule("row")
    with pytest.raises(ValueError, match="margin must be non-negative"):
        SelectionRule(margin=-1)
    names = [r.name for r in candidate_rules()]
    assert len(names) == len(set(names)) and names[0] == "top cell"


def test_an_llm_answer_maps_back_to_the_cells_it_names():
    cells = [("a", "Atlanta"), ("b", "The Dome"), ("c", "1990"), ("d", "199"), ("e", "")]
    assert cells_named("The Dome and 1990, in atlanta.", cells) == ["a", "b", "c"]  # never '199' inside '1990'
    assert cells_named("I do not know", cells) == []


def test_shape_rules_follow_the_shape_and_the_previous_rows():
    ranked = [(("t", 0, 1), 0.9), (("t", 0, 2), 0.8), (("t", 1, 2), 0.7), (("t", 1, 1), 0.1), (("t", 2, 2), 0.6),
              (("t", 2, 1), 0.0)]
    rule = SelectionRule("shape", "absolute", 0.15, within_previous=True)
    assert select_cells(ranked, rule, "column") == [("t", 0, 1), ("t", 1, 1), ("t", 2, 1)]
    by_mean = SelectionRule("shape", "absolute", 0.15, column_by="mean")  # column 2 averages 0.7, column 1 0.33
    assert select_cells(ranked, by_mean, "column") == [("t", 0, 2), ("t", 1, 2), ("t", 2, 2)]
    assert select_cells(ranked, rule, "cell", previous_rows={1, 2}) == [("t", 1, 2)]
    assert select_cells(ranked, rule, "subset", previous_rows={1, 2}) == [("t", 1, 2), ("t", 2, 2)]
    assert select_cells(ranked, rule, "cell", previous_rows=None) == [("t", 0, 1)]  # a first turn
    assert select_cells(ranked, rule, "cell", previous_rows={7}) == [("t", 0, 1)]  # rows not in the ranking


def test_mentioned_values_choose_the_row_but_are_not_the_answer():
    ranked = [(("t", 0, 0), 0.9), (("t", 1, 0), 0.8), (("t", 1, 1), 0.7), (("t", 0, 1), 0.6)]
    rule = SelectionRule("shape", "absolute", 0.1, use_mentions=True)
    assert select_cells(ranked, rule, "cell", mentioned=[("t", 1, 1)]) == [("t", 1, 0)]
    assert select_cells(ranked, rule, "cell", mentioned=[]) == [("t", 0, 0)]
