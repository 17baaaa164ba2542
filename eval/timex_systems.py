"""The time-expression resolvers that :mod:`eval.timex` compares, each behind one adapter
``(case) -> (start, end) | None`` (tz-aware datetimes; None: the system declined).

Each system is built once per run (a parser or model reused across cases where the library allows it; nothing is
kept between runs). The peers read the phrase against the case's reference time, given as a naive datetime in UTC
(the files' references are UTC), and their naive results are read as UTC.

- ``dateparser``: ``DateDataParser(languages=["en"])`` (one per reference time: ``RELATIVE_BASE`` is a setting),
  ``get_date_data(text)``; its date is widened to its ``period``: day, the Monday-to-Sunday week, month, quarter,
  year; ``time`` and ``part_of_day`` are points (dateparser gives a part of the day one time, no span). Settings
  beyond its defaults: ``RELATIVE_BASE``, ``RETURN_AS_TIMEZONE_AWARE=False``, ``TIMEZONE="UTC"`` (the default is
  the machine's zone) and ``RETURN_TIME_AS_PERIOD=True`` (else a phrase with a clock time has the period ``day``
  and its time is lost); ``PREFER_DATES_FROM`` keeps its default (``current_period``).
- ``recognizers``: Microsoft Recognizers-Text's English DateTimeModel; of its results the first longest, of its
  resolution values the first (the past reading where it gives a past and a future one); see
  :func:`recognizers_interval`.
- ``ctparse``: ``ctparse(text, ts, timeout=1.0)``; see :func:`ctparse_interval`. Its timeout is wall-clock: a
  case that runs out of time may resolve differently on a slower machine (:mod:`eval.timex` counts slow cases).
- ``timefhuman``: ``timefhuman(text, tfhConfig(now=reference, infer_datetimes=False))`` (0.1.5 takes the reference
  as ``config.now``: its ``now=`` argument is a flag that returns the clock); the longest match; see
  :func:`timefhuman_interval`.
- ``ours_question``: :class:`retrieval.memory.time_resolver.TimeResolver`, the expression with intervals and the
  longest text, from its first interval's start to its last one's end;
- ``ours_event``: :func:`retrieval.memory.event_time.read_event_time`'s event time;
- ``ours`` / ``ours_sentence``: the time grammar's ``retrieval.timex.resolve_phrase``, without / with the case's
  sentence as context.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone

from eval.timex_scoring import Interval, TimexCase, add_months

Adapter = Callable[[TimexCase], Interval | None]
PEERS_EXTRA = "pip install -e '.[peers]'"
CTPARSE_TIMEOUT = 1.0  # seconds, ctparse's default


class Unavailable(Exception):
    """A system cannot run here (its package is missing); the message says why and how to install it."""


@dataclass(frozen=True)
class System:
    """A resolver under test: how to build its adapter, and the distribution whose version the report names."""

    name: str
    build: Callable[[], Adapter]
    package: str | None = None  # None: this project's own code


# ---- time helpers --------------------------------------------------------------------------------------------
def naive_utc(moment: datetime) -> datetime:
    """A tz-aware datetime as the naive UTC datetime the peers take."""
    return moment.astimezone(timezone.utc).replace(tzinfo=None)


def as_utc(moment: datetime) -> datetime:
    """A peer's datetime as tz-aware: a naive one is read as UTC."""
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment


def point(moment: datetime) -> Interval:
    return as_utc(moment), as_utc(moment)


def day_of(day: date) -> Interval:
    start = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
    return start, start + timedelta(days=1)


