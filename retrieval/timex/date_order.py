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

from datetime import datetime
from functools import cache

from retrieval.timex.places import babel, territories_of


def territory_locale(territory: str) -> str:
    """The locale whose writing stands for a territory's: its English one where CLDR has it (the grammar reads
    English: "en_GB", "en_CA"), else one of its official languages' ("fr_NE"), else its likeliest ("und_NE")."""
    localedata, get_global = babel("localedata"), babel("core").get_global
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
    Locale, UnknownLocaleError = babel("core").Locale, babel("core").UnknownLocaleError
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


def order_of(reference: datetime) -> str | None:
    """"MDY", "DMY" or None (no order known) for a text read at ``reference`` (tz-aware): the order every territory
    it may be written in (:func:`~retrieval.timex.places.territories_of`) agrees on; see the module."""
    orders = {territory_order(t) for t in territories_of(reference)}
    return next(iter(orders)) if len(orders) == 1 else None
