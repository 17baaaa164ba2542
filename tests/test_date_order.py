"""Which number comes first in "3/4" follows where the text is written (CLDR through Babel): the zone's territory,
or, for a fixed offset, what every zone with it agrees on; UTC and a disagreement leave the conventions' order."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from retrieval.timex import DEFAULT, UTTERANCE, Context, read
from retrieval.timex.date_order import order_of, territory_order


def at(zone) -> datetime:
    return datetime(2025, 3, 12, 18, tzinfo=zone)


@pytest.mark.parametrize("zone, order", [
    (ZoneInfo("Europe/London"), "DMY"), (ZoneInfo("America/New_York"), "MDY"), (ZoneInfo("Asia/Tokyo"), "MDY"),
    (ZoneInfo("Australia/Sydney"), "DMY"), (ZoneInfo("America/Toronto"), "DMY"),
    (timezone(timedelta(hours=-4)), None),  # New York's summer and Caracas: no agreement
    (timezone.utc, None), (timezone(timedelta(0)), None),  # how logs store time, not a place
])
def test_the_order_of_a_zone(zone, order):
    assert order_of(at(zone)) == order


def test_a_fixed_offset_takes_the_order_its_zones_agree_on():
    assert order_of(datetime(2025, 4, 1, 12, tzinfo=timezone(timedelta(hours=1)))) == "DMY"  # London's summer
    assert territory_order("SE") == "DMY"  # the year-less pattern ("3/4"), not the full date's ("2025-04-03")


def test_a_numeric_date_is_read_in_the_order_of_where_it_was_written():
    def day(zone, conventions=UTTERANCE):
        (m,) = read("we fly out on 3/4", Context(at(zone), conventions=conventions)).mentions
        return m.interval[0].date().isoformat(), m.choices[0].why

    london, why = day(ZoneInfo("Europe/London"))
    assert london == "2025-04-03" and "day first as in Europe/London" in why
    assert day(ZoneInfo("America/New_York"))[0] == "2026-03-04"
    assert day(timezone.utc)[0] == "2026-03-04"  # no place: month first
    assert day(ZoneInfo("Europe/London"), DEFAULT)[0] == "2026-03-04"  # the default conventions keep their order


def test_without_babel_the_error_says_how_to_get_it(monkeypatch):
    import sys

    from retrieval.timex import places

    monkeypatch.setitem(sys.modules, "babel.core", None)
    with pytest.raises(ImportError, match="pip install"):
        places.babel("core")
