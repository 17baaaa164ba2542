"""Days, months and years as half-open intervals ``[start, end)`` in the time zone of "now": the arithmetic the
time rules resolve with (:mod:`retrieval.memory.time_rules`)."""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, timezone
from functools import lru_cache

from retrieval.memory.time_patterns import MON, MONTHS, YR

Interval = tuple[datetime, datetime]
# The start of an open range ("before May 8", a trend window with an end only): in UTC, as a zone's offset that long
# ago is its local mean time (Paris: +00:09:21), whose ISO 8601 text (seconds in the offset) pandas cannot read.
OPEN_START = datetime(1900, 1, 1, tzinfo=timezone.utc)


def add_months(year: int, month: int, delta: int) -> tuple[int, int]:
    """(year, month) ``delta`` months on (or back, when negative)."""
    k = year * 12 + (month - 1) + delta
    return k // 12, k % 12 + 1


@lru_cache(maxsize=4096)
def _dateparser(text: str, base: datetime) -> date | None:
    import dateparser  # imported on first use: it takes a second

    settings = {"PREFER_DATES_FROM": "past", "RELATIVE_BASE": base, "REQUIRE_PARTS": ["day", "month"],
                "DATE_ORDER": "MDY"}
    parsed = dateparser.parse(text, languages=["en"], settings=settings)
    return None if parsed is None else parsed.date()


class Calendar:
    """Intervals of whole days, months and years around ``now`` (tz-aware), and dates read relative to today."""

    def __init__(self, now: datetime):
        self.now = now
        self.today = now.date()

    def day_start(self, d: date) -> datetime:
        return datetime.combine(d, time(), tzinfo=self.now.tzinfo)

    def days(self, first: date, last: date) -> list[Interval]:
        """The days ``first`` to ``last``, both included, as one interval."""
        return [(self.day_start(first), self.day_start(last + timedelta(days=1)))]

    def nearby(self, d: date) -> list[Interval]:
        """The day before and the day after ``d``."""
        before, after = d - timedelta(days=1), d + timedelta(days=1)
        return self.days(before, before) + self.days(after, after)

    def month(self, year: int, month: int) -> list[Interval]:
        ny, nm = add_months(year, month, 1)
        return [(self.day_start(date(year, month, 1)), self.day_start(date(ny, nm, 1)))]

    def year(self, year: int) -> list[Interval]:
        return [(self.day_start(date(year, 1, 1)), self.day_start(date(year + 1, 1, 1)))]

    def latest_month_year(self, month: int, not_after: date | None = None) -> int:
        """The year of the latest such month that has begun by ``not_after`` (default today)."""
        ref = not_after or self.today
        return ref.year if month <= ref.month else ref.year - 1

    def parse_date(self, text: str, not_after: date | None = None) -> date | None:
        """A date string -> date; without a year, the latest such date not after ``not_after`` (default today)."""
        parsed = _dateparser(text.strip(), datetime.combine(not_after or self.today, time(23, 59)))
        if parsed is None:
            return None
        if not re.search(r"\d{4}|/\d{2}\b", text):
            ref = not_after or self.today
            try:
                parsed = parsed.replace(year=ref.year)
                if parsed > ref:
                    parsed = parsed.replace(year=ref.year - 1)
            except ValueError:  # 29 February
                return None
        return parsed

    def month_of(self, text: str, not_after: date | None = None) -> tuple[int, int]:
        """A month's name with or without its year ("may 2023", "june") -> (year, month); without a year, the
        latest such month that has begun by ``not_after``."""
        name = re.match(MON, text.strip()).group(0).rstrip(".")
        year = re.search(YR, text)
        month = MONTHS[name]
        return (int(year.group(0)) if year else self.latest_month_year(month, not_after)), month
