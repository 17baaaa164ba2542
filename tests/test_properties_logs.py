"""Properties of the log readers and the timestamp parser, over generated logs (Hypothesis; profiles in
hypothesis_profiles): a reader never accepts a file it then misreads, and no invalid date becomes a date."""

from __future__ import annotations

import json
import tempfile
from datetime import date, datetime, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import hypothesis_profiles  # noqa: F401  (registers and loads the profiles)
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from time_strategies import logs

from retrieval.data.conversation_log import Utterance, read_jsonl_log, read_zyphra_log
from retrieval.data.jsonio import DataError
from retrieval.data.timestamps import YEARS, ZYPHRA_TIME, parse_timestamp, timestamp_problem

ANY_TEXT = st.text(max_size=40)


def repeated(stamp: datetime) -> bool:
    """Whether the wall time of ``stamp`` occurs twice in its zone (the hour repeated when the clocks go back)."""
    wall = stamp.replace(tzinfo=None)
    return wall.replace(tzinfo=stamp.tzinfo, fold=0).utcoffset() != wall.replace(tzinfo=stamp.tzinfo,
                                                                                   fold=1).utcoffset()


def same_time(a: datetime, b: datetime) -> bool:
    """The same instant, wall time and offset (``==`` across zones is False for a time in a repeated hour: PEP 495)."""
    return (a.timestamp() == b.timestamp() and a.utcoffset() == b.utcoffset()
            and a.replace(tzinfo=None) == b.replace(tzinfo=None))


def assert_read_back(utterances, back, sessions: bool = True) -> None:
    assert [u.speaker for u in back] == [u.speaker for u in utterances]
    assert [u.text for u in back] == [u.text for u in utterances]
    assert [u.response_idx for u in back] == [u.response_idx for u in utterances]
    assert all(same_time(b.timestamp, u.timestamp) for b, u in zip(back, utterances, strict=True)), \
        [(b.timestamp.isoformat(), u.timestamp.isoformat()) for b, u in zip(back, utterances)
         if not same_time(b.timestamp, u.timestamp)]
    if sessions:
        assert [u.session for u in back] == [u.session for u in utterances]


def write_jsonl(folder: str, utterances, offsets: bool, sessions: bool) -> Path:
    path = Path(folder) / "chat.jsonl"
    lines = [{"speaker": u.speaker, "text": u.text,
              "timestamp": (u.timestamp if offsets else u.timestamp.replace(tzinfo=None)).isoformat(),
              **({"session": u.session} if sessions else {})} for u in utterances]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def check_jsonl_round_trip(log, offsets: bool, sessions: bool) -> None:
    """Written with offsets (read with no tz) or as wall times (read in the log's zone): read back exactly, sessions
    given or found from the silences; or refused, and then only for a wall time the zone repeats."""
    zone, utterances = log
    with tempfile.TemporaryDirectory() as folder:
        path = write_jsonl(folder, utterances, offsets, sessions)
        try:
            back = read_jsonl_log(path, tz=None if offsets else zone)
        except DataError as e:
            assert not offsets and any(repeated(u.timestamp) for u in utterances), str(e)
            assert "occurs twice" in str(e)
            return
    assert_read_back(utterances, back)


def check_zyphra_round_trip(log) -> None:
    """A Zyphra log (wall times in the dataset's format, read in the log's zone) reads back exactly, or is refused
    for a repeated wall time only."""
    zone, utterances = log
    data: dict[str, list] = {}
    for u in utterances:
        data.setdefault(f"session_{u.session}", []).append(
            {"speaker": u.speaker, "dia_id": u.turn_id, "text": u.text,
             "date_time": u.timestamp.strftime(ZYPHRA_TIME), "response_number": str(u.response_idx)})
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "1.json"
        path.write_text(json.dumps(data))
        try:
            back = read_zyphra_log(path, tz=zone)
        except DataError as e:
            assert any(repeated(u.timestamp) for u in utterances) and "occurs twice" in str(e), str(e)
            return
    assert_read_back(utterances, back)
    assert [u.turn_id for u in back] == [u.turn_id for u in utterances]


@given(log=logs(texts=ANY_TEXT), offsets=st.booleans(), sessions=st.booleans())
def test_jsonl_log_reads_back_what_was_written(log, offsets, sessions):
    check_jsonl_round_trip(log, offsets, sessions)


@given(log=logs(texts=ANY_TEXT))
def test_zyphra_log_reads_back_what_was_written(log):
    check_zyphra_round_trip(log)


@given(y=st.integers(1900, 2100), m=st.integers(0, 19), d=st.integers(0, 39), mode=st.sampled_from(
    ["strict", "lenient"]), clock=st.sampled_from(["", "T10:30:00", " 23:59:59", "T10:30:00+02:00"]))
def test_an_iso_date_is_read_exactly_or_not_at_all(y, m, d, mode, clock):
    text = f"{y:04d}-{m:02d}-{d:02d}{clock}"
    parsed = parse_timestamp(text, None, mode)
    try:
        expected = date(y, m, d)
    except ValueError:
        assert parsed is None, (text, parsed)
        return
    if not YEARS[0] <= y <= YEARS[1]:  # a year no log means (a typo): refused, and timestamp_problem says why
        assert parsed is None and "in the year" in timestamp_problem(text, mode)[1]
        return
    assert parsed is not None and parsed.date() == expected


@given(stamp=st.datetimes(datetime(2000, 1, 1), datetime(2030, 1, 1)),
       ago=st.sampled_from(["2 hours ago", "yesterday", "last week", "3 days ago", "now"]))
def test_strict_reading_never_depends_on_the_wall_clock(stamp, ago):
    assert parse_timestamp(ago, None) is None
    assert parse_timestamp(stamp.isoformat(), None) == parse_timestamp(stamp.isoformat(), None) is not None
    assert parse_timestamp(stamp.isoformat(), None).replace(tzinfo=None) == stamp


# ---- the slow variants: many more examples, behind -m slow ------------------------------------------------------
@pytest.mark.slow
@settings(hypothesis_profiles.SLOW)
@given(log=logs(texts=ANY_TEXT), offsets=st.booleans(), sessions=st.booleans())
def test_jsonl_log_reads_back_what_was_written_many(log, offsets, sessions):
    check_jsonl_round_trip(log, offsets, sessions)


@pytest.mark.slow
@settings(hypothesis_profiles.SLOW)
@given(log=logs(texts=ANY_TEXT))
def test_zyphra_log_reads_back_what_was_written_many(log):
    check_zyphra_round_trip(log)


def test_a_silence_across_a_dst_change_is_elapsed_time():
    """The case the session property found: 01:50 and 03:10 in Paris on 31 March 2024 are 20 minutes apart (the
    clocks went from 02:00 to 03:00), so one session, though the wall clocks differ by 80 minutes."""
    paris = ZoneInfo("Europe/Paris")
    stamps = [datetime(2024, 3, 31, 0, 50, tzinfo=timezone.utc), datetime(2024, 3, 31, 1, 10, tzinfo=timezone.utc)]
    log = (paris, [Utterance(i, 1, "Ann", t.astimezone(paris), "hi", "") for i, t in enumerate(stamps)])
    for offsets in (False, True):
        check_jsonl_round_trip(log, offsets=offsets, sessions=False)
