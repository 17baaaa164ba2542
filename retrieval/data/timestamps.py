"""Reading the timestamps of a log: absolute times only, unless the caller opts in to free-form ones.

``timestamps=`` (every log reader, :func:`~retrieval.data.conversation_log.load_log` and the trend corpus take it):

- ``"strict"`` (the default): ISO 8601 (``2023-05-08T13:56:00``, with or without an offset) or the datasets' own
  formats (Zyphra's "01:56:04 AM on Monday 08 May, 2023", LoCoMo's "1:56 pm on 8 May, 2023");
- a ``strptime`` format (any text with a ``%``: ``"%d.%m.%Y %H:%M"``): that format, then the strict ones;
- ``"lenient"``: also whatever dateparser reads. Relative stamps ("2 hours ago", "yesterday") are then read
  against the wall clock at the time of reading, not against the log: opt in only for a log known to need it.

In no mode does an ISO-shaped string that is not a valid ISO 8601 time ("2023-13-01", "2023-02-30") become a date
(dateparser would read "2023-13-01" as 13 January). A local time that does not exist in the reading zone (the hour
skipped when the clocks go forward) is refused too, and so is one that occurs twice (the hour repeated when they
go back): a stamp written without an offset in that hour could be either, so it must carry its offset.

Zones: a stamp written with an offset keeps it, unless the reader is given a ``tz`` (then every stamp is
converted to it); a stamp written without one is read in ``tz``, or, with no ``tz``, in :data:`NAIVE_STAMP_ZONE`
(UTC, a stand-in: the log does not say). Which zone the calendar of a question then uses is
:func:`calendar_zone`'s decision.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from retrieval.data.jsonio import DataError
from retrieval.timex.places import OffsetsZone

ZYPHRA_TIME = "%I:%M:%S %p on %A %d %B, %Y"
LOCOMO_SESSION_TIMES = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y")
DATASET_FORMATS = (ZYPHRA_TIME, *LOCOMO_SESSION_TIMES)
TIMESTAMP_MODES = ("strict", "lenient")
# The zone given to a stamp written without one when no tz is given: ZoneInfo("UTC"), one object (ZoneInfo caches
# by key), told apart from a stamp written "Z" / "+00:00" (datetime.timezone.utc) by calendar_zone.
NAIVE_STAMP_ZONE = ZoneInfo("UTC")
# Year-month(-day) at the start: a string that says it is ISO 8601, so is read as ISO 8601 or not at all.
ISO_SHAPED = re.compile(r"\s*[+-]?\d{4}-\d{1,2}(?:-\d{1,2})?(?![\d/])")
LENIENT_HINT = ("pass --timestamps lenient (timestamps='lenient' in Python) to read it with dateparser, "
                "against the wall clock")


FIXED_OFFSET = re.compile(r"(?:UTC)?([+-])(\d{2}):?(\d{2})")
# The years a timestamp may name: a year such as 9999 or 1900 is a typo in a conversation log, and the calendar
# arithmetic around it leaves the range of Python's datetimes (9999 behind UTC) or enters the zones' local mean times
YEARS = (1970, 2199)


def as_timezone(tz: str | tzinfo | None) -> tzinfo:
    """A tzinfo from a name ("UTC", "Europe/Paris"), a fixed offset ("+01:00", "UTC-05:30") or a tzinfo; None means
    UTC."""
    if tz is None:
        return ZoneInfo("UTC")
    if not isinstance(tz, str):
        return tz
    try:
        if m := FIXED_OFFSET.fullmatch(tz.strip()):
            minutes = (int(m.group(2)) * 60 + int(m.group(3))) * (-1 if m.group(1) == "-" else 1)
            return timezone(timedelta(minutes=minutes))
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError) as e:  # an unknown name, a path, an offset of a day or more
        raise DataError(f"time zone {tz!r}: no such zone (an IANA name such as Europe/London, or an offset under "
                        "24 hours such as +01:00)") from e


def zone_name(zone: tzinfo) -> str:
    """A zone as :func:`as_timezone` reads it back: its IANA key, or its fixed offset ("+01:00")."""
    if isinstance(zone, ZoneInfo):
        return zone.key
    offset = zone.utcoffset(None)
    if offset is None:
        raise ValueError(f"{zone!r}: neither a named zone nor a fixed offset")
    minutes = int(offset.total_seconds() // 60)
    return f"{'-' if minutes < 0 else '+'}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def check_mode(timestamps: str) -> str:
    """``timestamps`` when it is "strict", "lenient" or a strptime format (it has a '%', and no directive strptime
    lacks: "%Q" is refused here, not left unused on a log whose stamps are ISO); else ValueError."""
    if timestamps in TIMESTAMP_MODES:
        return timestamps
    if not (isinstance(timestamps, str) and "%" in timestamps):
        raise ValueError(f"timestamps must be 'strict', 'lenient' or a strptime format with '%', got {timestamps!r}")
    try:
        datetime.strptime("", timestamps)
    except ValueError as e:
        if "directive" in str(e) or "stray %" in str(e):  # the format itself, not the empty text, is at fault
            raise ValueError(f"timestamps format {timestamps!r} is no strptime format: {e}") from None
    return timestamps


def _strptime(text: str, formats: Iterable[str]) -> datetime | None:
    for fmt in formats:
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    return None


def _dateparser(text: str) -> datetime | None:
    import dateparser  # slow to import; only for free-form timestamps

    return dateparser.parse(text, languages=["en"], settings={"STRICT_PARSING": True})


def read_timestamp(text: object, timestamps: str = "strict") -> datetime | None:
    """A timestamp's text -> datetime, naive when it was written without a zone; None when ``timestamps`` (see the
    module) does not read it, or it lies outside :data:`YEARS` (:func:`timestamp_problem` says so)."""
    dt = _read(text, timestamps)
    return dt if dt is None or YEARS[0] <= dt.year <= YEARS[1] else None


def _read(text: object, timestamps: str) -> datetime | None:
    if not isinstance(text, str) or not text.strip():
        return None
    text = text.strip()
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        if ISO_SHAPED.match(text):
            return None
    own = (timestamps,) if "%" in check_mode(timestamps) else ()
    parsed = _strptime(text, (*own, *DATASET_FORMATS))
    if parsed is None and timestamps == "lenient":
        parsed = _dateparser(text)
    return parsed


def wall_time_problem(naive: datetime, tz: tzinfo) -> str | None:
    """Why the wall time ``naive`` names no one instant in ``tz``: "skipped" (the hour skipped when the clocks go
    forward) or "repeated" (the hour repeated when they go back); None when it names one."""
    early, late = naive.replace(tzinfo=tz, fold=0), naive.replace(tzinfo=tz, fold=1)
    if early.utcoffset() == late.utcoffset():
        return None
    back = early.astimezone(timezone.utc).astimezone(tz).replace(tzinfo=None)
    return "repeated" if back == naive else "skipped"


def localise(dt: datetime, tz: tzinfo | None) -> datetime | None:
    """A read timestamp in the reading zone: a naive one in ``tz`` (:data:`NAIVE_STAMP_ZONE` when None; None when
    that wall time names no one instant there: :func:`wall_time_problem`), an aware one converted to ``tz``
    (kept as written when None)."""
    if dt.tzinfo is None:
        zone = tz or NAIVE_STAMP_ZONE
        return None if wall_time_problem(dt, zone) else dt.replace(tzinfo=zone)
    return dt if tz is None else dt.astimezone(tz)


def parse_timestamp(text: object, tz: tzinfo | None, timestamps: str = "strict") -> datetime | None:
    """A timestamp's text -> tz-aware datetime (:func:`read_timestamp`, then :func:`localise`); None when it cannot
    be read (:func:`timestamp_problem` says why)."""
    dt = read_timestamp(text, timestamps)
    return None if dt is None else localise(dt, tz)


def timestamp_problem(text: object, timestamps: str = "strict", tz: tzinfo | None = None) -> tuple[str, str]:
    """Why :func:`parse_timestamp` gave None for ``text``: (a short category, a sentence for an error message)."""
    if text is None or (isinstance(text, str) and not text.strip()):
        return "missing timestamp", "there is none"
    if not isinstance(text, str):
        return "unparseable timestamp", f"a {type(text).__name__} is not a timestamp; write it in ISO 8601"
    stripped = text.strip()
    raw = _read(stripped, timestamps)
    if raw is not None and not YEARS[0] <= raw.year <= YEARS[1]:
        return "timestamp out of range", (f"it is in the year {raw.year}: times from {YEARS[0]} to {YEARS[1]} are "
                                          "read (a typo?)")
    if ISO_SHAPED.match(stripped):
        try:
            datetime.fromisoformat(stripped)
        except ValueError:
            return "invalid ISO 8601 timestamp", ("it is written as ISO 8601 but is not a valid ISO 8601 time "
                                                  "(month 1-12, a day the month has, two-digit fields)")
    dt = read_timestamp(stripped, timestamps)
    if dt is not None:  # read, so refused by localise: a wall time that is no one instant in the zone
        zone = tz or NAIVE_STAMP_ZONE
        if wall_time_problem(dt, zone) == "repeated":
            return "ambiguous local time", (f"that local time occurs twice in {zone} (the clocks went back); "
                                            "write its UTC offset")
        return "nonexistent local time", f"that local time does not exist in {zone} (the clocks went forward)"
    if timestamps != "lenient" and _dateparser(stripped) is not None:
        return ("relative or free-form timestamp (timestamps='lenient' reads it)",
                f"it is not an absolute time in ISO 8601 or the log's own format; {LENIENT_HINT}")
    return "unparseable timestamp", ("it is not ISO 8601, the log's own format"
                                     + (" or anything dateparser reads" if timestamps == "lenient" else
                                        "; give its strptime format as timestamps='%...'"))


# ---- the zone of the calendar ----------------------------------------------------------------------------------
ZONE_SOURCES = {"given": "the time zone given", "log": "the zone the log's timestamps are written in",
                "offsets": "the zone whose UTC offsets match every timestamp of the log, which changes offset; "
                           "holidays and numeric dates as every place with those offsets writes them",
                "now": "the zone of now", "default": "UTC, as neither a zone, the log nor now gave one"}


@dataclass(frozen=True)
class CalendarZone:
    """The zone whose days, weekdays, hours and months the calendar words of a question mean, and why."""

    zone: tzinfo
    source: str  # a key of ZONE_SOURCES

    @property
    def name(self) -> str:
        return str(self.zone)

    @property
    def is_the_logs(self) -> bool:
        """Whether the zone is the log's own: the one it is written in, or the named one its offsets match."""
        return self.source in ("log", "offsets")

    @property
    def note(self) -> str:
        return f"calendar days in {self.name} ({ZONE_SOURCES[self.source]})"


