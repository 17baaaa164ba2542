"""The light language check: a question the time grammar cannot read says so first, and English stays unflagged."""

from __future__ import annotations

import pytest

from retrieval.memory.language_check import language_note


@pytest.mark.parametrize("question, language", [
    ("¿Qué dijimos sobre los pasteis de nata el martes?", "Spanish"),
    ("Qu'est-ce qu'on a dit mardi dernier?", "French"),
    ("Was haben wir am Dienstag besprochen?", "German"),
    ("Cosa abbiamo detto giovedì?", "Italian"),
])
def test_foreign_calendar_names_are_named(question, language):
    note = language_note(question)
    assert note.startswith("not read as English: it names") and f"({language})" in note


def test_another_languages_function_words_flag_a_question_without_time():
    assert language_note("¿Qué dijimos sobre los pasteles?").startswith("not read as English: its time words")


@pytest.mark.parametrize("question, read_a_time", [
    ("What did we discuss last Friday?", True), ("Rex's birthday plans?", False),
    ("Vet appointment costs recap please", False), ("What did we say about mayo on Tuesday?", True),
    ("Tell me about Domingo's party in March", True), ("Birthday party next Friday?", True),
])
def test_english_is_not_flagged(question, read_a_time):
    assert language_note(question, read_a_time) is None
