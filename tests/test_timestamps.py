"""Strict timestamps: absolute stamps only unless lenient is asked for, ISO-shaped nonsense refused in every mode,
errors naming the file, the turn and the raw value; the zone of the calendar and who chose it."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from retrieval.data.conversation_log import assign_sessions, load_log, read_jsonl_log, read_locomo, read_zyphra_log
from retrieval.data.jsonio import DataError
from retrieval.data.timestamps import (
    NAIVE_STAMP_ZONE,
    calendar_zone,
    check_mode,
    parse_timestamp,
    read_timestamp,
    timestamp_problem,
)
from retrieval.trends.corpus import load_corpus

PARIS = ZoneInfo("Europe/Paris")


def write_jsonl(path, stamps, **extra):
    path.write_text("".join(json.dumps({"speaker": "me", "text": f"line {i}", "timestamp": t, **extra}) + "\n"
                            for i, t in enumerate(stamps)))
    return path


@pytest.mark.parametrize("text", ["2 hours ago", "yesterday", "now", "next week", "in 2 days", "13/05/2023"])
def test_strict_refuses_relative_and_free_form_stamps(text):
    assert parse_timestamp(text, None) is None
    category, why = timestamp_problem(text)
    assert category.startswith("relative or free-form") and "timestamps='lenient'" in why


@pytest.mark.parametrize("text", ["2023-13-01", "2023-02-30", "2023-05-08T25:00", "2023-5-8", "2023-00-10"])
def test_iso_shaped_nonsense_is_never_a_date(text):
    for mode in ("strict", "lenient", "%Y-%d-%m"):
        assert read_timestamp(text, mode) is None, mode
    assert timestamp_problem(text)[0] == "invalid ISO 8601 timestamp"


def test_lenient_reads_free_form_and_a_format_reads_its_own():
    assert parse_timestamp("May 8, 2023", None, "lenient") == datetime(2023, 5, 8, tzinfo=NAIVE_STAMP_ZONE)
    assert parse_timestamp("08.05.2023 13:56", None, "%d.%m.%Y %H:%M").hour == 13
    assert parse_timestamp("08.05.2023 13:56", None) is None
    with pytest.raises(ValueError, match="timestamps must be"):
        check_mode("loose")
    # a format strptime cannot use is refused when given, not left unused because the log's stamps are ISO
    with pytest.raises(ValueError, match="'Q' is a bad directive"):
        check_mode("%Q %d")
    with pytest.raises(ValueError, match="stray %"):
        check_mode("%d.%m.%Y %")


def test_strict_reads_iso_and_the_dataset_formats():
    assert parse_timestamp("01:56:04 AM on Monday 08 May, 2023", None) == datetime(2023, 5, 8, 1, 56, 4,
                                                                                  tzinfo=NAIVE_STAMP_ZONE)
    assert parse_timestamp("1:56 pm on 8 May, 2023", None).hour == 13
    aware = parse_timestamp("2024-03-18T00:30:00+01:00", None)
    assert aware.utcoffset() == timedelta(hours=1) and aware.day == 18  # kept in the zone it is written in
    assert parse_timestamp("2024-03-18T00:30:00+01:00", ZoneInfo("UTC")).day == 17  # converted when tz is given


def test_a_wall_time_the_clocks_skip_is_refused():
    assert parse_timestamp("2024-03-31T02:30:00", PARIS) is None
    assert "does not exist" in timestamp_problem("2024-03-31T02:30:00", "strict", PARIS)[1]
    assert parse_timestamp("2024-03-31T03:30:00", PARIS).utcoffset() == timedelta(hours=2)


def test_jsonl_relative_stamp_is_an_error_at_its_own_line(tmp_path):
    path = write_jsonl(tmp_path / "chat.jsonl", ["2023-05-08T10:00:00", "yesterday", "2023-05-08T10:05:00"])
    with pytest.raises(DataError, match=r"chat\.jsonl:2: .*'yesterday'.*timestamps='lenient'"):
        read_jsonl_log(path)
    with pytest.raises(DataError, match=r"chat\.jsonl:3: .*earlier than the line before \(line 2: 'yesterday'"):
        read_jsonl_log(path, timestamps="lenient")  # read against the wall clock, as asked: then out of order


def test_two_hours_ago_opens_no_wall_clock_session(tmp_path):
    path = write_jsonl(tmp_path / "chat.jsonl", ["2023-05-08T10:00:00", "2 hours ago"])
    with pytest.raises(DataError, match=r"chat\.jsonl:2: .*'2 hours ago'"):
        load_log(path)
    late = read_jsonl_log(path, timestamps="lenient")  # the opt-in reads it against the wall clock
    assert late[1].timestamp.year > 2023 and late[1].session == 2


def test_jsonl_invalid_iso_is_refused_even_when_lenient(tmp_path):
    path = write_jsonl(tmp_path / "chat.jsonl", ["2023-12-31T10:00:00", "2023-13-01"])
    for mode in ("strict", "lenient"):
        with pytest.raises(DataError, match=r"chat\.jsonl:2: .*'2023-13-01'.*not a valid ISO 8601"):
            read_jsonl_log(path, timestamps=mode)


def test_zyphra_and_locomo_name_session_turn_and_value(tmp_path):
    turn = {"speaker": "Ann", "dia_id": "D1:1", "text": "hi", "date_time": "2 hours ago", "response_number": "0"}
    (tmp_path / "z.json").write_text(json.dumps({"session_1": [turn]}))
    with pytest.raises(DataError, match=r"z\.json: session_1 turn 0 \(D1:1\): .*'2 hours ago'.*lenient"):
        read_zyphra_log(tmp_path / "z.json")
    sample = [{"sample_id": "c1", "conversation": {"session_1_date_time": "last Monday", "session_1": [turn]}}]
    (tmp_path / "l.json").write_text(json.dumps(sample))
    with pytest.raises(DataError, match=r"l\.json: c1: session_1_date_time: .*'last Monday'"):
        read_locomo(tmp_path / "l.json")


def test_trend_documents_skip_relative_stamps_unless_lenient(tmp_path):
    path = tmp_path / "docs.jsonl"
    rows = [{"text": "a", "timestamp": "2023-01-05T10:00:00"}, {"text": "b", "timestamp": "2 hours ago"},
            {"text": "c", "timestamp": "2023-13-01"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    strict = load_corpus(path)
    assert len(strict.table) == 1
    assert sorted(s["reason"] for s in strict.skipped) == [
        "invalid ISO 8601 timestamp", "relative or free-form timestamp (timestamps='lenient' reads it)"]
    lenient = load_corpus(path, timestamps="lenient")
    assert len(lenient.table) == 2 and [s["reason"] for s in lenient.skipped] == ["invalid ISO 8601 timestamp"]


def test_sessions_split_on_elapsed_time_across_a_dst_change():
    # 01:50 and 03:10 Paris on 31 March 2024 are 20 minutes apart: the clocks went from 02:00 to 03:00
    stamps = [datetime(2024, 3, 31, 1, 50, tzinfo=PARIS), datetime(2024, 3, 31, 3, 10, tzinfo=PARIS)]
    assert assign_sessions(stamps) == [1, 1]


def test_calendar_zone_order():
    plus1 = timezone(timedelta(hours=1))
    written = [datetime(2024, 3, 18, tzinfo=plus1)] * 2
    ny = datetime(2024, 3, 18, tzinfo=ZoneInfo("America/New_York"))
    assert calendar_zone("Europe/Paris", written, ny).source == "given"
    assert calendar_zone(None, written, ny) == calendar_zone(None, written)  # the log's zone beats now's
    assert calendar_zone(None, written).zone == plus1 and calendar_zone(None, written).source == "log"
    summer = written + [datetime(2024, 4, 18, tzinfo=timezone(timedelta(hours=2)))]  # a daylight-saving change
    assert (calendar_zone(None, summer, ny).source, calendar_zone(None, summer, ny).name) == ("offsets", "Europe/Paris")
    mixed = written + [datetime(2024, 3, 18, 5, tzinfo=timezone(timedelta(hours=3)))]  # no zone has both then
    assert calendar_zone(None, mixed, ny).source == "now"
    naive_read = [datetime(2024, 3, 18, tzinfo=NAIVE_STAMP_ZONE)]
    assert calendar_zone(None, naive_read, ny).zone == ny.tzinfo
    assert calendar_zone(None, naive_read).source == "default" and "UTC" in calendar_zone().note


def test_a_wall_time_the_clocks_repeat_is_refused_unless_it_carries_its_offset(tmp_path):
    assert parse_timestamp("2024-10-27T02:30:00", PARIS) is None
    assert "occurs twice" in timestamp_problem("2024-10-27T02:30:00", "strict", PARIS)[1]
    assert parse_timestamp("2024-10-27T02:30:00+01:00", PARIS).utcoffset() == timedelta(hours=1)
    path = write_jsonl(tmp_path / "chat.jsonl", ["2024-10-27T01:50:00", "2024-10-27T02:30:00"])
    with pytest.raises(DataError, match=r"chat\.jsonl:2: .*'2024-10-27T02:30:00'.*occurs twice in Europe/Paris"):
        read_jsonl_log(path, tz="Europe/Paris")
    assert len(read_jsonl_log(path)) == 2  # read as UTC, where no hour repeats


def test_a_log_that_changes_offset_takes_the_named_zone_whose_offsets_match():
    from retrieval.data.timestamps import calendar_zone, offsets_zone

    new_york = [datetime.fromisoformat(s) for s in ("2025-03-07T23:18:00-05:00", "2025-03-08T00:04:00-05:00",
                                                     "2025-03-11T19:02:00-04:00")]
    got = calendar_zone(None, new_york)
    assert (got.name, got.source) == ("America/New_York", "offsets") and "match every timestamp" in got.note
    # a turn at 00:04 -05:00 stays on its own local day: the 8th, not the 7th (UTC-04:00) nor the 8th by accident
    assert new_york[1].astimezone(got.zone).date().isoformat() == "2025-03-08"
    london = [datetime.fromisoformat(s) for s in ("2025-03-29T10:00:00+00:00", "2025-03-31T00:30:00+01:00")]
    assert str(offsets_zone(london)) == "Europe/London"
    # one offset is the log's own zone; offsets no zone has at those times give none (the zone of now, else UTC)
    assert offsets_zone(new_york[:2]) is None and calendar_zone(None, new_york[:2]).source == "log"
    odd = [datetime.fromisoformat(s) for s in ("2025-03-29T10:00:00+00:00", "2025-03-29T11:00:00+03:00")]
    assert offsets_zone(odd) is None and calendar_zone(None, odd).source == "default"


def test_a_log_that_changes_offset_keeps_its_zone_when_now_is_written_in_one_of_its_offsets(tmp_path):
    from retrieval.memory.conversation_table import ConversationTable

    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps({"speaker": "A", "text": t, "timestamp": s}) for t, s in (
        ("before the change", "2025-03-07T23:18:00-05:00"), ("after it", "2025-03-11T19:02:00-04:00"))))
    table = ConversationTable.from_utterances(load_log(path), None, None, turns=False)
    assert table.zone.name == "America/New_York"
    assert table.zone_for(datetime.fromisoformat("2025-04-16T09:00:00-04:00")).name == "America/New_York"
