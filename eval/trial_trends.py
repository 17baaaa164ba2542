"""The user trial's trend questions: "how much did we talk about X, week by week?" asked of a memory's table by the
trend analysis (:func:`~retrieval.trends.analysis.analyse_trend`, as the service's and the web page's Trends do)
and scored against the turns a person marked as being about the topic.

A key ``{"expect": "counts", "period": "week" | "session", "turns": [ids]}`` names every turn about the topic (small
talk and other topics that share its words left out); its counts per period are those turns grouped by the table's
own period column, and they are compared with the analysis's own counts per period (rounded: a sum of
probabilities is an expected count), or, when it read another period from the question, with its counted documents
grouped by the key's period. A period's count is **within** when it is within :data:`WITHIN` (15 %) of the key's
(exactly 0 where the key has none); the periods scored are those where either side counts something. Verdicts
(fixed before the first run): *right* when every period is within, *partly* when at least half of the key's
periods are, *wrong* otherwise. A trend answer's warnings (:attr:`~retrieval.trends.result.TrendResult.warnings`:
documents it could not count, a question not read as English, a window start read from weak evidence) are what
tells a wrong one from one wrong without saying so; its counts carry none of their own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from retrieval.trends.analysis import TrendConfig, analyse_trend
from retrieval.trends.corpus import Corpus
from retrieval.trends.periods import PERIOD_COLUMN
from retrieval.trends.relevance import THRESHOLD_METHODS

WITHIN = 0.15  # the "within 15 % per period"
# the thresholds a trial can ask for without more input (a reference corpus, labels or a value)
TREND_THRESHOLDS = tuple(m for m in THRESHOLD_METHODS if m in ("auto", "mixture", "null", "relevance", "turns"))


def within(key: float, counted: float) -> bool:
    return counted == 0 if key == 0 else abs(counted - key) <= WITHIN * key


def ask_trend(memory, q: dict, threshold: str = "auto"):
    """The trend analysis of ``q["question"]`` over ``memory``'s table, at the question's ``now``."""
    config = TrendConfig(now=q.get("now"), threshold=threshold)
    return analyse_trend(Corpus(memory.table, path="trial"), q["question"], config)


def counts_verdict(key: dict, result, positions: Mapping[str, int], frame) -> tuple[str, dict]:
    """(right / partly / wrong, what was compared) for a trend ``result`` against a counts ``key``: ``positions``
    maps the chat's turn ids to the table's rows, ``frame`` is the table's frame (its period columns)."""
    column = PERIOD_COLUMN[key["period"]]
    wanted = {positions[t] for t in key["turns"]}
    counted = result.counted_ids()
    truth = Counter(str(frame.at[i, column]) for i in wanted)
    if result.period == key["period"]:  # the analysis's own counts (an expected count, for a sum of probabilities)
        got = Counter({str(p.period): round(p.n_relevant) for p in result.periods if round(p.n_relevant)})
    else:  # read in another period: its counted documents, grouped by the key's
        got = Counter(str(frame.at[i, column]) for i in counted)
    periods = sorted(set(truth) | set(got))
    held = [p for p in periods if truth[p]]
    ok = {p: within(truth[p], got[p]) for p in periods}
    if all(ok.values()):
        v = "right"
    else:
        v = "partly" if held and sum(ok[p] for p in held) >= len(held) / 2 else "wrong"
    hit = len(wanted & counted)
    seen = {"topic": result.topic, "period_read": result.period,
            "counts": {p: [truth[p], got[p]] for p in periods},
            "periods_within": round(100 * sum(ok.values()) / len(periods), 1) if periods else 100.0,
            "key_turns": len(wanted), "counted": len(counted), "counted_not_key": len(counted - wanted),
            "recall": round(hit / len(wanted), 3) if wanted else None,
            "precision": round(hit / len(counted), 3) if counted else None}
    return v, seen
