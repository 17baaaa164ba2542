"""Which way a sentence leans in time around a phrase, read from its words: the past ("we met on Friday", "said
Friday"), the future ("the dentist is on the 14th", "I'll go back Friday", "agreed to buy it in January"), or
neither.

A time phrase without its year or week ("Friday", "December", "the 14th") is read on the side the sentence leans to
(:mod:`retrieval.timex.resolve`). Each cue in the phrase's clause scores its strength divided by one plus its
distance in words (halved after the phrase: a verb mostly comes before its time); the best cue decides, and cues too
weak or too far leave no lean (the nearer of the last and the next one is then read). Strengths, strongest first:

- a modal or auxiliary: "will", "'ll", "shall", "going to", "would" (future); "was", "were", "did", "had" (past);
  "was going to" is a plan as it stood then: its "was" decides (past);
- an infinitive ("to expire", "to acquire"; not the preposition of "went to Vermont", "in response to Melanie") or a
  plan ("plan to", "expect", "scheduled", "booked for", "pushed to",
  "looking forward", "signed up for", "tickets for"): future;
- an irregular past form ("said", "went", "told"): past;
- a present tense that states a plan with a time after it ("the wedding is on the 2nd", "I start on Monday"):
  future;
- a word in "-ed" (past), weakest: it is as often an adjective ("preferred shares") or a participle after a form of
  "be" ("will be named", "to be completed"), and then it is no cue at all.
"""

from __future__ import annotations

import re

STRENGTH = {"modal": 3.0, "auxiliary": 3.0, "plan": 2.0, "infinitive": 2.0, "irregular": 2.0, "present": 1.5,
            "ed": 1.0}
MIN_SCORE = 0.25  # below this, no lean: a weak cue far from the phrase says little about it

MODAL_FUTURE = re.compile(r"\b(?:will|'ll|shall|gonna|going\s+to|would|wo\s*n't|won't)\b")
PAST_OF_FUTURE = re.compile(r"\b(?:was|were)\s+(?:not\s+|n't\s+)?$")  # before "going to" / "gonna"
AUX_PAST = re.compile(r"\b(?:was|were|did|had|didn't|wasn't|weren't|hadn't)\b")
PLAN = re.compile(r"\b(?:plan(?:s|ning)?\s+to|planned\s+for|intend(?:s|ed)?\s+to|scheduled|due|upcoming|expects?|"
                  r"(?:re-?)?booked|re-?scheduled|postponed|(?:pushed|put)\s+(?:back\s+)?to|(?:moved|bumped)\s+to|"
                  r"expected\s+to|hope\s+to|looking\s+forward|can't\s+wait|remind\s+me|let's|about\s+to|"
                  r"(?:signed|signing|sign)\s+up\s+for|registered\s+for|tickets?\s+for|"
                  r"tomorrow|next)\b")
_TIME_WORDS = (r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|mon|tue|wed|thu|fri|sat|sun|today|tomorrow|now|"
               r"date|this|next|last|the|a|an|his|her|their|its|our|my|your|be|\d)")
INFINITIVE = re.compile(rf"\bto\s+(?!{_TIME_WORDS})[a-z]+\b")
# "to" after a verb of going or a direction is a preposition ("we went to Vermont", "flew back to London", "on our
# way to the station"), not an infinitive's
TO_PLACE = re.compile(r"\b(?:go|goes|going|gone|went|come|comes|coming|came|move[sd]?|moving|fl(?:y|ies|ew|own)|"
                      r"drive|drove|driven|driving|travel(?:l?ed|l?ing|s)?|walk(?:ed|ing|s)?|run|ran|head(?:ed|ing|s)?|"
                      r"return(?:ed|ing|s)?|back|out|up|down|over|away|home|trip|way|ride|rode)\s+$")
# "to" after a word that takes it as a preposition ("in response to Melanie", "according to", "talked to her", "thanks
# to", "next to") is no infinitive either
TO_OBJECT = re.compile(r"\b(?:response|according|due|thanks|next|close|similar|related|compared|prior|addition|"
                       r"talk(?:s|ed|ing)?|spoke|speak(?:s|ing)?|said|say(?:s|ing)?|listen(?:s|ed|ing)?|repl(?:y|ied)|"
                       r"respond(?:s|ed|ing)?|wr(?:ite|ote)|sen[dt]|gave|give|show(?:s|ed)?|explain(?:s|ed)?|"
                       r"introduc(?:e|ed|ing)|belong(?:s|ed)?|happen(?:s|ed)?)\s+$")
