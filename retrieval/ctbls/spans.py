"""Candidate answer spans from the top-ranked cells: what the fine stage chooses among.

cTBLS' fine state tracking picks the exact phrase that answers the query out of the cells the coarse
tracker ranked. A small LLM writing freely answers in long sentences (SmolLM2-135M: about 16 words
against OTT-QA's two-word answers); choosing among spans of the knowledge keeps its answer a phrase
of the table or of a linked page. :func:`candidate_spans` lists, for each ranked cell in rank order:

- ``cell``: the cell's whole value, and ``part``: its pieces between separators (``,``, ``;``, ``/``,
  brackets, a spaced dash), e.g. "3 ( 2011 , 2014 , 2015 )" gives "3", "2011", "2014", "2015";
- from the pages the cell links to (OTT-QA's answers mostly lie there: 71 % of the training turns):
  ``date`` ("6 November 1905", "November 6 , 1905", "November 1905"), ``number`` (with its scale
  word: "38 million"; ordinals: "9th"), ``entity`` (a run of capitalised words, connectors such as
  "of" or "de" inside it, with and without a leading "The"; runs joined by commas, as in
  "Sheffield , South Yorkshire , England") and ``word`` (each other content word, lowercase
  included: "midfielder").

Texts keep the data's own tokenisation (OTT-QA separates punctuation with spaces) and are deduplicated
case-insensitively, the first (highest-ranked) occurrence kept. The kinds and the separators were
chosen on OTT-QA's training turns (how often the reference answer is a candidate of the gold cell),
never on the evaluated ones.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from retrieval.search.english import ENGLISH_STOP_WORDS, MONTHS

KINDS = ("cell", "part", "date", "number", "entity", "word")
_SEPARATORS = re.compile(r"\s*(?:[,;/|()\[\]]|\s[-–—]\s)\s*")
_SCALES = {"hundred", "thousand", "million", "billion", "trillion", "percent", "%"}
_CONNECTORS = {"of", "the", "de", "del", "la", "le", "les", "du", "da", "do", "dos", "von", "van", "der", "den",
               "y", "and", "&", "'s", "-", "el", "al", "di", "on", "upon", "for", "at"}
_NUMBER = re.compile(r"^\d[\d,.]*(?:st|nd|rd|th|s)?$")
_DAY = re.compile(r"^\d{1,2}(?:st|nd|rd|th)?$")
_YEAR = re.compile(r"^\d{3,4}$")


@dataclass(frozen=True)
class Span:
    """One candidate answer: its text, the rank of the cell it came from (0 = top) and its kind."""

    text: str
    rank: int
    kind: str


def normalise(text: str) -> str:
    """Lowercase, single-spaced: how spans are compared with each other (and with references)."""
    return " ".join(text.lower().split())


def value_spans(value: str) -> list[tuple[str, str]]:
    """``(text, kind)`` of a cell value: the whole value, then its pieces between separators."""
    value = " ".join(value.split())
    found = [(value, "cell")] if value else []
    parts = [p.strip() for p in _SEPARATORS.split(value)]
    found += [(p, "part") for p in parts if p and p != value and any(ch.isalnum() for ch in p)]
    return found


def _capitalised(word: str) -> bool:
    return word[:1].isupper() or (word[:1].isdigit() and not _NUMBER.match(word))


def _entities(words: Sequence[str]) -> list[str]:
    """Runs of capitalised words (connectors inside allowed), with a leading article dropped too."""
    runs: list[str] = []
    i = 0
    while i < len(words):
        if not _capitalised(words[i]):
            i += 1
            continue
        j = i + 1
        while j < len(words):
            if _capitalised(words[j]):
                j += 1
            elif words[j].lower() in _CONNECTORS and j + 1 < len(words) and _capitalised(words[j + 1]):
                j += 2
            else:
                break
        run = words[i:j]
        runs.append(" ".join(run))
        if len(run) > 1 and run[0].lower() in ENGLISH_STOP_WORDS:
            runs.append(" ".join(run[1:]))
        # "Sheffield , South Yorkshire , England": places joined by commas are one answer
        if j + 1 < len(words) and words[j] == "," and _capitalised(words[j + 1]):
            k = j + 1
            while k < len(words) and (_capitalised(words[k]) or (words[k] == "," and k + 1 < len(words)
                                                                 and _capitalised(words[k + 1]))):
                k += 1
            runs.append(" ".join(words[i:k]))
        i = j
    return runs


def _dates_and_numbers(words: Sequence[str]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for i, w in enumerate(words):
        low = w.lower()
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if low in MONTHS:
            if _DAY.match(nxt) and i + 3 < len(words) and words[i + 2] == "," and _YEAR.match(words[i + 3]):
                found.append((" ".join(words[i:i + 4]), "date"))  # November 6 , 1905
            if _YEAR.match(nxt):
                found.append((f"{w} {nxt}", "date"))  # November 1905
                if i > 0 and _DAY.match(words[i - 1]):
                    found.append((f"{words[i - 1]} {w} {nxt}", "date"))  # 6 November 1905
        if _NUMBER.match(w):
            found.append((w, "number"))
            if nxt.lower() in _SCALES or (nxt.isalpha() and nxt.lower() not in ENGLISH_STOP_WORDS):
                found.append((f"{w} {nxt}", "number"))  # 38 million, 52 years, 60 miles
    return found


def passage_spans(passage: str) -> list[tuple[str, str]]:
    """``(text, kind)`` of a linked page's text: dates, numbers, entities, then other content words."""
    words = passage.split()
    found = _dates_and_numbers(words)
    found += [(e, "entity") for e in _entities(words)]
    found += [(w, "word") for w in words if any(ch.isalpha() for ch in w) and w.lower() not in ENGLISH_STOP_WORDS]
    return found


def candidate_spans(cells: Iterable[tuple[str, Sequence[str]]], *, kinds: Sequence[str] = KINDS,
                    max_spans: int | None = None) -> list[Span]:
    """Candidates from ranked cells, best cell first: each cell is ``(value, [linked page texts])``.

    ``kinds`` keeps only those kinds (see the module docstring); ``max_spans`` cuts the list (rank order,
    so the top cell's spans are kept first). Deduplicated case-insensitively.
    """
    unknown = set(kinds) - set(KINDS)
    if unknown:
        raise ValueError(f"unknown span kinds {sorted(unknown)}; choose from {KINDS}")
    seen: set[str] = set()
    spans: list[Span] = []
    for rank, (value, passages) in enumerate(cells):
        found = value_spans(value)
        for passage in passages:
            found += passage_spans(passage)
        for text, kind in found:
            key = normalise(text)
            if kind in kinds and key and key not in seen:
                seen.add(key)
                spans.append(Span(text, rank, kind))
    return spans[:max_spans] if max_spans is not None else spans
