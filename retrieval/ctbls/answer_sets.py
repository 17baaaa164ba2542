"""Answers as sets of cells, compared the way SQA's answer accuracy compares them.

SQA (Iyyer et al., 2017) scores a question as answered when the predicted set of answer cells equals the gold
set; its evaluation compares the cells' *text* after the normalisation WikiTableQuestions' evaluator applies
(SQA's tables and answer texts come from WikiTableQuestions). Written here from that description:

1. line breaks read as spaces, and the text is transliterated to ASCII (anyascii): SQA's answer texts are ASCII
   transliterations of the cells ("Córdoba" -> "Cordoba", "−20 °C" -> "-20 degC"), its cells are not. Over
   train.tsv the gold cells' own texts then match their answer texts for 97.6 % of the questions (96.5 % with
   accents dropped alone); the rest name a shifted row (see retrieval/data/sqa.py) or transliterate otherwise
   ("£" -> "PS");
2. typographic quotes become ' and ", dashes (‐ ‑ ‒ – — −) become -;
3. repeatedly, until nothing changes: trailing citation marks ("[1]", "†", "*") are removed, a trailing
   parenthetical that does not start the text (" (Las Vegas, NV)") is removed, surrounding double quotes are
   removed;
4. a final "." is removed, runs of white space become one space, the text is lower-cased and stripped;
5. a text that reads as a number ("1,000", "3.0") is compared as that number.

The gold and the predicted texts go through the same steps, and two answers match when their sets of normalised
values are equal (an empty prediction matches only an empty gold set).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import TypeVar

from anyascii import anyascii

T = TypeVar("T")
_QUOTES = {"\u2018": "'", "\u2019": "'", "\u00b4": "'", "`": "'", "\u201c": '"', "\u201d": '"'}
_DASHES = re.compile("[\u2010\u2011\u2012\u2013\u2014\u2212]")
_CITATION = re.compile(r"((?<!^)\[[^\]]*\]|\[\d+\]|[•♦†‡*#+])*$")
_PARENTHETICAL = re.compile(r"(?<!^)( \([^)]*\))*$")
_QUOTED = re.compile(r'^"([^"]*)"$')
_NUMBER = re.compile(r"^[-+]?(\d+(,\d{3})*|\d*)(\.\d+)?$")


def normalize_cell_text(text: str) -> str:
    """A cell's text as SQA's answer accuracy compares it (steps 1-4 of the module's description)."""
    text = anyascii(" ".join(text.split()))  # a line break inside a cell reads as a space
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if unicodedata.category(c) != "Mn")
    text = "".join(_QUOTES.get(c, c) for c in text)
    text = _DASHES.sub("-", text)
    while True:
        before = text
        text = _CITATION.sub("", text.strip())
        text = _PARENTHETICAL.sub("", text.strip())
        text = _QUOTED.sub(r"\1", text.strip())
        if text == before:
            break
    if text.endswith("."):
        text = text[:-1]
    return re.sub(r"\s+", " ", text).lower().strip()


def answer_value(text: str) -> str | float:
    """The normalised text, or the number it reads as (step 5)."""
    norm = normalize_cell_text(text)
    if norm and _NUMBER.match(norm) and any(ch.isdigit() for ch in norm):
        return float(norm.replace(",", ""))
    return norm


def answer_values(texts: Iterable[str]) -> frozenset:
    """The set of normalised values of an answer's cell texts."""
    return frozenset(answer_value(t) for t in texts)


def cells_named(answer: str, cells: Sequence[tuple[T, str]]) -> list[T]:
    """The cells (id, text) whose normalised text the normalised ``answer`` contains as a whole phrase (bounded by
    the text's ends or by non-alphanumerics), in the order given: an LLM's free answer mapped back to cells."""
    said = normalize_cell_text(answer)
    found = []
    for cell, text in cells:
        norm = normalize_cell_text(text)
        if norm and re.search(rf"(?<![a-z0-9]){re.escape(norm)}(?![a-z0-9])", said):
            found.append(cell)
    return found


def same_answer(predicted: Iterable[str], gold: Iterable[str]) -> bool:
    """True when the predicted cells' texts and the gold texts are the same set after normalisation."""
    return answer_values(predicted) == answer_values(gold)