def written_zone(stamps: Iterable[datetime]) -> tzinfo | None:
    """The one zone every stamp is written in (by tzinfo; a stamp read in :data:`NAIVE_STAMP_ZONE` carries none);
    None when they carry several or none."""
    zones = {s.tzinfo for s in stamps}
    if len(zones) != 1:
        return None
    (zone,) = zones
    return None if zone is NAIVE_STAMP_ZONE or zone is None else zone


# Named first when several zones match a log's offsets (each of them gives the log's turns the same local times):
# the names people know; then any other zone of a region, by name. A naming preference, not a reading rule.
KNOWN_ZONES = ("America/New_York", "America/Chicago", "America/Denver", "America/Los_Angeles", "America/Toronto",
               "America/Mexico_City", "America/Sao_Paulo", "Europe/London", "Europe/Dublin", "Europe/Lisbon",
               "Europe/Paris", "Europe/Berlin", "Europe/Madrid", "Europe/Rome", "Europe/Athens", "Europe/Helsinki",
               "Africa/Cairo", "Asia/Jerusalem", "Australia/Sydney", "Australia/Melbourne", "Australia/Adelaide",
               "Pacific/Auckland")
REGIONS = ("Africa/", "America/", "Antarctica/", "Asia/", "Atlantic/", "Australia/", "Europe/", "Indian/",
           "Pacific/")


