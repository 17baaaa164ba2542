"""The ``support`` evidence rule: a when-question answered by the reading its likeliest evidence rows hold most.

The relevance model gives each ranked row the probability that it is evidence for the question
(:data:`PROBABILITY`). Answering from the best row alone trusts one row; when several rows tell the same event
("ok bed, race in the morning", "one last easy run before tomorrow's race") they outweigh one likelier row's other
day ("race on Sunday: 52:40!!", said on a Thursday and read as the Sunday to come). Answer aggregation of this kind
(summing the scores of the passages that give the same answer) is what open-domain QA readers do over retrieved
passages; here an answer is an interval, and a row holds every reading its own interval contains.

    picked, reading, rival = supported(kind, rows, first_reading, read)   # rows best first, with PROBABILITY

Rows that disagree are said, not only outvoted: the likeliest other row whose own stated time lies apart from the
answer's, when the model gives it :data:`LIKELY` or more (more likely evidence than not), comes back as the answer's
rival ("we adopted her a fortnight ago" beside a likelier "noodle ate one of sams sneakers this morning"), for a
warning that names both (:func:`~retrieval.memory.relevance.confidence.rival_note`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, time

import pandas as pd

from retrieval.memory.event_time import EventTime
from retrieval.timex import calendar as cal
from retrieval.timex.placed import OPEN_START
from retrieval.timex.rules.holidays import weekend_of

# The column a second stage's rows carry their probability of being evidence in (retrieval.memory.relevance.confidence)
PROBABILITY = "evidence_p"
LIKELY = 0.5  # a row the model gives this or more is more likely evidence than not (not tuned: the even line)
SUPPORT_DEPTH = 5  # the ranked rows whose readings vote (chosen before any run: the rows a reader would look at)
Reading = tuple[pd.Series, EventTime, str, list[str]]  # (the row read, its time, the source, the derivation)
Rival = tuple[Reading, float]  # another row's reading that disagrees with the answer, and that row's probability


def row_probability(row: pd.Series | None) -> float | None:
    """The relevance model's probability that ``row`` is evidence (its :data:`PROBABILITY`), or None without one."""
    p = None if row is None else row.get(PROBABILITY)
    return None if p is None or pd.isna(p) else float(p)


def answer_span(kind: str, t: EventTime) -> tuple[datetime, datetime]:
    """The interval a reading answers a ``kind`` question with: its month or year for "which month / year", the
    weekend that holds a day for "which weekend" (:func:`~retrieval.timex.rules.holidays.weekend_of`: a Friday or a
    Monday's long weekend)."""
    if kind == "weekend" and t.granularity == "day":
        first, after = weekend_of(t.start.date())
        zone = t.start.tzinfo
        return (datetime.combine(first, time(), tzinfo=zone), datetime.combine(after, time(), tzinfo=zone))
    if kind == "month" and t.granularity in ("day", "week", "weekend"):
        return cal.unit(t.start, "month")
    if kind == "year" and t.granularity not in ("year", "fuzzy"):
        return cal.unit(t.start, "year")
    return t.start, t.end


def supported(kind: str, rows: pd.DataFrame, first: Reading, read: Callable[[pd.Series], Reading],
              depth: int = SUPPORT_DEPTH, likely: float = LIKELY) -> tuple[pd.Series, Reading, Rival | None]:
    """The ``support`` rule: of the first ``depth`` rows' readings (``first`` the best row's; ``read`` gives the
    others'), the one the most evidence holds: (the row it came from, its reading). A reading's support is the sum
    of the relevance model's probabilities (:data:`PROBABILITY`) of the rows whose reading contains it (itself
    included; an open range, "before Friday", holds no other): a day that two rows name outweighs a likelier row's
    other day, and a day inside a vaguer row's span ("mid-April") is held by that row too. A reading vaguer
    (longer) than the best row's never replaces it, and ties go to the better-ranked row, so readings that nothing
    else holds answer as ``top`` does. For "which month / year" a reading is its month or year
    (:func:`answer_span`). The answer keeps its own row's probability, so agreement never silences the
    weak-evidence warning. The third item is the rival (:func:`rival`), or None."""
    readings = [(rows.iloc[0], first)] + [(r, read(r)) for _, r in rows.iloc[1:depth].iterrows()]
    spans = [answer_span(kind, rd[1]) for _, rd in readings]
    probability = [row_probability(r) or 0.0 for r, _ in readings]

    def holds(j: int, i: int) -> bool:  # row j's reading contains row i's
        (js, je), (s, e) = spans[j], spans[i]
        return js <= s and e <= je and (js.year > OPEN_START.year or (js, je) == (s, e))

    held = [sum(p for j, p in enumerate(probability) if holds(j, i)) for i in range(len(readings))]
    lengths = [rd[1].end - rd[1].start for _, rd in readings]  # a vaguer reading never replaces the best row's
    best = max((i for i in range(len(readings)) if lengths[i] <= lengths[0]), key=lambda i: (held[i], -i))
    picked, reading = readings[best]
    if best != 0:
        row, t, source, how = reading
        holders = [str(readings[j][0].name) for j in range(len(readings)) if holds(j, best)]
        how = [f"evidence rule 'support': row {picked.name}, ranked {best + 1} of {len(rows)}, gives the reading "
               f"rows {', '.join(holders)} hold (evidence probability {held[best]:.2f} in all, against "
               f"{held[0]:.2f} for the best-ranked row's)"] + how
        reading = (row, t, source, how)
    return picked, reading, rival(readings, spans, probability, best, likely)


def rival(readings: list[tuple[pd.Series, Reading]], spans: list[tuple[datetime, datetime]], probability: list[float],
          best: int, likely: float = LIKELY) -> Rival | None:
    """(the reading, the probability) of the likeliest row other than ``best`` that the model gives ``likely`` or
    more, that states a time of its own (a row read by its timestamp's day says nothing of when the event was), and
    whose span lies wholly apart from the answer's; None when there is none."""
    (s, e), own = spans[best], readings[best][1][0].name
    apart = [i for i, (_, rd) in enumerate(readings) if i != best and probability[i] >= likely
             and rd[2] != "timestamp" and rd[0].name != own and (spans[i][1] <= s or spans[i][0] >= e)]
    if not apart:
        return None
    i = max(apart, key=lambda i: (probability[i], -i))
    return readings[i][1], probability[i]
