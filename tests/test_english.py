"""The shared English stop-word list: NLTK's (as bm25s ships it) with "could" and "would"."""

from __future__ import annotations

from bm25s.stopwords import STOPWORDS_EN_PLUS

from retrieval.ctbls.prompts import STOP_WORDS
from retrieval.search.english import CONTRACTION_FRAGMENTS, ENGLISH_STOP_WORDS, NEGATIONS


def test_the_list_is_nltks_with_could_and_would():
    assert ENGLISH_STOP_WORDS == frozenset(STOPWORDS_EN_PLUS) | {"could", "would"}


def test_negations_and_fragments_are_words_of_the_list():
    assert NEGATIONS <= ENGLISH_STOP_WORDS and CONTRACTION_FRAGMENTS <= ENGLISH_STOP_WORDS
    assert {"no", "not", "nor", "don't", "won't"} <= NEGATIONS
    assert not CONTRACTION_FRAGMENTS & NEGATIONS and not any("'" in w for w in CONTRACTION_FRAGMENTS)


def test_the_prompt_keeps_negations_and_drops_the_rest():
    assert "not" not in STOP_WORDS and "don't" not in STOP_WORDS and "s" not in STOP_WORDS
    assert {"the", "could", "would", "it's"} <= STOP_WORDS
