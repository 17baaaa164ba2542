"""A holiday's name is read as the places of the log's zone keep it (the ``holidays`` package's calendars): "Family
Day" in Toronto, "Thanksgiving" in Toronto and New York, "the bank holiday" in Dublin; where no place keeps a name,
the conventions' (US) calendar, and where the places disagree on "the bank holiday", no reading."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from retrieval.timex import DEFAULT, QUESTION, UTTERANCE, Context, read
from retrieval.timex import public_holidays as ph
from retrieval.timex.places import territories_of
from retrieval.timex.rules.holidays import HOLIDAY_PATTERN

TORONTO, NEW_YORK = ZoneInfo("America/Toronto"), ZoneInfo("America/New_York")
DUBLIN, LONDON, SYDNEY = ZoneInfo("Europe/Dublin"), ZoneInfo("Europe/London"), ZoneInfo("Australia/Sydney")


def hours(h: float) -> timezone:
    return timezone(timedelta(hours=h))


def day(text: str, reference: datetime, conventions=UTTERANCE) -> str | None:
    """The first day of the one mention of ``text``, or None where it was read and not placed."""
    (m,) = read(text, Context(reference, conventions=conventions)).mentions
    return None if m.interval is None else m.interval[0].date().isoformat()


@pytest.mark.parametrize("a, b", [("St. Patrick's Day", "paddy's day"), ("Saint Patrick's Day", "patricks day"),
                                  ("Labor Day", "labour day"), ("New Year's Day", "new years"),
                                  ("ANZAC Day", "anzac day"), ("Christmas Day", "xmas")])
def test_one_name_however_it_is_written(a, b):
    assert ph.name_key(a) == ph.name_key(b)


def test_the_places_of_a_zone():
    assert territories_of(datetime(2025, 4, 1, tzinfo=LONDON)) == ("GB",)
    assert {"GB", "IE"} <= set(territories_of(datetime(2025, 4, 1, tzinfo=hours(1))))  # Irish and British summer
    assert territories_of(datetime(2025, 4, 1, tzinfo=timezone.utc)) == ()  # how logs store time, not a place


def test_a_name_on_the_day_the_place_keeps_it():
    assert day("any family day plans?", datetime(2025, 2, 14, 20, tzinfo=TORONTO)) == "2025-02-17"
    assert day("thanksgiving at my parents", datetime(2025, 9, 14, tzinfo=TORONTO)) == "2025-10-13"
    assert day("thanksgiving at my parents", datetime(2025, 9, 14, tzinfo=NEW_YORK)) == "2025-11-27"
    assert day("off for the king's birthday", datetime(2025, 5, 20, tzinfo=SYDNEY)) == "2025-06-09"
    assert day("the labour day long weekend", datetime(2025, 9, 20, tzinfo=SYDNEY)) == "2025-10-06"  # NSW's
    assert day("may day", datetime(2025, 4, 20, tzinfo=LONDON)) == "2025-05-05"  # Britain's first Monday
    assert day("dawn service on anzac day", datetime(2025, 4, 20, tzinfo=hours(10))) == "2025-04-25"


def test_a_fixed_offset_takes_the_day_most_of_its_places_keep():
    # -05:00 in February: Canada's Family Day (five provinces) over Nevada's (one state of fifty)
    assert day("any family day plans?", datetime(2025, 2, 14, tzinfo=hours(-5))) == "2025-02-17"
    # -04:00 in September: the United States keep Thanksgiving nationally, Canada by province
    assert day("thanksgiving at my parents", datetime(2025, 9, 14, tzinfo=hours(-4))) == "2025-11-27"


def test_the_bank_holiday_is_one_of_the_places_days():
    said = datetime(2025, 4, 3, 23, tzinfo=DUBLIN)
    assert day("so you're around bank holiday monday?", said) == "2025-04-21"  # Easter Monday
    assert day("the june bank holiday weekend", said) == "2025-05-31"
    assert day("we're away for the august bank holiday", datetime(2025, 5, 3, tzinfo=DUBLIN)) == "2025-08-04"
    assert day("we're away for the august bank holiday", datetime(2025, 5, 3, tzinfo=LONDON)) == "2025-08-25"
    assert day("so you're around bank holiday monday?", datetime(2025, 4, 3, tzinfo=hours(1))) == "2025-04-21"


def test_places_that_disagree_and_no_place_give_no_reading():
    # +01:00 in May is Britain (26 May) and Ireland (2 June): which bank holiday is not said
    assert day("see you after the bank holiday", datetime(2025, 5, 20, tzinfo=hours(1))) is None
    assert day("any family day plans?", datetime(2025, 2, 14, tzinfo=timezone.utc)) is None  # UTC names no place
    assert day("see you after the bank holiday", datetime(2025, 5, 20, tzinfo=timezone.utc)) is None


def test_the_default_conventions_keep_the_us_calendar():
    assert day("thanksgiving at my parents", datetime(2025, 9, 14, tzinfo=TORONTO), DEFAULT) == "2025-11-27"
    assert day("any family day plans?", datetime(2025, 2, 14, tzinfo=TORONTO), DEFAULT) is None
    assert day("what did we talk about on family day", datetime(2025, 4, 9, tzinfo=TORONTO), QUESTION) == \
        "2025-02-17"


def test_names_compose_as_other_days_do():
    said = datetime(2025, 3, 20, tzinfo=TORONTO)
    assert day("next family day", said) == "2026-02-16"
    assert day("family day 2023", said) == "2023-02-20"
    assert day("the tuesday after victoria day", said) == "2025-05-20"


def test_without_the_package_only_the_conventions_calendar(monkeypatch):
    monkeypatch.setattr(ph, "_library", lambda: None)
    ph._calendars.cache_clear()
    ph.shares.cache_clear()
    try:
        assert day("any family day plans?", datetime(2025, 2, 14, 20, tzinfo=TORONTO)) is None
        assert day("thanksgiving at my parents", datetime(2025, 9, 14, tzinfo=TORONTO)) == "2025-11-27"
    finally:
        ph._calendars.cache_clear()
        ph.shares.cache_clear()


@pytest.mark.parametrize("name", ["family day", "victoria day", "civic holiday", "islander day", "louis riel day",
                                  "heritage day", "king's birthday", "melbourne cup day", "eight hours day",
                                  "matariki", "st brigid's day", "spring bank holiday", "late summer bank holiday",
                                  "summer bank holiday"])
def test_every_regional_name_is_a_name_some_place_keeps(name):
    assert re.fullmatch(HOLIDAY_PATTERN, name)
    kept = [t for t in ("CA", "AU", "NZ", "GB", "IE", "ZA") if ph.name_key(name) in ph.shares(t, 2025)]
    assert kept, f"{name!r} is kept nowhere the package knows"


def test_shares_count_the_national_calendar_for_all():
    shares = ph.shares("CA", 2025)
    assert shares["canada"] == {date(2025, 7, 1): 1.0}
    assert 0 < shares["family"][date(2025, 2, 17)] < 0.5  # five of thirteen provinces and territories


def test_a_tie_between_places_says_whose_day_was_taken():
    from retrieval.timex.rules.holidays import holiday_time, in_places

    labour = holiday_time("labour day").series  # the United States' first Monday of September, New Zealand's
    tied = in_places(labour, ("NZ", "US"), 2025)  # fourth Monday of October: each its national holiday
    assert next(tied.forward(datetime(2025, 8, 1)))[0].date() == date(2025, 9, 1)  # the conventions' day
    assert tied.calendar.startswith("as kept in NZ, US; in 2024, 2025, 2026 they keep it on different days")
    assert tied.calendar.endswith("the conventions' day")
    assert in_places(labour, ("NZ",), 2025).calendar == "as kept in NZ"  # one place: no tie to speak of
    family = in_places(holiday_time("family day").series, ("CA",), 2025)
    assert family.calendar == "as kept in CA"


def test_the_reading_says_whose_calendar_it_took():
    said = Context(datetime(2025, 2, 14, tzinfo=hours(-5)), conventions=UTTERANCE)
    (m,) = read("any family day plans?", said).mentions
    assert ("calendar", "as kept in CA") in [(c.what, c.value) for c in m.choices]
    (m,) = read("bank holiday monday?", Context(datetime(2025, 4, 3, tzinfo=hours(1)), conventions=UTTERANCE)).mentions
    (calendar,) = [c.value for c in m.choices if c.what == "calendar"]
    assert "GB" in calendar and "IE" in calendar and "all keep" in calendar
    (m,) = read("thanksgiving", Context(datetime(2025, 9, 1, tzinfo=timezone.utc), conventions=UTTERANCE)).mentions
    assert "calendar" not in [c.what for c in m.choices]  # the conventions' own calendar says nothing more


def test_a_zone_known_by_its_offsets_stands_for_every_place_with_them():
    from retrieval.data.timestamps import calendar_zone, stored_zone
    from retrieval.timex.date_order import order_of
    from retrieval.timex.places import OffsetsZone

    stamps = [datetime(2025, 2, 14, 20, tzinfo=hours(-5)), datetime(2025, 4, 2, 20, tzinfo=hours(-4))]
    zone = calendar_zone(stamps=stamps)
    assert zone.source == "offsets" and isinstance(zone.zone, OffsetsZone) and str(zone.zone) == "America/New_York"
    said = datetime(2025, 2, 14, 20, tzinfo=zone.zone)
    assert {"US", "CA"} <= set(territories_of(said))  # New York's offsets are Toronto's
    assert day("any family day plans?", said) == "2025-02-17"  # Ontario's, not Nevada's
    assert day("thanksgiving at my parents", said) == "2024-11-28"  # the nearer; kept nationally in the US
    assert order_of(datetime(2025, 4, 1, tzinfo=OffsetsZone("Europe/London"))) == "DMY"  # Britain, Ireland, ...
    # a memory records the zone's name and source, and reads it back as the same kind of zone
    assert isinstance(stored_zone("America/New_York", "offsets").zone, OffsetsZone)
    assert not isinstance(stored_zone("America/New_York", "given").zone, OffsetsZone)
    assert territories_of(datetime(2025, 2, 14, tzinfo=ZoneInfo("America/New_York"))) == ("US",)  # named: its own


def test_a_year_the_package_cannot_compute_keeps_nothing_and_says_nothing(recwarn):
    ph._calendars.cache_clear()
    ph.shares.cache_clear()
    ph.shares("IN", 1970)  # India's calendars are computed for 2001-2035 only
    assert not [w for w in recwarn if "available only" in str(w.message)]
