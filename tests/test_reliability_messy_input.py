"""Messy input found by trying the commands as a careless user would: a zone that is no zone, a year no log means,
a file that is not UTF-8, a trend over a stray timestamp's century, a window that runs backwards, a log from the
future, a second log of another zone, a chat command that is not one, a blank turn over HTTP. Each ends with one
line that names what and where, or is said first in the answer; none with a traceback or a silent answer."""

from __future__ import annotations

import io
import json
import re

import pytest
from pydantic import ValidationError

from retrieval.data.conversation_log import load_log
from retrieval.data.jsonio import DataError, iter_jsonl
from retrieval.data.timestamps import as_timezone, parse_timestamp, timestamp_problem
from retrieval.memory.live import chat, main
from retrieval.memory.temporal_memory import TemporalMemory
from retrieval.service.api import TurnIn
from retrieval.trends.analysis import TrendConfig, analyse_trend
from retrieval.trends.corpus import load_corpus
from tests.test_live_command import write_log
from tests.test_trends import BagOfWordsEncoder, write_docs


@pytest.mark.parametrize("zone", ["Mars/Olympus", "+25:00", "../etc/passwd"])
def test_a_zone_that_is_no_zone_is_one_error_naming_it(zone):
    with pytest.raises(DataError, match=re.escape(f"time zone '{zone}'")):
        as_timezone(zone)


def test_a_year_no_log_means_is_refused_and_said_why():
    assert parse_timestamp("9999-12-31T23:59:00-05:00", None) is None
    assert "in the year 9999" in timestamp_problem("9999-12-31T23:59:00-05:00")[1]
    assert parse_timestamp("2199-12-31T10:00:00+00:00", None) is not None


def test_a_file_that_is_not_utf8_names_its_line(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(json.dumps({"text": "ok"}).encode() + b"\n" + b'{"text": "caf\xe9"}\n')
    with pytest.raises(DataError, match=r"log.jsonl:2: not UTF-8 text"):
        list(iter_jsonl(path))
    csv = tmp_path / "docs.csv"
    csv.write_bytes(b"text,timestamp\ncaf\xe9,2025-01-01T10:00:00\n")
    with pytest.raises(DataError, match="docs.csv: not UTF-8 text"):
        load_corpus(csv, BagOfWordsEncoder())


def test_a_trend_over_a_stray_timestamps_century_is_refused_naming_it(tmp_path):
    rows = [{"id": f"d{i}", "text": "electric cars", "timestamp": f"2025-01-{1 + i:02d}T10:00:00"} for i in range(5)]
    rows.append({"id": "typo", "text": "electric cars", "timestamp": "2199-01-01T10:00:00"})
    corpus = load_corpus(write_docs(tmp_path / "docs.jsonl", rows), BagOfWordsEncoder())
    with pytest.raises(DataError, match=r"more than 20,000 to count \(first document d0 .* last typo at 2199"):
        analyse_trend(corpus, "how often did electric cars come up per day?", TrendConfig(threshold="fixed",
                                                                                           threshold_value=0.5))
    with pytest.raises(ValueError, match="starts .* at or after it ends"):
        analyse_trend(corpus, "electric cars", TrendConfig(start="2025-01-04", end="2025-01-02"))


def test_documents_a_trend_cannot_count_are_said_first(tmp_path):
    rows = [{"text": "electric cars", "timestamp": f"2025-01-{1 + i:02d}T10:00:00" if i % 3 else "not a date"}
            for i in range(12)]
    result = analyse_trend(load_corpus(write_docs(tmp_path / "docs.jsonl", rows), BagOfWordsEncoder()),
                           "how often did electric cars come up?", TrendConfig(threshold="fixed", threshold_value=0.5))
    assert result.warnings[0].startswith("skipped: 4 of 12 documents not counted") and "docs.jsonl:1" in \
        result.warnings[0]
    (tmp_path / "dates.csv").write_text("text,date\nelectric cars,2025-01-01\n")
    with pytest.raises(DataError, match=r"a 'text' and a 'timestamp' column \(its columns: text, date\)"):
        load_corpus(tmp_path / "dates.csv", BagOfWordsEncoder())


def test_a_log_whose_last_turn_is_from_the_future_is_said_first(tmp_path, tiny_backbone):
    from models.dual_encoder import load_encoder

    log = write_log(tmp_path / "log.jsonl")
    lines = log.read_text().splitlines()
    lines[-1] = lines[-1].replace("2023-05-03T18:00:00", "2099-05-03T18:00:00")
    log.write_text("\n".join(lines) + "\n")
    memory = TemporalMemory.from_file(log, encoder=load_encoder(tiny_backbone), cache_dir=None)
    result = memory.ask("what did we talk about last week?")
    assert result.warnings[-1].startswith("now is after this machine's clock: 2099-05-03T18:00+00:00 (the log's last")
    assert not any(w.startswith("now is after") for w in memory.ask("what about Rex?", now="2023-05-04").warnings)


def test_the_living_memory_says_when_a_log_of_another_zone_joins_it(tmp_path, tiny_backbone, capsys):
    memory_dir = tmp_path / "mem"
    assert main(["import", str(write_log(tmp_path / "utc.jsonl")), "--memory", str(memory_dir), "--encoder",
                 tiny_backbone]) == 0
    other = tmp_path / "ny.jsonl"
    other.write_text(json.dumps({"speaker": "Cy", "text": "hello from New York",
                                 "timestamp": "2023-05-04T09:00:00-04:00"}) + "\n")
    capsys.readouterr()
    assert main(["import", str(other), "--memory", str(memory_dir)]) == 0
    out, err = capsys.readouterr()
    assert "calendar zone: UTC (the memory's own, since its first turns)" in out
    assert "warning: 1 of the 1 turns are written with UTC offsets the memory's zone, UTC, does not have" in err
    (tmp_path / "file").write_text("")
    assert main(["ask", "hello?", "--memory", str(tmp_path / "file")]) == 2
    assert "a file, not a memory's folder" in capsys.readouterr().err
    assert len(load_log(other)) == 1


def test_a_chat_command_that_is_not_one_is_not_recorded(tmp_path, tiny_backbone):
    memory = TemporalMemory.open(tmp_path / "mem", create=True, encoder_spec=tiny_backbone)
    out = io.StringIO()
    assert chat(memory, io.StringIO("/help\nhello there\n/quit\n"), out, "Me") == 1
    assert "unknown command '/help'" in out.getvalue() and len(memory.table) == 1


def test_a_blank_turn_over_http_is_refused():
    with pytest.raises(ValidationError, match="text"):
        TurnIn(speaker="Ann", text="   ")
    with pytest.raises(ValidationError, match="speaker"):
        TurnIn(speaker=" ", text="hello")
    assert TurnIn(speaker="Ann", text=" hello ").text == " hello "


def test_a_line_without_its_offset_that_reads_out_of_order_says_so(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"speaker": "A", "text": "a", "timestamp": "2025-03-03T10:00:00+01:00"}) + "\n"
                   + json.dumps({"speaker": "B", "text": "b", "timestamp": "2025-03-03T08:30:00"}) + "\n")
    with pytest.raises(DataError, match=r"log.jsonl:2: .* earlier than the line before .* one of the two has no UTC "
                                        r"offset and is read in UTC: write its offset"):
        load_log(log)
