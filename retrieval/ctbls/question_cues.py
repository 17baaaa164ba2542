"""The closed-class words of a question over a table that say where its answer lies, and the two small readings
built on them: a comparison with a number ("more than 21 losses") and the nouns a wh-word heads ("which date ...").

None of the lists is chosen from data: they are English function words and the adjectives of degree.
"""

from __future__ import annotations

import re

from retrieval.search.english import NEGATIONS

# Words that point back at an earlier answer ("which of those ...", "what about their ages?"): English anaphora.
POINTING_BACK = frozenset("those these them they their theirs that this it its he she his her him".split())
# Superlatives and comparatives by direction: the answer is then the largest or smallest of a column, or in the
# row that holds it, among the rows in play (the previous answer's, else the table's).
WANTS_MOST = frozenset("most highest largest biggest greatest longest oldest latest newest best maximum max more "
                       "higher larger bigger greater longer older later".split())
WANTS_LEAST = frozenset("least lowest smallest fewest shortest youngest earliest worst minimum min less fewer "
                        "lower smaller shorter younger earlier".split())
ORDER_WORDS = frozenset("first last top bottom final next previous".split())
# "more than 21", "over 50", "under 10": the words that open a comparison with a number, by direction.
ABOVE = frozenset("more greater higher larger bigger over above exceeding longer older".split())
BELOW = frozenset("less fewer lower smaller under below shorter younger".split())
# Negation ("which ones were not from spain?"): the stop list's negations and the prepositions of exclusion.
NEGATING = NEGATIONS | frozenset("without except excluding never none".split())
WH_WORDS = frozenset("which what who whom whose".split())
_WORD = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def question_words(question: str) -> list[str]:
    """The question's words, lower case, in order (numbers with their decimals kept whole)."""
    return _WORD.findall(question.lower())


def comparison(words: list[str]) -> tuple[float, bool] | None:
    """``(number, above)`` of the first comparison with a number within two words of its comparative ("more than
    21", "over 50"), ``above`` False for "less", "under", ...; None when the question has none."""
    for i, word in enumerate(words):
        if word in ABOVE or word in BELOW:
            for after in words[i + 1:i + 3]:
                if _NUMBER.fullmatch(after):
                    return float(after), word in ABOVE
    return None


def wh_heads(words: list[str]) -> list[str]:
    """The words right after a wh-word: "which date had ..." -> ["date"], "what team ..." -> ["team"]."""
    return [words[i + 1] for i, word in enumerate(words[:-1]) if word in WH_WORDS]