IRREGULAR_PAST = frozenset("""said told went came saw took got made gave found thought left met began ran wrote bought
brought sold fell felt kept lost paid sent spent won knew grew threw drew flew drove rode spoke broke chose froze stole
woke wore tore swore heard held stood understood built lent meant sat shut led fled slept swept wept crept dealt taught
caught fought sought became forgave forgot ate drank sang rang swam sank shrank spun hung struck stuck dug""".split())
BE = frozenset("be is are am was were been being 's 're 'm".split())
GET = frozenset("get gets".split())  # a get-passive's auxiliary: "the sink gets hooked up tuesday"
# the present that states a plan: "be" and "have", the verbs of a timetable ("she lands on the 25th", "the plumber
# comes on the 14th", "we fly out saturday") and a get-passive ("the sink gets hooked up tuesday", "I get paid friday")
PRESENT = re.compile(r"\b(?:is|are|am|'s|'re|'m|have|has|starts?|begins?|leaves?|arrives?|opens?|closes?|ends?|"
                     r"meets?|flies|fly|lands?|departs?|returns?|comes?|gets\s+in|finish(?:es)?|"
                     rf"gets?\s+(?:[a-z]+ed|{'|'.join(sorted(IRREGULAR_PAST))}))\b(?:\s+\w+ing)?")
# a full stop ends a clause unless it ends an abbreviation ("U.S.", "Mr.", "Inc.")
CLAUSE = re.compile(r"[;:!?]|,\s+(?:but|and|so|while|when|because|although|which|who)\b|"
                    # a comma before a subject starts a clause of its own ("the removalists rang, they're moving us")
                    r",\s+(?=(?:i|we|you|he|she|they|i'?m|we'?re|they'?re|you'?re|i'?ve|we'?ve|they'?ve|he'?s|"
                    r"she'?s)\s)|"
                    r"(?<!\b[a-z])(?<!\bmr)(?<!\bms)(?<!\bdr)(?<!\bst)(?<!\bmrs)(?<!\bvs)(?<!\binc)(?<!\bco)"
                    r"(?<!\bcorp)(?<!\bjr)(?<!\bno)\.\s")
WORD = re.compile(r"[a-z']+")


def clause(sentence: str, span: tuple[int, int]) -> tuple[int, int]:
    """The bounds of the clause of ``sentence`` that holds ``span``."""
    start, end = 0, len(sentence)
    for m in CLAUSE.finditer(sentence):
        if m.end() <= span[0]:
            start = m.end()
        elif m.start() >= span[1]:
            end = m.start()
            break
    return start, end


def cues(text: str, lo: int, hi: int, span: tuple[int, int]) -> list[tuple[int, int, str, str, str]]:
    """(start, end, lean, kind, words) of every tense cue in ``text[lo:hi]`` outside ``span``."""
    out = []

    def add(m: re.Match, lean: str, kind: str) -> None:
        if not (span[0] <= m.start() < span[1]) and m.start() >= lo and m.end() <= hi:
            out.append((m.start(), m.end(), lean, kind, m.group(0)))

    for m in MODAL_FUTURE.finditer(text):
        if not PAST_OF_FUTURE.search(text, 0, m.start()):  # "was going to": a plan as it stood then, no future
            add(m, "future", "modal")
    for m in AUX_PAST.finditer(text):
        add(m, "past", "auxiliary")
    for m in PLAN.finditer(text):
        add(m, "future", "plan")
    for m in INFINITIVE.finditer(text, lo, span[0]):  # one after the phrase is a purpose, not its tense
        if not (TO_PLACE.search(text, max(0, m.start() - 12), m.start())
                or TO_OBJECT.search(text, max(0, m.start() - 14), m.start())):
            add(m, "future", "infinitive")
    for m in PRESENT.finditer(text, lo, span[0]):
        if not re.search(r"[,.]", text[m.end():span[0]]):
            add(m, "future", "present")
    words = list(WORD.finditer(text))
    for i, m in enumerate(words):
        w = m.group(0)
        previous = words[i - 1].group(0) if i else ""
        if w in IRREGULAR_PAST and previous not in GET:  # "gets paid": a participle, no past
            add(m, "past", "irregular")
        elif w.endswith("ed") and len(w) > 4 and previous not in BE | GET:
            add(m, "past", "ed")
    return out


def lean_of(sentence: str, span: tuple[int, int] | None = None) -> tuple[str | None, str]:
    """("past" | "future" | None, the cue that decided) for the phrase at ``span`` of ``sentence`` (lower case);
    without a span, for the end of the sentence."""
    lean, words, kind = lean_cue(sentence, span)
    return (lean, f"{words!r} ({kind})") if lean is not None else (None, "no tense cue near the phrase")


def lean_cue(sentence: str, span: tuple[int, int] | None = None) -> tuple[str | None, str, str]:
    """:func:`lean_of` with its deciding cue apart: (lean, the cue's words, its kind), or (None, "", "")."""
    text = sentence.lower()
    span = span or (len(text), len(text))
    lo, hi = clause(text, span)
    best: tuple[float, str, str, str] | None = None
    for a, b, lean, kind, words in cues(text, lo, hi, span):
        between = text[b:span[0]] if b <= span[0] else text[span[1]:a]
        distance = len(WORD.findall(between))
        score = STRENGTH[kind] / (1 + distance) / (2 if a >= span[1] else 1)  # a verb mostly comes before its time
        if best is None or score > best[0]:
            best = (score, lean, words, kind)
    if best is None or best[0] < MIN_SCORE:
        return None, "", ""
    return best[1], best[2], best[3]