def offsets_zone(stamps: Iterable[datetime]) -> tzinfo | None:
    """The named zone whose UTC offset at every stamp is the offset the stamp is written with, for a log whose
    stamps carry several fixed offsets (a daylight-saving change: ``-05:00`` until 9 March, ``-04:00`` after);
    None when the offsets do not vary or no zone matches them all. It is an
    :class:`~retrieval.timex.places.OffsetsZone`: its name is a preference (:data:`KNOWN_ZONES`), and its
    holidays and numeric dates are read as every place with those offsets writes them (New York's are Toronto's)."""
    from zoneinfo import available_timezones

    written = {(s.astimezone(timezone.utc).replace(minute=0, second=0, microsecond=0), s.utcoffset())
               for s in stamps if s.tzinfo is not None and s.tzinfo is not NAIVE_STAMP_ZONE}
    if len({offset for _, offset in written}) < 2:
        return None
    names = sorted(n for n in available_timezones() if n.startswith(REGIONS))
    for name in [*KNOWN_ZONES, *names]:
        try:
            zone = ZoneInfo(name)
        except (KeyError, ValueError, OSError):
            continue
        if all(at.astimezone(zone).utcoffset() == offset for at, offset in written):
            return OffsetsZone(name)
    return None


def stored_zone(tz: str | None, source: str | None) -> CalendarZone:
    """A memory's calendar zone as it recorded it (its name and :data:`ZONE_SOURCES` key): a zone matched to
    its log's offsets is again an :class:`~retrieval.timex.places.OffsetsZone`."""
    source = source or ("given" if tz else "default")
    zone = OffsetsZone(tz) if source == "offsets" and tz and "/" in tz else as_timezone(tz)
    return CalendarZone(zone, source)


def calendar_zone(tz: str | tzinfo | None = None, stamps: Iterable[datetime] = (),
                  now: datetime | None = None) -> CalendarZone:
    """The calendar's zone, in this order: an explicit ``tz``, else the one zone the log's ``stamps`` are written
    in, else the named zone whose offsets match theirs (:func:`offsets_zone`), else the zone of an aware ``now``,
    else UTC."""
    if tz is not None:
        return CalendarZone(as_timezone(tz), "given")
    stamps = list(stamps)
    zone = written_zone(stamps)
    if zone is not None:
        return CalendarZone(zone, "log")
    zone = offsets_zone(stamps)
    if zone is not None:
        return CalendarZone(zone, "offsets")
    if now is not None and now.tzinfo is not None and now.tzinfo is not NAIVE_STAMP_ZONE:
        return CalendarZone(now.tzinfo, "now")
    return CalendarZone(NAIVE_STAMP_ZONE, "default")


def instant(dt: datetime) -> datetime:
    """``dt`` in UTC: differences and comparisons of aware datetimes sharing a tzinfo ignore DST otherwise."""
    return dt.astimezone(timezone.utc)
