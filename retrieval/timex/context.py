"""What a time expression is read against: the reference time, which way the context leans, and the conventions
that differ between uses of the same words.

- :class:`Conventions`: readings that are choices, not facts: how many hours "morning" holds, whether "last Friday"
  is the Friday of last week or the latest Friday, whether "last week" is the calendar week or the seven days
  before. :data:`DEFAULT` was chosen on one test suite (Recognizers-Text's, ``shared/data/timex/recognizers.jsonl``)
  and is what :func:`retrieval.timex.read` uses unless told otherwise; :data:`QUESTION` and :data:`UTTERANCE` are
  the conversation memory's (its questions look back over what was said; its utterances narrate and plan).
- :class:`Context`: the reference (tz-aware), the conventions, and the lean: "past", "future", or None to read it
  from the sentence the phrase stands in (:mod:`retrieval.timex.tense`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime

from retrieval.timex.date_order import order_of


@dataclass(frozen=True)
class Conventions:
    name: str = "default"
    # hours (start, end) of each part of the day
    parts_of_day: tuple[tuple[str, int, int], ...] = (("morning", 8, 12), ("afternoon", 12, 16),
                                                      ("evening", 16, 20), ("night", 20, 24))
    # "last Friday": "previous_week" (the Friday of last week) or "most_recent" (the latest Friday before today)
    last_weekday: str = "previous_week"
    # "next Friday": "next_week" (the Friday of next week) or "first_after" (the first Friday after today)
    next_weekday: str = "next_week"
    # "last week": "calendar" (Monday to Sunday before this one), "rolling" (the 7 days before the reference's
    # day) or "rolling_today" (those and the reference's day)
    last_week: str = "calendar"
    # a count back from now ("5 months ago", "a year earlier"): "unit" (that month, that year: TimeML's and
    # Duckling's reading) or "day" (that day); and one forward ("in 3 weeks", "two weeks from now"): the same
    # choice. Counts of hours and minutes are instants either way.
    ago: str = "unit"
    ahead: str = "day"
    # "2 weeks ago" read as a unit: "calendar" (that Monday-to-Sunday week) or "rolling" (the 7 days [D-14, D-7))
    ago_weeks: str = "calendar"
    # "the past 3 days": whether the reference's own day is in (its days before it are, either way)
    window_today: bool = False
    # "early / late May": "halves" (1-15, 16-31) or "thirds" (1-10, 21-31); "the beginning / end of" is in thirds
    early_late: str = "halves"
    # "earlier this month": "half" (before the reference, within the first half) or "reference" (all before it)
    earlier_later: str = "half"
    # whether a weekday read leaning back may be the reference's own day ("... said Friday" in a Friday's news), and
    # one read leaning forward
    past_today: bool = True
    future_today: bool = True
    # a numeric date whose order is not given by its numbers ("3/4"): "MDY", "DMY", or "zone" (the order written
    # where the reference's zone is, retrieval.timex.date_order; "MDY" where it says none)
    numeric_order: str = "MDY"
    # the day of a holiday's name ("Thanksgiving", "Family Day", "the bank holiday"): "US" (the calendar of
    # retrieval.timex.rules.holidays) or "zone" (the calendars of the places the reference's zone may be in,
    # retrieval.timex.public_holidays, and that calendar for a name they do not keep)
    holiday_calendar: str = "US"
    # two-digit years: the century window ends this many years after the reference
    year_window: int = 20
    # "the third week of June": "thursday" (the weeks whose Thursday is in June) or "sevens" (days 15-21)
    week_of_month: str = "thursday"
    # a date with a weekday that does not match it ("Tuesday, September 14" in a year where it is a Wednesday): the
    # weekday picks the year next to it in which they match (True), or the date is read and the mismatch noted
    weekday_picks_year: bool = True
    # a range's end: "inclusive" (to the end of its day or month) or "exclusive" (to its start)
    range_end: str = "inclusive"
    # an hour written without am / pm and without a part of the day ("at 10:30 on Tuesday"): "either" (the context
    # picks, as for any recurring time) or "daytime" (07:00 to 18:59: "at 3" is 15:00, "at 10:30" 10:30)
    ambiguous_hours: str = "either"
    # a weekday, date or month with no tense to lean on: "nearest" (the nearer of the last and the next one) or
    # "period" (the one in the reference's own week or year)
    unleaned: str = "nearest"

    def hours(self, part: str) -> tuple[int, int]:
        return next((a, b) for p, a, b in self.parts_of_day if p == part)


DEFAULT = Conventions()
# The memory's questions: the latest Friday before today, the last 7 days and today, "5 months ago" the month,
# month parts in thirds, "3/4" in the order of the log's zone and holidays as kept there, and parts of the day wide
# (they are soft filters: rows outside are kept when none is in).
QUESTION = replace(DEFAULT, name="question", parts_of_day=(("morning", 0, 12), ("afternoon", 12, 18),
                                                           ("evening", 17, 24), ("night", 18, 24)),
                   last_weekday="most_recent", next_weekday="first_after", last_week="rolling_today",
                   ago="unit", ahead="day", window_today=True, weekday_picks_year=False, early_late="thirds",
                   ambiguous_hours="daytime", numeric_order="zone", holiday_calendar="zone",
                   earlier_later="reference",
                   past_today=False, week_of_month="sevens")
# The memory's utterances: narration from the day it was said ("last week" the 7 days before it).
UTTERANCE = replace(QUESTION, name="utterance", last_week="rolling", window_today=False, future_today=False,
                    ago_weeks="rolling")
PRESETS = {c.name: c for c in (DEFAULT, QUESTION, UTTERANCE)}


@dataclass(frozen=True)
class Context:
    """``reference``: tz-aware; ``lean``: "past", "future", or None (read from ``sentence`` where given)."""

    reference: datetime
    lean: str | None = None
    sentence: str | None = None
    conventions: Conventions = field(default=DEFAULT)

    def __post_init__(self):
        if self.reference.tzinfo is None:
            raise ValueError("the reference time must be time-zone aware (localise it with the text's time zone)")
        if self.lean not in (None, "past", "future"):
            raise ValueError(f"lean must be 'past', 'future' or None, not {self.lean!r}")

    @property
    def placing(self) -> Conventions:
        """The conventions as placing uses them: a numeric order of "zone" made the order written where the
        reference's zone is (:func:`~retrieval.timex.date_order.order_of`; month first where it names none), and
        said in the conventions' name ("utterance, day first as in Europe/London")."""
        c = self.conventions
        if c.numeric_order != "zone":
            return c
        order = order_of(self.reference)
        where = f"as in {self.reference.tzinfo}" if order else "where the zone names no order"
        return replace(c, numeric_order=order or "MDY",
                       name=f"{c.name}, {'day' if order == 'DMY' else 'month'} first {where}")
