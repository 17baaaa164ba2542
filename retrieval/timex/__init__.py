"""Time expressions: text + a reference time + context -> intervals, each with its grain and the readings chosen.

A small grammar of composable parts (:mod:`retrieval.timex.rules`): atoms (numbers in digits and words, ordinals,
units, weekdays, months, holidays, seasons, quarters, parts of the day, clock times, numeric dates, "now", a log's
sessions) and operators that combine them (shift by a duration, this / next / last, the n-th and the last, before /
after / since / until, from ... to and between, the week / weekend of, the parts of a period). Values
(:mod:`retrieval.timex.values`) know nothing of "now"; a :class:`~retrieval.timex.context.Context` places them
(:mod:`retrieval.timex.resolve`), leaning to the past or the future as the sentence's tense says
(:mod:`retrieval.timex.tense`) and by the conventions it names. It imports nothing of the rest of the project.

    from retrieval.timex import Context, read, resolve_phrase
    resolve_phrase("next Friday", datetime(2019, 1, 31, tzinfo=timezone.utc)).interval
    read("We adopted the cat two weeks ago; the vet is on the 14th.", Context(now)).mentions
"""

from __future__ import annotations

from retrieval.timex.context import DEFAULT, PRESETS, QUESTION, UTTERANCE, Context, Conventions
from retrieval.timex.reader import Mention, Reading, normalise, read, resolve_phrase
from retrieval.timex.resolve import Choice

__all__ = ["DEFAULT", "PRESETS", "QUESTION", "UTTERANCE", "Choice", "Context", "Conventions", "Mention", "Reading",
           "normalise", "read", "resolve_phrase"]
