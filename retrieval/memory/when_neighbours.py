"""The time of an event told over several turns: a turn that states none borrows one from a neighbour that does.

People tell an event across turns: "I took my family camping in the mountains last week!" - "How was it?" -
"It was an awesome time! We explored nature, roasted marshmallows ...". The turn that best matches "When did
Melanie go camping?" may be the third, which states no time; the first, two turns back in the same session,
says when. So when the row a when-answer comes from states no event time, the answer looks at the utterances
around it in its own session:

the nearest one within :data:`NEIGHBOUR_WINDOW` turns that states an event time and shares a content word (an
English stem, not a stop word nor a word of asking, :data:`~retrieval.memory.question_parts.GENERIC_STEMS`, nor a
participant's name) with the question; else none, and the answer stays the row's own timestamp. A neighbour that
shares no word is not taken, however near: such a reply's time is as often about something else (on the dev
conversations, taking the nearest stated turn within two whatever its words cost conv-30 a question for each it
gained elsewhere).

A turn that refers back to its time ("that day", "that night": :func:`referred_neighbour`) takes the nearest earlier
turn within the window that states one, whatever its words: the reference itself says which turn it follows.

The window was chosen on LoCoMo's dev conversations (conv-26, 30, 41; ``eval.locomo_answers``, README); ties go
to the earlier turn (what a reply follows up on comes before it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pandas as pd

from retrieval.memory.event_time import mention_events
from retrieval.memory.question_parts import GENERIC_STEMS, LETTERS, name_words
from retrieval.search.english import english_stemmer
from retrieval.timex.values import Anaphor

NEIGHBOUR_WINDOW = 4  # turns either side searched for a stated neighbour that shares a word with the question


# Sentence adverbs that say how the speaker sees an event, not what it is; left out before stemming, since their
# stems are content words' ("finally": "final", as in "the grand final")
SENTENCE_ADVERBS = frozenset("""finally actually eventually already originally really basically literally honestly
apparently just still ever anyway""".split())


def content_stems(text: str, names: Iterable[str] = ()) -> set[str]:
    """The English stems of ``text``'s content words: words of two letters or more, less stop words, words of
    asking (:data:`~retrieval.memory.question_parts.GENERIC_STEMS`), sentence adverbs (:data:`SENTENCE_ADVERBS`)
    and the words of the participants ``names``."""
    skip = {w for n in names for w in name_words(n)} | SENTENCE_ADVERBS
    words = [w for w in re.findall(LETTERS, str(text).lower()) if len(w) > 1 and w not in skip]
    return {s for s in english_stemmer().stemWords(words) if s not in GENERIC_STEMS}


def participant_names(frame: pd.DataFrame) -> list[str]:
    """The names of the participants of ``frame``'s rows (what :func:`content_stems` leaves out)."""
    return [str(s) for s in frame["speaker"].unique()]


def session_neighbours(frame: pd.DataFrame, row: pd.Series, window: int) -> list[tuple[int, pd.Series]]:
    """The utterances of ``row``'s session within ``window`` turns of it, nearest first (the earlier of two at the
    same distance first), each with its signed distance in turns."""
    pos = frame.index.get_loc(row.name)
    out = []
    for d in range(1, window + 1):
        for p in (pos - d, pos + d):
            if 0 <= p < len(frame) and frame["session"].iloc[p] == row["session"]:
                out.append((p - pos, frame.iloc[p]))
    return out


def refers_back(row: pd.Series) -> bool:
    """Whether ``row`` names its time by referring back to one named before it ("that day", "that night", "the same
    week"; not "then", which as often only orders what happened)."""
    _, mentions = mention_events(str(row["text"]), row["timestamp"].to_pydatetime())
    return any(isinstance(m.value, Anaphor) and m.value.refers != "then" for m, _ in mentions)


def referred_neighbour(frame: pd.DataFrame, row: pd.Series, window: int = NEIGHBOUR_WINDOW
                       ) -> tuple[pd.Series, int] | None:
    """The turn a row that refers back (:func:`refers_back`) refers to: the nearest earlier turn of its session, within
    ``window`` turns, that states an event time ("sunday the 30th." ... "i'm bringing mam to howth for lunch that
    day"), whatever its words; ``(that turn, its signed distance)``, or None."""
    if row.name not in frame.index:
        return None
    return next(((n, d) for d, n in session_neighbours(frame, row, window)
                 if d < 0 and pd.notna(n.get("event_start"))), None)


def stated_neighbour(frame: pd.DataFrame, row: pd.Series, question: str, window: int = NEIGHBOUR_WINDOW
                     ) -> tuple[pd.Series, int, set[str]] | None:
    """The neighbour of ``row`` (in ``frame``, the whole table) whose event time answers for it (see the module):
    ``(neighbour, signed distance in turns, the content stems it shares with question)``, or None."""
    if window < 0:
        raise ValueError(f"the neighbour window must be at least 0 turns, got {window}")
    if row.name not in frame.index:
        return None
    names = participant_names(frame)
    asked = content_stems(question, names)
    for d, n in session_neighbours(frame, row, window):
        if pd.notna(n.get("event_start")):
            common = asked & content_stems(n["text"], names)
            if common:
                return n, d, common
    return None
