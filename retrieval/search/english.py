"""English function words and stems: the one stop-word list that every matcher of text starts from.

Each use declares what it adds or takes away beside itself: the response prompt keeps negations
(:mod:`retrieval.ctbls.prompts`), the planner adds the vocabulary of talking about a conversation
(:mod:`retrieval.memory.question_parts`), the trend topic adds the words of asking about change
(:mod:`retrieval.trends.question`).
"""

from __future__ import annotations

from retrieval.timex.lexicon import MONTHS as _MONTHS

# NLTK's English stop words (bm25s ships them as ``STOPWORDS_EN_PLUS``), and "could" and "would", which NLTK
# leaves out (it has "should", "can" and "will") and which every use here added.
ENGLISH_STOP_WORDS = frozenset(
    """
    a about above after again against ain all am an and any are aren aren't as at be because been before being
    below between both but by can could couldn couldn't d did didn didn't do does doesn doesn't doing don don't
    down during each few for from further had hadn hadn't has hasn hasn't have haven haven't having he her here
    hers herself him himself his how i if in into is isn isn't it it's its itself just ll m ma me mightn mightn't
    more most mustn mustn't my myself needn needn't no nor not now o of off on once only or other our ours
    ourselves out over own re s same shan shan't she she's should should've shouldn shouldn't so some such t than
    that that'll the their theirs them themselves then there these they this those through to too under until up
    ve very was wasn wasn't we were weren weren't what when where which while who whom why will with won won't
    would wouldn wouldn't y you you'd you'll you're you've your yours yourself yourselves
    """.split()
)

# Words of the list that negate: dropping them flips a fact ("is not in London").
NEGATIONS = frozenset({"no", "nor", "not"} | {w for w in ENGLISH_STOP_WORDS if w.endswith("n't")})

# Month names and their abbreviations, with their numbers: dates in answer spans (retrieval/ctbls/spans.py) and in
# table cells (retrieval/ctbls/cell_values.py); defined with the rest of time's words (retrieval/timex/lexicon.py).
MONTHS = _MONTHS

# Pieces of contractions as NLTK's tokenizer splits them ("don" of "don't", "ll" of "you'll"; "ma", "o" and
# "y" are on its list too): whitespace splitting never produces them, but a table cell's value may be one.
CONTRACTION_FRAGMENTS = frozenset(
    "ain aren couldn d didn doesn don hadn hasn haven isn ll m ma mightn mustn needn o re s shan shouldn t ve "
    "wasn weren won wouldn y".split()
)


def english_stemmer():
    """A new Snowball English stemmer (PyStemmer; one per user, since a stemmer object is not thread-safe).

    Raises ImportError when PyStemmer is not installed.
    """
    import Stemmer

    return Stemmer.Stemmer("english")
