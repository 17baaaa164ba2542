"""A light check that a question is English, the one language the time grammar reads.

A question in another language is still searched: its words are ranked against the memory as they are. But its
time words ("martes", "la semaine dernière") are not read, so the rows it gets are not restricted in time. The
answer then says so on its first line, instead of answering as if the question had named no time. Two signs are
checked:

- **Another language's function words, and no English one.** The grammar read no time in the question; none of
  its words is an English function word (:data:`~retrieval.search.english.ENGLISH_STOP_WORDS`: "what", "did",
  "we", "the", "on"), and one is a function word of one of those languages ("los", "qué", "nous", "wir", "che",
  "het"). A terse English question without function words ("vet appointment costs recap") is not flagged.
- **A foreign calendar name.** A weekday or month named in Spanish, French, German, Italian, Portuguese or Dutch.
  Only names that are not also English words are listed.
"""

from __future__ import annotations

import re

from retrieval.search.english import ENGLISH_STOP_WORDS

WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
# Weekdays and months, by language, leaving out those that are also English words or common names (mayo, mars,
# domingo, marco, august).
FOREIGN_CALENDAR = {
    "Spanish": "lunes martes miércoles miercoles jueves viernes sábado sabado enero febrero marzo abril junio julio "
               "agosto septiembre setiembre octubre noviembre diciembre",
    "French": "lundi mardi mercredi jeudi vendredi samedi dimanche janvier février fevrier avril juin juillet août "
              "aout septembre octobre novembre décembre decembre",
    "German": "montag dienstag mittwoch donnerstag freitag samstag sonnabend sonntag januar februar märz maerz "
              "juni juli oktober dezember",
    "Italian": "lunedì lunedi martedì martedi mercoledì mercoledi giovedì giovedi venerdì venerdi sabato domenica "
               "gennaio febbraio aprile maggio giugno luglio settembre ottobre dicembre",
    "Portuguese": "terça terca janeiro fevereiro março maio junho julho setembro outubro novembro dezembro",
    "Dutch": "maandag dinsdag woensdag donderdag vrijdag zaterdag zondag januari februari maart mei augustus",
}
CALENDAR_LANGUAGE = {w: lang for lang, words in FOREIGN_CALENDAR.items() for w in words.split()}
# Function words of the same languages that English does not use (its own, such as "die" or "was", left out).
FOREIGN_FUNCTION_WORDS = frozenset("""
    qué que los las el la del sobre cuándo cuando dónde donde dijimos hablamos por para con una unos nosotros
    le les des du est qu'on qu'est quand avec pour sur nous vous avons dit était
    der das und wir haben wann wo mit über ist nicht ich du sie haben hat
    il che di della delle quando abbiamo detto sono
    os do da dos das quando nós falamos disse
    het een wat wanneer hebben wij zijn
""".split()) - ENGLISH_STOP_WORDS


def language_note(question: str, read_a_time: bool = False) -> str | None:
    """A note when ``question`` does not look English, naming what was not read; None when it does.
    ``read_a_time``: the time grammar read a time expression in it (then only a foreign calendar name flags it)."""
    words = [w.lower() for w in WORD.findall(question)]
    foreign = [(w, CALENDAR_LANGUAGE[w]) for w in words if w in CALENDAR_LANGUAGE]
    long_words = [w for w in words if len(w) > 1]
    other_language = not read_a_time and any(w in FOREIGN_FUNCTION_WORDS for w in long_words) and not any(
        w in ENGLISH_STOP_WORDS for w in long_words)
    if not foreign and not other_language:
        return None
    named = ", ".join(f"{w!r} ({lang})" for w, lang in dict(foreign).items())
    what = f"it names {named}, which" if foreign else "its time words, if any,"
    return (f"not read as English: {what} the time grammar does not read (it reads English only); the rows are "
            "ranked by the question's words over the whole memory, with no time restriction")
