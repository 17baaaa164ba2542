"""Cell quantities (numbers, durations, dates) and the question cues the SQA re-ranker reads."""

from __future__ import annotations

import math

import pytest

from retrieval.ctbls.cell_values import magnitude
from retrieval.ctbls.question_cues import comparison, question_words, wh_heads


@pytest.mark.parametrize("text, value", [
    ("13,931", 13931), ("+26", 26), ("\u22129", -9), ("996 days", 996), ("6th", 6), ("2002", 2002), ("0.005", 0.005),
    ("(5)", 5), ("3:39", 219), ("1:02:03", 3723), ("September 12, 1982", 19820912), ("28 January 1983", 19830128),
    ("Dec. 3, 1995", 19951203), ("12th May 2001", 20010512),
])
def test_a_cells_leading_quantity(text, value):
    assert magnitude(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["Cornell University", "", "  ", "Nil", "Smarch 40, 1990 was a name"])
def test_text_without_a_leading_quantity_is_nan(text):
    assert math.isnan(magnitude(text))


def test_dates_order_as_dates_and_durations_as_durations():
    assert magnitude("January 2, 1983") > magnitude("December 12, 1982") > magnitude("September 12, 1982")
    assert magnitude("4:33") > magnitude("3:59") > magnitude("0:59")


def test_comparisons_with_a_number_and_their_direction():
    assert comparison(question_words("what team had more than 21 losses?")) == (21.0, True)
    assert comparison(question_words("which five had fewer than 50 females?")) == (50.0, False)
    assert comparison(question_words("which scored over 2.5 goals?")) == (2.5, True)
    assert comparison(question_words("who scored more goals?")) is None  # no number: not a comparison


def test_the_words_a_wh_word_heads():
    assert wh_heads(question_words("Which date had the highest turnout?")) == ["date"]
    assert wh_heads(question_words("who won, and what team lost?")) == ["won", "team"]
    assert wh_heads(question_words("which")) == []
