"""The grammar's rules, by concept: dates in digits (:mod:`.numeric`); dates in words and calendar periods
(:mod:`.dates`); lengths of time (:mod:`.durations`); counts from now and parts of periods (:mod:`.relative`); times
of the day (:mod:`.clock`); ranges and bounds (:mod:`.ranges`); a log's own sessions and messages (:mod:`.sessions`).
:data:`GRAMMAR` holds them all."""

from __future__ import annotations

from retrieval.timex.grammar import Grammar
from retrieval.timex.rules import clock, dates, durations, numeric, ranges, relative, sessions

GRAMMAR = Grammar()
for module in (numeric, dates, durations, relative, clock, ranges, sessions):
    GRAMMAR.extend(module.G)
