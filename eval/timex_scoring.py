"""How a resolved time expression is scored against the interval it denotes (the timex suites' convention,
``../shared/data/timex/SOURCE.md``). Pure functions of datetimes: no model, no data file.

- **strict**: the predicted ``[start, end)`` equals the expected one (or one of its ``alternatives``); a clock time
  returned as a point (start == end) counts where the expected grain is hour, minute or second and the point is
  the expected start;
- **named end** (Recognizers' ranges only: a case id starting ``recognizers`` and a grain starting ``span``):
  "from 4 to 22" ends at the start of the 22nd, and SOURCE.md accepts the named end day too. A prediction with the
  expected start whose end is the expected end moved on by one whole day, month or year also counts as strict,
  each only where the expected end is aligned to that unit (midnight; midnight on the 1st; midnight on 1 January).
  Such hits are counted apart (``named_end_hits``) so the figure shows how much the clause adds;
- **lenient**: the prediction overlaps the expected interval; a point lies inside it (start inclusive, end
  exclusive); a zero-length expected interval lies inside the prediction the same way;
- **coverage**: the resolver returned an interval at all; **precision**: strict hits over covered cases.

A prediction whose end comes before its start is covered but neither strict nor lenient. Datetimes are compared
as instants (they must be time-zone aware); an impossible expected date ("Feb 30", written ``0001-01-01``) is
scored like any other case: no prediction can equal it, so declining is the only way not to be wrong there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

Interval = tuple[datetime, datetime]  # [start, end), tz-aware
NO_SUCH_DAY_YEAR = 1  # "Feb 30" is written 0001-01-01: there is no such day

CLOCK_GRAINS = ("hour", "minute", "second")


@dataclass(frozen=True)
class CaseScore:
    """One case's outcome: whether an interval came back, and whether it was strictly / leniently right
    (``named_end``: strictly right only through the named-end clause)."""

    covered: bool
    strict: bool
    lenient: bool
    named_end: bool = False


def add_months(moment: datetime, months: int) -> datetime:
    """``moment`` moved by whole calendar months; the day must exist in the target month (a 1st always does)."""
    index = moment.year * 12 + moment.month - 1 + months
    return moment.replace(year=index // 12, month=index % 12 + 1)


def named_end_applies(case_id: str, grain: str) -> bool:
    """Whether the named-end clause holds for a case: a range (grain ``span_*``) from the Recognizers specs."""
    return case_id.startswith("recognizers") and grain.startswith("span")


def named_ends(end: datetime) -> list[datetime]:
    """The ends a range naming its last unit may give for an expected ``end``: one day later where ``end`` is
    midnight, one month later where it is midnight on the 1st, one year later where it is midnight on 1 January."""
    if (end.hour, end.minute, end.second, end.microsecond) != (0, 0, 0, 0):
        return []
    out = [end + timedelta(days=1)]
    if end.day == 1:
        out.append(add_months(end, 1))
        if end.month == 1:
            out.append(add_months(end, 12))
    return out


def overlaps(predicted: Interval, expected: Interval) -> bool:
    """Whether two half-open intervals share an instant; a zero-length one is a point, inside the other when it
    lies in ``[start, end)``; two points overlap when they are the same instant."""
    (s, e), (xs, xe) = predicted, expected
    if e < s or xe < xs:
        return False
    if s == e and xs == xe:
        return s == xs
    if s == e:
        return xs <= s < xe
    if xs == xe:
        return s <= xs < e
    return s < xe and xs < e


def strict_match(predicted: Interval, expected: Interval, grain: str) -> bool:
    """Equal intervals, or a point at the expected start where the expected grain is a clock unit."""
    (s, e), (xs, xe) = predicted, expected
    return (s == xs and e == xe) or (s == e and grain in CLOCK_GRAINS and s == xs)


def score_prediction(predicted: Interval | None, expected: Sequence[Interval], grain: str,
                     named_end: bool = False) -> CaseScore:
    """Score ``predicted`` (None: declined) against every accepted reading in ``expected`` (one interval, or the
    ambiguous file's alternatives); ``named_end``: the case is one the named-end clause holds for."""
    if predicted is None:
        return CaseScore(False, False, False)
    start, end = predicted
    if end < start:
        return CaseScore(True, False, False)
    lenient = any(overlaps(predicted, x) for x in expected)
    if any(strict_match(predicted, x, grain) for x in expected):
        return CaseScore(True, True, lenient)
    if named_end and any(start == xs and end in named_ends(xe) for xs, xe in expected):
        return CaseScore(True, True, lenient, named_end=True)
    return CaseScore(True, False, lenient)


def _percent(hits: int, total: int) -> float | None:
    return round(100 * hits / total, 2) if total else None


def summarise(scores: Sequence[CaseScore]) -> dict:
    """Strict, lenient and coverage (% of the cases), precision (% of the covered), and the counts behind them."""
    n = len(scores)
    covered = sum(s.covered for s in scores)
    strict = sum(s.strict for s in scores)
    lenient = sum(s.lenient for s in scores)
    return {"n": n, "strict": _percent(strict, n), "lenient": _percent(lenient, n), "coverage": _percent(covered, n),
            "precision": _percent(strict, covered), "strict_hits": strict, "lenient_hits": lenient,
            "covered": covered, "named_end_hits": sum(s.named_end for s in scores)}


@dataclass(frozen=True)
class TimexCase:
    """One phrase to resolve: ``expected`` holds every accepted ``[start, end)`` (tz-aware); ``file`` is the name
    of the data file it came from (its stem)."""

    id: str
    text: str
    sentence: str | None
    reference: datetime
    expected: tuple[Interval, ...]
    grain: str
    category: str
    file: str

    @property
    def no_such_day(self) -> bool:
        return self.expected[0][0].year == NO_SUCH_DAY_YEAR

    @property
    def named_end(self) -> bool:
        return named_end_applies(self.id, self.grain)
