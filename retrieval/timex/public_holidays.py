"""The holidays of the places a text is written in (:mod:`retrieval.timex.places`), from the ``holidays`` package
(national and regional public holidays of some 250 territories, kept up to date by its maintainers): "Family Day"
read in Toronto is Ontario's third Monday of February, "Thanksgiving" there the second Monday of October, "the
bank holiday" in Dublin one of Ireland's.

A name is looked up by its words (:func:`name_key`: "St. Patrick's Day", "saint patricks day" and "patrick's day"
are one name). Each territory keeps it in some of its calendars (the national one and one per region: a state, a
province, a nation of the United Kingdom); its **share** there is the part of those calendars that keep it on that
day, the national calendar counting for all. Of the places a text may be written in, the day with the largest share
is the name's: the day most of its readers would mean. A tie between two days is no reading (the conventions'
calendar, :mod:`retrieval.timex.rules.holidays`, decides where it knows the name). A name kept by fewer than
:data:`MIN_SHARE` of a place's calendars is not that place's: Nevada's "Family Day" (one of 57) is not what a
reader in New York means, Victoria's Melbourne Cup (one of 9) is Melbourne's.

The days of "the bank holiday" are those a territory keeps in at least half of its calendars.
"""

from __future__ import annotations

import re
import warnings
from collections import defaultdict
from datetime import date
from functools import cache

_ALIASES = {"paddy": "patrick", "paddys": "patrick", "patty": "patrick", "pattys": "patrick", "xmas": "christmas",
            "labor": "labour"}
MIN_SHARE = 0.1  # a setting, chosen on one development chat (see the module), not fitted to any score
_SPLIT = re.compile(r"\s*(?:;|/|,\s+and\s+)\s*")  # "Canada Day; Memorial Day": two names on one day


def name_key(text: str) -> str:
    """The words that name a holiday, compared without case, apostrophes, a last "s" ("patricks", "new years"),
    "saint", "the" and a last "day"."""
    words = re.findall(r"[a-z0-9]+", re.sub(r"['’.]", "", text.lower()))
    words = [_ALIASES.get(w, w) for w in words if w not in ("the", "saint", "st")]
    words = [w[:-1] if w.endswith("s") and len(w) > 3 else w for w in words]
    if len(words) > 1 and words[-1] == "day":
        words = words[:-1]
    return " ".join(words)


def _library():
    """The ``holidays`` package, or None where it is not installed (the conventions' calendar alone then)."""
    import importlib

    try:
        return importlib.import_module("holidays")
    except ImportError:
        return None


@cache
def _calendars(territory: str, year: int) -> tuple[dict[str, date], ...]:
    """Name key -> day, one map per calendar of the territory (its national one first, then each region's); a
    calendar the package cannot compute for that year keeps nothing (its warnings, "available only from 2001 to
    2035", are not passed on)."""
    lib = _library()
    regions = lib.list_supported_countries().get(territory) if lib is not None else None
    if regions is None:
        return ()
    out = []
    calendars = [_kept(lib, territory, region, year) for region in (None, *regions)]
    for kept in calendars:
        names: dict[str, date] = {}
        for day, joined in kept:
            for name in _SPLIT.split(joined):
                names.setdefault(name_key(name), day)
        out.append(names)
    return tuple(out)


def _kept(lib, territory: str, region: str | None, year: int) -> list[tuple[date, str]]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kept = lib.country_holidays(territory, subdiv=region, years=year, observed=False,
                                        language=_english(lib, territory))
            return sorted(kept.items())
    except Exception:  # noqa: BLE001 - a calendar the package cannot compute is one that keeps nothing
        return []


@cache
def _english(lib, territory: str) -> str | None:
    """"en_US" where the package names the territory's holidays in it, else None (its own language)."""
    return "en_US" if "en_US" in lib.country_holidays(territory).supported_languages else None


@cache
def shares(territory: str, year: int) -> dict[str, dict[date, float]]:
    """Name key -> {day: share}: the part of the territory's calendars that keep the name on that day (the
    national calendar counting for all). Cached: do not change what it returns."""
    calendars = _calendars(territory, year)
    out: dict[str, dict[date, float]] = defaultdict(lambda: defaultdict(float))
    if not calendars:
        return {}
    national, regions = calendars[0], calendars[1:]
    for key, day in national.items():
        out[key][day] = 1.0
    for region in regions:
        for key, day in region.items():
            if key not in national:
                out[key][day] += 1 / len(regions)
    return {k: dict(v) for k, v in out.items()}


def named_day(key: str, year: int, places: tuple[str, ...]) -> tuple[bool, date | None]:
    """(whether any of ``places`` keeps the name, the day with the largest share among them or None on a tie)."""
    best: dict[date, float] = defaultdict(float)
    for territory in places:
        for day, share in shares(territory, year).get(key, {}).items():
            if share >= MIN_SHARE:
                best[day] = max(best[day], share)
    if not best:
        return False, None
    ranked = sorted(best.items(), key=lambda kv: -kv[1])
    if len(ranked) > 1 and ranked[1][1] == ranked[0][1]:
        return True, None
    return True, ranked[0][0]


def public_days(territory: str, year: int, weekday: int | None = None) -> tuple[date, ...]:
    """The days the territory keeps as holidays in at least half of its calendars, in order (those on
    ``weekday`` alone, 0 = Monday, where given)."""
    days = {day for per_day in shares(territory, year).values() for day, share in per_day.items() if share >= 0.5}
    return tuple(sorted(d for d in days if weekday is None or d.weekday() == weekday))


def calls_bank_holidays(territory: str, year: int) -> bool:
    """Whether the territory names any of its holidays a "bank holiday" (Britain, Ireland)."""
    return any("bank holiday" in key for key in shares(territory, year))
