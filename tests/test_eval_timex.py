"""eval.timex: the scoring convention on hand-made cases, the case reader's errors, the peers' conversions, and the
command end to end on a tiny file."""

from __future__ import annotations

import json
from datetime import date, datetime, time, timedelta, timezone

import pytest

from eval import timex
from eval.timex_scoring import CaseScore, named_ends, overlaps, score_prediction, summarise
from eval.timex_systems import period_interval, recognizers_interval, timefhuman_interval
from retrieval.data.jsonio import DataError


def t(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


DAY = (t("2016-11-08"), t("2016-11-09"))


# ---- scoring -------------------------------------------------------------------------------------------------
def test_strict_is_the_equal_interval_and_implies_lenient():
    assert score_prediction(DAY, [DAY], "day") == CaseScore(True, True, True)
    shifted = (t("2016-11-08T12:00"), t("2016-11-09T12:00"))
    assert score_prediction(shifted, [DAY], "day") == CaseScore(True, False, True)
    assert score_prediction((t("2016-11-09"), t("2016-11-10")), [DAY], "day") == CaseScore(True, False, False)
    assert score_prediction(None, [DAY], "day") == CaseScore(False, False, False)


def test_instants_not_wall_clocks_are_compared():
    other_zone = timezone(timedelta(hours=2))
    same = (DAY[0].astimezone(other_zone), DAY[1].astimezone(other_zone))
    assert score_prediction(same, [DAY], "day").strict


def test_a_point_counts_for_clock_grains_only():
    hour = (t("2016-11-08T17:00"), t("2016-11-08T18:00"))
    at_five = (t("2016-11-08T17:00"), t("2016-11-08T17:00"))
    for grain in ("hour", "minute", "second"):
        assert score_prediction(at_five, [hour], grain).strict
    midnight = (DAY[0], DAY[0])
    assert score_prediction(midnight, [DAY], "day") == CaseScore(True, False, True)  # inside it: lenient only
    at_six = (t("2016-11-08T18:00"), t("2016-11-08T18:00"))
    assert score_prediction(at_six, [hour], "hour") == CaseScore(True, False, False)  # the end is not inside


def test_named_end_for_a_recognizers_span_only_where_the_end_is_aligned():
    assert named_ends(t("2016-11-22")) == [t("2016-11-23")]
    assert named_ends(t("2018-05-01")) == [t("2018-05-02"), t("2018-06-01")]
    assert named_ends(t("1500-01-01")) == [t("1500-01-02"), t("1500-02-01"), t("1501-01-01")]
    assert named_ends(t("2016-11-08T16:30")) == []
    expected = [(t("2016-11-04"), t("2016-11-22"))]  # "from 4 to 22 this month"
    through_22nd = (t("2016-11-04"), t("2016-11-23"))
    assert score_prediction(through_22nd, expected, "span_days", named_end=True) == CaseScore(True, True, True, True)
    assert not score_prediction(through_22nd, expected, "span_days", named_end=False).strict  # a TimeBank case
    assert not score_prediction((t("2016-11-05"), t("2016-11-23")), expected, "span_days", named_end=True).strict
    assert not score_prediction((t("2016-11-04"), t("2016-11-24")), expected, "span_days", named_end=True).strict
    times = [(t("2016-11-08T14:00"), t("2016-11-08T16:30"))]  # not aligned to a day: no later end counts
    assert not score_prediction((t("2016-11-08T14:00"), t("2016-11-09T16:30")), times, "span_time", True).strict
    case = timex._case({"id": "tempeval:1", "text": "x", "reference": "2016-11-07T00:00:00+00:00",
                        "expected_start": "2016-11-04T00:00:00+00:00", "expected_end": "2016-11-22T00:00:00+00:00",
                        "grain": "span_days", "category": "other"}, "timebank")
    assert not case.named_end and timex._case({**_row("recognizers:1"), "grain": "span_days"}, "r").named_end


def test_lenient_overlap_points_and_zero_length_expectations():
    assert overlaps((t("2016-11-08T23:00"), t("2016-11-10")), DAY)
    assert not overlaps((t("2016-11-07"), DAY[0]), DAY)  # half-open: touching is not overlapping
    assert overlaps((DAY[0], DAY[0]), DAY) and not overlaps((DAY[1], DAY[1]), DAY)
    instant = (t("2016-11-13"), t("2016-11-13"))  # "rest of my week" said on a Sunday
    assert overlaps((t("2016-11-13"), t("2016-11-14")), instant)
    assert not overlaps((t("2016-11-12"), t("2016-11-13")), instant)
    assert score_prediction(instant, [instant], "span_days").strict
    reversed_range = (t("2016-11-14"), t("2016-11-11"))
    assert score_prediction(reversed_range, [(t("2016-11-10"), t("2016-11-12"))], "span_days") == CaseScore(
        True, False, False)


def test_ambiguous_alternatives_either_counts():
    future, past = (t("2017-10-02"), t("2017-10-03")), (t("2016-10-02"), t("2016-10-03"))
    assert score_prediction(past, [future, past], "day").strict
    assert score_prediction(future, [future, past], "day").strict
    assert not score_prediction((t("2015-10-02"), t("2015-10-03")), [future, past], "day").lenient


def test_no_such_day_can_only_be_declined():
    impossible = [(t("0001-01-01"), t("0001-01-02"))]
    assert score_prediction((t("2020-03-01"), t("2020-03-02")), impossible, "day") == CaseScore(True, False, False)
    assert score_prediction(None, impossible, "day") == CaseScore(False, False, False)


def test_summary_arithmetic():
    scores = [CaseScore(True, True, True), CaseScore(True, True, True, True), CaseScore(True, False, True),
              CaseScore(False, False, False)]
    s = summarise(scores)
    assert (s["n"], s["strict"], s["lenient"], s["coverage"], s["precision"]) == (4, 50.0, 75.0, 75.0, 66.67)
    assert s["named_end_hits"] == 1 and s["covered"] == 3
    assert summarise([CaseScore(False, False, False)])["precision"] is None


# ---- the peers' conversions (pure functions: no peer needed) ------------------------------------------------
def test_conversions_to_intervals():
    reference = datetime(2016, 11, 7, 10, 20)
    assert period_interval(datetime(2016, 11, 9, 15), "week") == (t("2016-11-07"), t("2016-11-14"))
    assert period_interval(datetime(2016, 8, 7), "quarter") == (t("2016-07-01"), t("2016-10-01"))
    assert period_interval(datetime(2016, 11, 7), "year") == (t("2016-01-01"), t("2017-01-01"))
    assert period_interval(datetime(2016, 11, 8, 17), "time") == (t("2016-11-08T17:00"), t("2016-11-08T17:00"))
    assert recognizers_interval({"type": "date", "value": "2016-11-08"}, reference) == DAY
    assert recognizers_interval({"type": "timerange", "start": "22:00:00", "end": "02:00:00"}, reference) == (
        t("2016-11-07T22:00"), t("2016-11-08T02:00"))
    assert recognizers_interval({"type": "time", "value": "16:00:00"}, reference)[0] == t("2016-11-07T16:00")
    assert recognizers_interval({"type": "daterange", "end": "2016-01-01", "Mod": "before"}, reference) is None
    assert recognizers_interval({"type": "set", "value": "not resolved"}, reference) is None
    assert timefhuman_interval([(date(2016, 7, 4), date(2016, 7, 7))], reference) == (t("2016-07-04"), t("2016-07-08"))
    assert timefhuman_interval(time(6), reference) == (t("2016-11-07T06:00"), t("2016-11-07T06:00"))
    assert timefhuman_interval(timedelta(minutes=5), reference)[0] == t("2016-11-07T10:25")


def test_ctparse_conversion():
    pytest.importorskip("ctparse", reason="the peers extra is not installed: pip install -e '.[peers]'")
    from ctparse.types import Interval, Time

    from eval.timex_systems import ctparse_interval

    assert ctparse_interval(Time(year=2016, month=11, day=8)) == DAY
    assert ctparse_interval(Time(year=2018, month=5)) == (t("2018-05-01"), t("2018-06-01"))
    assert ctparse_interval(Time(month=10)) is None  # no year given
    assert ctparse_interval(Time(year=2016, month=11, day=8, hour=17, minute=0))[1] == t("2016-11-08T17:00")
    days = Interval(Time(year=2016, month=11, day=14), Time(year=2016, month=11, day=18))
    assert ctparse_interval(days) == (t("2016-11-14"), t("2016-11-19"))


# ---- the reader ----------------------------------------------------------------------------------------------
def _row(case_id: str, text: str = "tomorrow", start: str = "2016-11-08", end: str = "2016-11-09",
         **extra) -> dict:
    return {"id": case_id, "text": text, "sentence": f"I'll go back {text}", "reference": "2016-11-07T00:00:00+00:00",
            "expected_start": f"{start}T00:00:00+00:00", "expected_end": f"{end}T00:00:00+00:00", "grain": "day",
            "category": "relative day", **extra}


def _write(path, rows) -> str:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return str(path)


def test_reader_errors_name_the_file_and_line(tmp_path):
    with pytest.raises(DataError, match="missing.jsonl: file not found"):
        timex.read_cases(tmp_path / "missing.jsonl")
    bad = _write(tmp_path / "bad.jsonl", [_row("r:1"), "{not json"])
    with pytest.raises(DataError, match=r"bad.jsonl:2: invalid JSON"):
        timex.read_cases(bad)
    no_end = _write(tmp_path / "no_end.jsonl", [_row("r:1"), {k: v for k, v in _row("r:2").items()
                                                             if k != "expected_end"}])
    with pytest.raises(DataError, match=r"no_end.jsonl:2: missing field 'expected_end'"):
        timex.read_cases(no_end)
    naive = _write(tmp_path / "naive.jsonl", [{**_row("r:1"), "reference": "2016-11-07T00:00:00"}])
    with pytest.raises(DataError, match=r"naive.jsonl:1: field 'reference'.*no UTC offset"):
        timex.read_cases(naive)
    with pytest.raises(DataError, match="appears twice"):
        timex.read_files([_write(tmp_path / "a.jsonl", [_row("r:1")]), _write(tmp_path / "b.jsonl", [_row("r:1")])])


def test_command_rejects_bad_input_in_one_line(tmp_path, capsys):
    assert timex.main(["--data", str(tmp_path / "missing.jsonl"), "--systems", "ours_event"]) == 2
    assert capsys.readouterr().err.strip() == f"error: {tmp_path / 'missing.jsonl'}: file not found"


# ---- the command end to end ----------------------------------------------------------------------------------
def test_command_end_to_end(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rows = [_row("recognizers:1", "tomorrow"), _row("recognizers:2", "Feb 30", "0001-01-01", "0001-01-02"),
            _row("recognizers:3", "in the spring of 1066", "1066-03-01", "1066-06-01"),
            {**_row("recognizers_ambiguous:1", "Oct. 2", "2017-10-02", "2017-10-03"), "alternatives": [
                ["2017-10-02T00:00:00+00:00", "2017-10-03T00:00:00+00:00"],
                ["2016-10-02T00:00:00+00:00", "2016-10-03T00:00:00+00:00"]]}]
    data = _write(tmp_path / "tiny.jsonl", rows)
    assert timex.main(["--data", data, "--systems", "ours_event", "dateparser", "--output", "tmp/x.json",
                       "--show-failures", "1", "--failures-of", "dateparser"]) == 0
    report = json.loads((tmp_path / "tmp" / "x.json").read_text())
    assert (tmp_path / "tmp" / "x.png").stat().st_size > 0 and (tmp_path / "tmp" / "x.config.yaml").is_file()
    assert report["command"].startswith("python -m eval.timex --data")
    assert report["data"][0]["cases"] == 4 and report["data"][0]["no_such_day"] == 1
    assert len(report["data"][0]["sha256"]) == 64 and list(report["systems"]) == ["ours_event", "dateparser"]
    for system in ("ours_event", "dateparser"):
        overall = report["results"]["tiny"][system]["overall"]
        assert overall["n"] == 4 and overall["strict_hits"] >= 2  # "tomorrow" and either reading of "Oct. 2"
        assert overall["strict_hits"] <= 3  # nothing equals "no such day"
        failed = {f["id"] for cases in report["failures"][system].values() for f in cases}
        assert "recognizers:2" in failed and "recognizers:1" not in failed
        assert report["results"]["all"][system]["by_grain"]["day"]["n"] == 4
    dateparser = report["results"]["tiny"]["dateparser"]["overall"]  # declines "Feb 30" and the spring of 1066
    assert (dateparser["covered"], dateparser["strict_hits"], dateparser["lenient_hits"]) == (2, 2, 2)
    assert report["systems"]["dateparser"]["version"] and report["named_end_hits"]["dateparser"]["tiny"] == 0
    out = capsys.readouterr().out
    assert "tiny: 4 cases, 1 with no such day" in out and "dateparser: failures in" in out


def test_an_unavailable_system_is_skipped_with_a_note(tmp_path, capsys, monkeypatch):
    from eval import timex_systems

    def missing():
        raise timex_systems.Unavailable("nothing here (pip install -e '.[peers]')")

    monkeypatch.setitem(timex_systems.SYSTEMS, "ctparse", timex_systems.System("ctparse", missing, "ctparse"))
    data = _write(tmp_path / "one.jsonl", [_row("r:1")])
    assert timex.main(["--data", data, "--systems", "ctparse", "ours_event"]) == 0
    assert "note: ctparse skipped: nothing here" in capsys.readouterr().out
    assert timex.main(["--data", data, "--systems", "ctparse"]) == 2


def test_a_system_failing_on_a_case_declines_it(tmp_path, monkeypatch):
    from eval import timex_systems

    def fragile():
        def resolve(case):
            if case.text == "boom":
                raise RuntimeError("cannot read it")
            return (case.reference, case.reference + timedelta(days=1)) if case.text == "today" else "not a pair"
        return resolve

    monkeypatch.setitem(timex_systems.SYSTEMS, "ctparse", timex_systems.System("ctparse", fragile))
    data = _write(tmp_path / "f.jsonl", [_row("r:1", "boom"), _row("r:2", "today", "2016-11-07", "2016-11-08"),
                                         _row("r:3", "odd")])
    assert timex.main(["--data", data, "--systems", "ctparse", "--output", str(tmp_path / "f.json")]) == 0
    report = json.loads((tmp_path / "f.json").read_text())
    run, overall = report["systems"]["ctparse"], report["results"]["f"]["ctparse"]["overall"]
    assert run["errors"] == 2 and "RuntimeError: cannot read it" in run["error_examples"][0]
    assert (overall["covered"], overall["strict_hits"]) == (1, 1)
