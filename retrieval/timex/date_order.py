"""Which number comes first in a numeric date ("3/4"), where the text is written: the month in the United States,
the day in Britain. Read from the zone the text is read in (its reference's), as CLDR gives it through Babel:

- a named zone ("Europe/London"): its territory (CLDR's zone territories, "GB"), that territory's English locale
  ("en_GB"; else an official language's, else its likeliest) and its pattern for a numeric month and day
  ("dd/MM"): the day first;
- a fixed UTC offset ("+01:00"), which names no territory: the order every zone with that offset on that day agrees
  on (in April, +01:00 is Britain, Ireland, Portugal and West Africa: the day first; -04:00 is New York and
  Caracas: no agreement);
- UTC (a zero offset: how logs store time, not a place) and anything else: None, and the conventions say the
  order (:attr:`~retrieval.timex.context.Conventions.numeric_order`).

The year-less pattern decides, not the full date's: Sweden writes "2025-04-03" but "3/4" for the 3rd of April.

    order_of(datetime(2025, 4, 1, tzinfo=ZoneInfo("Europe/London")))          # "DMY"
    order_of(datetime(2025, 4, 1, tzinfo=timezone(timedelta(hours=1))))       # "DMY" (every +01:00 zone that day)
    order_of(datetime(2025, 4, 1, tzinfo=timezone(timedelta(hours=-4))))      # None (New York and Caracas differ)
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone, tzinfo
from functools import cache, lru_cache
from zoneinfo import ZoneInfo


def _babel(module: str):
    """``babel.<module>``, or an error that says how to get it (a dependency of this package: CLDR's data)."""
    import importlib

    try:
        return importlib.import_module(f"babel.{module}")
    except ImportError as e:
        raise ImportError("reading '3/4' in the order of the log's zone needs Babel (CLDR's data), a dependency of "
                          "this package: pip install -e . (or pip install babel)") from e


def territory_locale(territory: str) -> str:
    """The locale whose writing stands for a territory's: its English one where CLDR has it (the grammar reads
    English: "en_GB", "en_CA"), else one of its official languages' ("fr_NE"), else its likeliest ("und_NE")."""
    localedata, get_global = _babel("localedata"), _babel("core").get_global
    languages = get_global("territory_languages").get(territory, {})
    official = [lang for lang, info in languages.items()
                if (info.get("official_status") or "") in ("official", "de_facto_official")]
    return next((name for name in (f"en_{territory}", *(f"{lang}_{territory}" for lang in official))
                 if localedata.exists(name)), f"und_{territory}")


@cache
def territory_order(territory: str) -> str | None:
    """"MDY" or "DMY" for a territory code ("US", "GB"), from its locale's (:func:`territory_locale`) pattern of a
    numeric month and day (CLDR's "Md" skeleton: "M/d", "dd/MM"; else its short date pattern); None when CLDR has
    no locale for it."""
    Locale, UnknownLocaleError = _babel("core").Locale, _babel("core").UnknownLocaleError
    try:
        locale = Locale.parse(territory_locale(territory))
        pattern = locale.datetime_skeletons.get("Md") or locale.date_formats["short"]
    except (UnknownLocaleError, ValueError, KeyError):
        return None
    pattern = getattr(pattern, "pattern", str(pattern))
    month, day = pattern.find("M"), pattern.find("d")
    if month < 0 or day < 0:
        return None
    return "MDY" if month < day else "DMY"


@cache
def _territories() -> dict[str, str]:
    get_global = _babel("core").get_global
    aliases = dict(get_global("zone_aliases"))
    zones = dict(get_global("zone_territories"))
    zones = {name: t for name, t in zones.items() if len(t) == 2 and t.isalpha() and t != "ZZ"}  # not "Etc/GMT-1"
    return zones | {alias: zones[name] for alias, name in aliases.items() if name in zones}


def zone_order(name: str) -> str | None:
    """The order of a named zone's territory, or None."""
    territory = _territories().get(name)
    return None if territory is None else territory_order(territory)


@lru_cache(maxsize=4096)
def offset_order(offset: timedelta, day: date) -> str | None:
    """The order every named zone whose UTC offset on ``day`` (at noon UTC) is ``offset`` agrees on, or None."""
    noon = datetime(day.year, day.month, day.day, 12, tzinfo=timezone.utc)
    orders = set()
    for name in _territories():
        try:
            zone = ZoneInfo(name)
        except (KeyError, ValueError, OSError):
            continue
        if noon.astimezone(zone).utcoffset() == offset:
            orders.add(zone_order(name))
            if len(orders) > 1:
                return None
    return next(iter(orders)) if orders else None


def zone_name(zone: tzinfo | None) -> str | None:
    """The IANA name of a zone object (zoneinfo's ``key``, pytz's ``zone``), or None for a fixed offset."""
    name = getattr(zone, "key", None) or getattr(zone, "zone", None)
    return name if isinstance(name, str) and "/" in name else None


def order_of(reference: datetime) -> str | None:
    """"MDY", "DMY" or None (no order known) for a text read at ``reference`` (tz-aware): see the module."""
    name = zone_name(reference.tzinfo)
    if name is not None:
        return zone_order(name)
    offset = reference.utcoffset()
    if not offset:  # UTC, written "Z" or "+00:00", is how logs store time, not where anyone writes
        return None
    return offset_order(offset, reference.astimezone(timezone.utc).date())
