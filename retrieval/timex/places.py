"""Where a text is written, read from the zone it is read in: the territories (ISO 3166 codes, "GB", "CA") whose
writing and calendars stand for it. CLDR through Babel gives each named zone its territory
("Europe/London": "GB"); a fixed UTC offset names every territory with a zone at that offset on that day (in April,
+01:00 is Britain, Ireland, Portugal and West Africa); UTC (a zero offset: how logs store time, not a place) names
none. A zone the memory chose for a log written with offsets only (:class:`OffsetsZone`: "-05:00" until 9 March,
"-04:00" after, named New York) stands for every territory with a zone that keeps the same offsets through the year
(New York's are Toronto's, Nassau's and Port-au-Prince's).

The numeric order of a date (:mod:`retrieval.timex.date_order`) and the days of a territory's holidays
(:mod:`retrieval.timex.public_holidays`) are read from these places.

    territories_of(datetime(2025, 4, 1, tzinfo=ZoneInfo("Europe/London")))      # ("GB",)
    territories_of(datetime(2025, 4, 1, tzinfo=timezone(timedelta(hours=10))))  # ("AU", "FM", "GU", ...)
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime, timedelta, timezone, tzinfo
from functools import cache, lru_cache
from zoneinfo import ZoneInfo


def babel(module: str):
    """``babel.<module>``, or an error that says how to get it (a dependency of this package: CLDR's data)."""
    import importlib

    try:
        return importlib.import_module(f"babel.{module}")
    except ImportError as e:
        raise ImportError("reading where a log is written (the order of '3/4', the days of its holidays) needs "
                          "Babel (CLDR's data), a dependency of this package: pip install -e . (or pip install "
                          "babel)") from e


@cache
def zone_territories() -> dict[str, str]:
    """Every named zone (and alias) CLDR places in a territory, with that territory's code."""
    get_global = babel("core").get_global
    aliases = dict(get_global("zone_aliases"))
    zones = dict(get_global("zone_territories"))
    zones = {name: t for name, t in zones.items() if len(t) == 2 and t.isalpha() and t != "ZZ"}  # not "Etc/GMT-1"
    return zones | {alias: zones[name] for alias, name in aliases.items() if name in zones}


def zone_name(zone: tzinfo | None) -> str | None:
    """The IANA name of a zone object (zoneinfo's ``key``, pytz's ``zone``), or None for a fixed offset."""
    name = getattr(zone, "key", None) or getattr(zone, "zone", None)
    return name if isinstance(name, str) and "/" in name else None


class OffsetsZone(ZoneInfo):
    """A named zone known only by its offsets: it keeps time as that zone does (a log written "-05:00" until 9
    March and "-04:00" after is read as New York), but the places a text read in it may be written in are those of
    every zone with the same offsets (:func:`same_offsets_territories`), not the one its name is in."""


def _territories_where(keeps: Callable[[ZoneInfo], bool]) -> tuple[str, ...]:
    """The territories with a named zone that ``keeps`` holds for, sorted."""
    found = set()
    for name, territory in zone_territories().items():
        if territory in found:
            continue
        try:
            zone = ZoneInfo(name)
        except (KeyError, ValueError, OSError):
            continue
        if keeps(zone):
            found.add(territory)
    return tuple(sorted(found))


@lru_cache(maxsize=256)
def same_offsets_territories(name: str, year: int) -> tuple[str, ...]:
    """The territories with a named zone whose UTC offset is zone ``name``'s at noon UTC every day of ``year``,
    sorted."""
    days = [datetime(year, 1, 1, 12, tzinfo=timezone.utc) + timedelta(days=i) for i in range(365)]
    want = [d.astimezone(ZoneInfo(name)).utcoffset() for d in days]
    quick = range(0, 365, 61)  # a few days first: most zones differ on one of them
    return _territories_where(lambda zone: all(days[i].astimezone(zone).utcoffset() == want[i] for i in quick)
                              and all(d.astimezone(zone).utcoffset() == w for d, w in zip(days, want)))


@lru_cache(maxsize=4096)
def offset_territories(offset: timedelta, day: date) -> tuple[str, ...]:
    """The territories with a named zone whose UTC offset on ``day`` (at noon UTC) is ``offset``, sorted."""
    noon = datetime(day.year, day.month, day.day, 12, tzinfo=timezone.utc)
    return _territories_where(lambda zone: noon.astimezone(zone).utcoffset() == offset)


def territories_of(reference: datetime) -> tuple[str, ...]:
    """The territories a text read at ``reference`` (tz-aware) may be written in: see the module."""
    if isinstance(reference.tzinfo, OffsetsZone):
        return same_offsets_territories(reference.tzinfo.key, reference.year)
    name = zone_name(reference.tzinfo)
    if name is not None:
        territory = zone_territories().get(name)
        return () if territory is None else (territory,)
    offset = reference.utcoffset()
    if not offset:  # UTC, written "Z" or "+00:00", is how logs store time, not where anyone writes
        return ()
    return offset_territories(offset, reference.astimezone(timezone.utc).date())