def period_interval(moment: datetime, period: str) -> Interval | None:
    """The ``period`` (dateparser's: time, part_of_day, day, week, month, quarter, year) holding ``moment``."""
    if period in ("time", "part_of_day"):
        return point(moment)
    day = day_of(moment.date())[0]
    if period == "day":
        return day, day + timedelta(days=1)
    if period == "week":
        monday = day - timedelta(days=day.weekday())
        return monday, monday + timedelta(days=7)
    months = {"month": 1, "quarter": 3, "year": 12}.get(period)
    if months is None:
        return None
    first = day.replace(day=1, month=(day.month - 1) // months * months + 1)
    return first, add_months(first, months)


def _require(module: str, install: str = PEERS_EXTRA) -> None:
    if importlib.util.find_spec(module) is None:
        raise Unavailable(f"{module} is not installed ({install})")


# ---- the peers -----------------------------------------------------------------------------------------------
def dateparser_system() -> Adapter:
    _require("dateparser", "a main dependency: pip install -e .")
    from dateparser.date import DateDataParser

    parsers: dict[datetime, DateDataParser] = {}  # RELATIVE_BASE is fixed per parser: one per reference time

    def resolve(case: TimexCase) -> Interval | None:
        base = naive_utc(case.reference)
        if base not in parsers:
            parsers[base] = DateDataParser(languages=["en"], settings={
                "RELATIVE_BASE": base, "RETURN_AS_TIMEZONE_AWARE": False, "TIMEZONE": "UTC",
                "RETURN_TIME_AS_PERIOD": True})
        data = parsers[base].get_date_data(case.text)
        return None if data.date_obj is None else period_interval(data.date_obj, data.period)

    return resolve


def _recognizers_time(text: str, reference: datetime) -> datetime:
    """A resolution value: ``YYYY-MM-DD``, ``YYYY-MM-DD HH:MM:SS`` or ``HH:MM:SS`` (on the reference day)."""
    if len(text) <= 8:
        return datetime.combine(reference.date(), time.fromisoformat(text))
    return datetime.fromisoformat(text)


def recognizers_interval(value: dict, reference: datetime) -> Interval | None:
    """One Recognizers resolution value as an interval: ``date`` that day, ``datetime`` / ``time`` a point (a time
    on the reference day), ``daterange`` / ``datetimerange`` / ``timerange`` ``[start, end)`` as given (a time
    range whose end comes before its start ends the next day: "10pm to 2am"); None for ``set``, ``duration``, a
    value it marks "not resolved", and a range open at one end ("before 2016", "since May")."""
    kind = value.get("type")
    if value.get("value") == "not resolved":
        return None
    if kind == "date":
        return day_of(date.fromisoformat(value["value"]))
    if kind in ("datetime", "time"):
        return point(_recognizers_time(value["value"], reference))
    if kind in ("daterange", "datetimerange", "timerange"):
        if "start" not in value or "end" not in value:
            return None
        start, end = (_recognizers_time(value[k], reference) for k in ("start", "end"))
        if kind == "timerange" and end < start:
            end += timedelta(days=1)
        return as_utc(start), as_utc(end)
    return None


def recognizers_system() -> Adapter:
    _require("recognizers_date_time")
    from recognizers_date_time import Culture, DateTimeRecognizer

    model = DateTimeRecognizer(Culture.English).get_datetime_model(Culture.English)

    def resolve(case: TimexCase) -> Interval | None:
        reference = naive_utc(case.reference)
        results = model.parse(case.text, reference)
        if not results:
            return None
        best = max(results, key=lambda r: len(r.text))  # the first of the longest
        values = (best.resolution or {}).get("values") or []
        return recognizers_interval(values[0], reference) if values else None

    return resolve


def ctparse_time_interval(t) -> Interval | None:
    """A ctparse ``Time`` as the interval of its finest given unit: a year, a month, a day, a part of the day
    (ctparse's own hours), an hour; a point where it gives hour and minute. None without a year (ctparse did not
    say which one: "October"), or with a day but no month."""
    if t.year is None or (t.month is None and t.day is not None):
        return None
    if t.month is None:
        start = datetime(t.year, 1, 1, tzinfo=timezone.utc)
        return start, add_months(start, 12)
    if t.day is None:
        start = datetime(t.year, t.month, 1, tzinfo=timezone.utc)
        return start, add_months(start, 1)
    first, last = t.start, t.end  # ctparse's bounds: the last minute is inclusive (23:59, 09:59)
    start = datetime(first.year, first.month, first.day, first.hour, first.minute, tzinfo=timezone.utc)
    if t.hour is not None and t.minute is not None:
        return start, start
    end = datetime(last.year, last.month, last.day, last.hour, last.minute, tzinfo=timezone.utc)
    return start, end + timedelta(minutes=1)


def ctparse_interval(resolution) -> Interval | None:
    """ctparse's resolution: a ``Time`` (:func:`ctparse_time_interval`), an ``Interval`` from its first member's
    start to its last member's end (None when either is missing or unreadable), a ``Duration``: None."""
    from ctparse.types import Interval as CtInterval
    from ctparse.types import Time

    if isinstance(resolution, Time):
        return ctparse_time_interval(resolution)
    if isinstance(resolution, CtInterval) and resolution.t_from is not None and resolution.t_to is not None:
        first, last = ctparse_time_interval(resolution.t_from), ctparse_time_interval(resolution.t_to)
        return (first[0], last[1]) if first and last else None
    return None


def ctparse_system() -> Adapter:
    _require("ctparse")
    import ctparse

    logging.getLogger("ctparse").setLevel(logging.ERROR)  # it warns on every phrase it cannot read

    def resolve(case: TimexCase) -> Interval | None:
        parse = ctparse.ctparse(case.text, ts=naive_utc(case.reference), timeout=CTPARSE_TIMEOUT)
        return None if parse is None else ctparse_interval(parse.resolution)

    return resolve


def timefhuman_interval(value, reference: datetime) -> Interval | None:
    """A timefhuman value: a date that day, a datetime a point, a time a point on the reference day, a timedelta
    the point that far from the reference (what its ``infer_datetimes`` does), a tuple a range from its first
    member's start to its last member's end ("July 4 to 7": through the 7th), a list of choices its first."""
    if isinstance(value, list):
        return timefhuman_interval(value[0], reference) if value else None
    if isinstance(value, tuple):
        first, last = (timefhuman_interval(v, reference) for v in (value[0], value[-1]))
        return (first[0], last[1]) if first and last else None
    if isinstance(value, datetime):
        return point(value)
    if isinstance(value, date):
        return day_of(value)
    if isinstance(value, time):
        return point(datetime.combine(reference.date(), value))
    if isinstance(value, timedelta):
        return point(reference + value)
    return None


def timefhuman_system() -> Adapter:
    _require("timefhuman")
    from timefhuman import tfhConfig, timefhuman

    def resolve(case: TimexCase) -> Interval | None:
        reference = naive_utc(case.reference)
        config = tfhConfig(now=reference, infer_datetimes=False, return_matched_text=True)
        matches = timefhuman(case.text, config=config)
        if not matches:
            return None
        _, _, value = max(matches, key=lambda m: m[1][1] - m[1][0])  # (text, (start, end), value); the longest
        return timefhuman_interval(value, reference)

    return resolve


# ---- ours ----------------------------------------------------------------------------------------------------
def ours_question_system() -> Adapter:
    from retrieval.memory.time_resolver import TimeResolver

    def resolve(case: TimexCase) -> Interval | None:
        timed = [e for e in TimeResolver(case.reference).resolve(case.text) if e.intervals]
        if not timed:
            return None
        best = max(timed, key=lambda e: len(e.text))
        return best.intervals[0][0], best.intervals[-1][1]

    return resolve


def ours_event_system() -> Adapter:
    from retrieval.memory.event_time import read_event_time

    def resolve(case: TimexCase) -> Interval | None:
        found = read_event_time(case.text, case.reference).time
        return None if found is None else (found.start, found.end)

    return resolve


def _grammar(with_sentence: bool) -> Adapter:
    try:
        from retrieval.timex import resolve_phrase
    except ImportError as e:
        raise Unavailable(f"retrieval.timex.resolve_phrase cannot be imported ({e})") from None

    def resolve(case: TimexCase) -> Interval | None:
        found = resolve_phrase(case.text, case.reference, sentence=case.sentence if with_sentence else None)
        return None if found is None else (found.start, found.end)

    return resolve


SYSTEMS = {s.name: s for s in [
    System("dateparser", dateparser_system, "dateparser"),
    System("recognizers", recognizers_system, "recognizers-text-date-time"),
    System("ctparse", ctparse_system, "ctparse"),
    System("timefhuman", timefhuman_system, "timefhuman"),
    System("ours_question", ours_question_system),
    System("ours_event", ours_event_system),
    System("ours", lambda: _grammar(False)),
    System("ours_sentence", lambda: _grammar(True)),
]}
