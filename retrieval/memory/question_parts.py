"""Reading a question: the sentence that asks, the participants it names, and the content it asks about.

The planner reads a rank query and a speaker prior from these (:func:`content_query`, :func:`named_speaker`);
the trend analysis reads its topic and the speaker it counts with other settings
(:mod:`retrieval.trends.question`). Questions come normalised (:func:`~retrieval.memory.time_resolver.normalise`:
lower case, number words as digits).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from retrieval.memory.time_resolver import TimeExpression
from retrieval.search.english import ENGLISH_STOP_WORDS, english_stemmer

# Words that ask for "what was said" without naming what about, added to the English stop words: the
# vocabulary of talking about a conversation (verbs of saying and recalling, nouns for a conversation and its
# parts, politeness and acknowledgements). A question made only of these, time expressions and the speakers'
# names wants every row of its period, not a content ranking. Compared after stemming, so "discussed" = "discuss".
DISCOURSE_WORDS = """
able also anything back bit calendar catch chat content conversation cover curious day describe detail discuss
discussion else enjoy everything exactly far fine get give go great happen hear help kind know let like lot love
many may maybe meet meeting mention might mind much ok okay overview period please possible quite really recall
recap remember remind say see seem session share something sort speak stuff subject summarise summarize summary
sure talk tell thank thanks thing think time topic tri try update want week well whatever wonder wow yeah year
yep yes month
""".split()


def _generic_stems() -> frozenset[str]:
    # The words compared are runs of letters: the list's contractions ("don't") could never match.
    words = [w for w in ENGLISH_STOP_WORDS if "'" not in w] + DISCOURSE_WORDS
    return frozenset(english_stemmer().stemWords(words)) | frozenset(words)


GENERIC_STEMS = _generic_stems()

# A word, for the content test: a run of letters ("3rd" gives "rd"; a word is kept from two letters on).
LETTERS = r"[a-z]+"
# A word as a participant's name is written in a question, possessive included; group 1 is the name's word.
NAME_WORD = r"\b([a-z]+)(?:'s)?\b"


def question_sentence(norm: str) -> tuple[int, int]:
    """Span of the sentence that asks (the last one ending in '?', else the last sentence) of a normalised text."""
    bounds = [(m.start(), m.end()) for m in re.finditer(r"[^.!?]+[.!?]*", norm) if m.group(0).strip()]
    if not bounds:
        return 0, len(norm)
    asking = [b for b in bounds if norm[b[0]:b[1]].rstrip().endswith("?")]
    return (asking or bounds)[-1]


def name_words(speaker: str) -> list[str]:
    """The lower-case words of a participant's name that a question may use for them ("Ann Lee": ann, lee)."""
    return [w for w in re.findall(r"[a-z]+", speaker.lower()) if len(w) > 1]


def blank_spans(norm: str, spans: Iterable[tuple[int, int]], start: int = 0, end: int | None = None) -> str:
    """``norm[start:end]`` with the characters of ``spans`` (positions in ``norm``: time expressions) as spaces,
    so that the words either side stay apart and the other positions keep their place."""
    end = len(norm) if end is None else end
    chars = list(norm[start:end])
    for a, b in spans:
        for i in range(max(a, start), min(b, end)):
            chars[i - start] = " "
    return "".join(chars)


def speaker_mentions(text: str, speakers: Sequence[str], *, whole_name: bool = False,
                     then: str = "") -> list[tuple[int, int, str]]:
    """Where ``text`` first names each participant: ``(start, end, speaker)``, in the order of ``speakers``.

    A participant is named by any word of their name (:func:`name_words`) or, with ``whole_name``, by the whole
    name as given ("new york times"; a name under two characters, as of documents without a source, never is).
    ``then``: a pattern the name must be followed by (e.g. a verb of saying); ``end`` is then where it ends.
    """
    found = []
    for speaker in speakers:
        if whole_name:
            pattern = rf"\b{re.escape(speaker.strip().lower())}" if len(speaker.strip()) >= 2 else None
        else:
            words = name_words(speaker)
            pattern = r"\b(?:" + "|".join(map(re.escape, words)) + r")\b" if words else None
        m = re.search(pattern + then, text) if pattern else None
        if m:
            found.append((m.start(), m.end(), speaker))
    return found


def named_speaker(norm: str, speakers: Sequence[str]) -> str | None:
    """The participant the asking sentence is about, else None: the one it names ("what did John say about
    ..."), or, when it names both, the first unless the two are joined as one subject ("what did John tell
    Maria", but not "what did John and Maria discuss").

    Questions that name a participant are mostly about what that participant said; the content ranking
    gives their rows a small prior (not a filter: the answer may be the other side's reply). Of LoCoMo's
    evidence questions that name both participants apart, 53 of 64 have their evidence in the first one's
    turns (5 in the second's, 6 in both's); on the 638 single-evidence questions of the seven held-out
    conversations (README section 4) the rule moved top-1 from 66.8 to 67.2 and F2 at the default cut from
    67.1 to 67.8 (recall 93.4 to 93.3).
    """
    start, end = question_sentence(norm)
    sentence = norm[start:end]
    found = speaker_mentions(sentence, speakers)
    if len(found) == 1:
        return found[0][2]
    if len(found) != 2:
        return None
    (_, first_end, first), (second_start, _, _) = sorted(found)
    joined = re.fullmatch(r"(?:'s)?\s*(?:,|and|&|or)\s*", sentence[first_end:second_start])
    return None if joined else first


def question_content(text: str, speakers: Sequence[str] = (), *, generic: frozenset[str], stem: bool = False,
                     word: str = LETTERS, name: str = NAME_WORD) -> tuple[str, list[str]]:
    """A question's text (time expressions already blanked) without the participants' names -> that text,
    tidied, and its content words: the ``word`` matches of two or more characters not in ``generic``.

    ``stem``: compare English stems with ``generic`` (a set of words and their stems); ``name``: a pattern whose
    group 1 is a word that, when it is a word of a participant's name, goes with the whole match.
    """
    names = {w for s in speakers for w in name_words(s)}
    if names:
        text = re.sub(name, lambda m: " " if m.group(1) in names else m.group(0), text)
    text = re.sub(r"\s+([?.!,])", r"\1", re.sub(r"\s+", " ", text)).strip(" ,;:")
    words = [w for w in re.findall(word, text) if len(w) > 1]
    keys = english_stemmer().stemWords(words) if stem else words
    return text, [w for w, k in zip(words, keys) if k not in generic]


def content_query(norm: str, expressions: Sequence[TimeExpression], speakers: Sequence[str] = ()) -> str | None:
    """The asking sentence without its time expressions and the participants' names, or None when it names
    no content.

    The names go because both sides address each other by name ("Wow, Melanie! ..."): a name in the query
    pulls the other speaker's replies up. Who said it is the rank op's speaker prior instead
    (:func:`named_speaker`). Measured on LoCoMo's single-hop and multi-hop questions, ranked within their
    evidence days: top-1 0.552 -> 0.596, top-3 0.817 -> 0.846.
    """
    start, end = question_sentence(norm)
    text = blank_spans(norm, [e.span for e in expressions], start, end)
    text, content = question_content(text, speakers, generic=GENERIC_STEMS, stem=True)
    return text if content else None
