"""Log readers (Zyphra, LoCoMo, JSONL), the conversation table and its index, TemporalMemory and its CLI."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from retrieval.data.conversation_log import assign_sessions, load_log, read_jsonl_log, read_locomo, read_zyphra_log
from retrieval.data.jsonio import DataError
from retrieval.memory.conversation_table import COLUMNS, ConversationTable, turn_texts
from retrieval.memory.temporal_memory import TemporalMemory, main

ZYPHRA = {
    "speaker_a": "Ann", "speaker_b": "Bob",
    "session_1_date_time": "9:00 AM on 5 May, 2023",
    "session_1": [
        {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a puppy named Rex.",
         "date_time": "09:00:00 AM on Friday 05 May, 2023", "response_number": "0"},
        {"speaker": "Bob", "dia_id": "D1:2", "text": "Congratulations on the dog!",
         "date_time": "09:00:20 AM on Friday 05 May, 2023", "response_number": "1"}],
    "session_2_date_time": "8:00 AM on 12 May, 2023",
    "session_2": [
        {"speaker": "Bob", "dia_id": "D2:1", "text": "I started pottery classes.",
         "date_time": "08:00:00 AM on Friday 12 May, 2023", "response_number": "2"},
        {"speaker": "Ann", "dia_id": "D2:2", "text": "Pottery sounds relaxing.",
         "date_time": "08:00:30 AM on Friday 12 May, 2023", "response_number": "3"}],
}


def write(tmp_path, name, obj):
    path = tmp_path / name
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return path


def jsonl(lines):
    return "\n".join(json.dumps(x) for x in lines) + "\n"


def test_zyphra_reader(tmp_path):
    utts = read_zyphra_log(write(tmp_path, "1.json", ZYPHRA), tz="UTC")
    assert [u.response_idx for u in utts] == [0, 1, 2, 3] and [u.session for u in utts] == [1, 1, 2, 2]
    assert utts[2].timestamp.isoformat() == "2023-05-12T08:00:00+00:00" and utts[0].turn_id == "D1:1"


def test_zyphra_reader_names_the_bad_turn(tmp_path):
    bad = json.loads(json.dumps(ZYPHRA))
    bad["session_2"][1]["date_time"] = "sometime"
    with pytest.raises(DataError, match=r"session_2 turn 1 \(D2:2\).*'sometime'"):
        read_zyphra_log(write(tmp_path, "1.json", bad))
    assert read_zyphra_log(write(tmp_path, "2.json", bad), on_bad_time="previous")[3].timestamp.minute == 0


def test_locomo_reader_uses_session_times(tmp_path):
    conv = {k: v for k, v in ZYPHRA.items()}
    conv["session_1_date_time"] = "1:56 pm on 8 May, 2023"
    sample = [{"sample_id": "conv-x", "conversation": conv, "qa": []}]
    utts = read_locomo(write(tmp_path, "locomo.json", sample))["conv-x"]
    assert utts[0].timestamp.hour == 13 and utts[1].timestamp.second == 1 and utts[3].turn_id == "D2:2"
    assert load_log(tmp_path / "locomo.json")[0].speaker == "Ann"  # format detected


def test_jsonl_reader_sessions_from_gaps_or_given(tmp_path):
    lines = [{"speaker": "me", "text": "hi", "timestamp": "2024-01-01T09:00:00"},
             {"speaker": "you", "text": "hello", "timestamp": "2024-01-01T09:05:00"},
             {"speaker": "me", "text": "back", "timestamp": "2024-01-01T15:00:00"}]
    utts = read_jsonl_log(write(tmp_path, "chat.jsonl", jsonl(lines)), tz="Europe/Paris")
    assert [u.session for u in utts] == [1, 1, 2] and str(utts[0].timestamp.tzinfo) == "Europe/Paris"
    given = [dict(x, session=7) for x in lines]
    assert {u.session for u in read_jsonl_log(write(tmp_path, "given.jsonl", jsonl(given)))} == {7}
    assert assign_sessions([utts[0].timestamp, utts[2].timestamp], gap=timedelta(hours=8)) == [1, 1]


@pytest.mark.parametrize("lines, message", [
    ([{"speaker": "me", "text": "hi"}], r"chat.jsonl:1: missing or unparseable timestamp"),
    ([{"speaker": "me", "text": "hi", "timestamp": "2024-01-02"},
      {"speaker": "me", "text": "yo", "timestamp": "2024-01-01"}], r"chat.jsonl:2: .*earlier than the line before"),
    ([{"speaker": "me", "timestamp": "2024-01-02"}], r"chat.jsonl:1: missing or non-string 'text'"),
])
def test_jsonl_reader_rejects_bad_lines(tmp_path, lines, message):
    with pytest.raises(DataError, match=message):
        read_jsonl_log(write(tmp_path, "chat.jsonl", jsonl(lines)))


def test_missing_file_is_named(tmp_path):
    with pytest.raises(DataError, match="nope.json: file not found"):
        load_log(tmp_path / "nope.json")


@pytest.fixture(scope="module")
def tiny_encoder(tiny_backbone):
    from models.dual_encoder import DualEncoder

    return DualEncoder.from_backbone(tiny_backbone)


def test_table_columns_index_and_cache(tmp_path, tiny_encoder):
    utts = read_zyphra_log(write(tmp_path, "1.json", ZYPHRA))
    table = ConversationTable.from_utterances(utts, tiny_encoder, cache_dir=tmp_path / "cache")
    assert list(table.frame.columns) == list(COLUMNS) and len(table.index) == 4
    row = table.frame.loc[2]
    assert (row["weekday"], row["week"], row["month"], row["date"]) == ("Friday", "2023-W19", "2023-05", "2023-05-12")
    hits = table.rank("pottery", k=5, subset=[2, 3])
    assert {i for i, _ in hits} == {2, 3}
    assert len(list((tmp_path / "cache").glob("*.npy"))) == 1
    again = ConversationTable.from_utterances(utts, tiny_encoder, cache_dir=tmp_path / "cache")
    assert len(list((tmp_path / "cache").glob("*.npy"))) == 1 and len(again.index) == 4


def test_turn_view_carries_the_previous_utterance_of_the_session(tmp_path, tiny_encoder):
    utts = read_zyphra_log(write(tmp_path, "1.json", ZYPHRA))
    table = ConversationTable.from_utterances(utts, tiny_encoder, turns=True)
    texts = turn_texts(table.frame)
    frame = table.frame
    assert texts[0] == f"{frame['speaker'].iloc[0]}: {frame['text'].iloc[0]}"
    assert texts[1].split("\n") == [texts[0], f"{frame['speaker'].iloc[1]}: {frame['text'].iloc[1]}"]
    assert "\n" not in texts[2]  # the first utterance of session 2 follows nothing
    assert len(table.turn_index) == 4 and {i for i, _ in table.rank("pottery", 5, [2, 3], view="turn")} == {2, 3}
    assert {i for i, _ in table.rank_sparse("pottery", 5, [1, 2], view="turn")} == {1, 2}
    with pytest.raises(RuntimeError, match="turn"):
        ConversationTable.from_utterances(utts, tiny_encoder).rank("pottery", 5, view="turn")


def test_temporal_memory_ask(tmp_path, tiny_encoder):
    memory = TemporalMemory.from_file(write(tmp_path, "1.json", ZYPHRA), encoder=tiny_encoder)
    assert memory.ask("What did we discuss in our first session?").ids == [0, 1]
    assert memory.ask("What did we talk about last time?").ids == [2, 3]
    assert memory.ask("What did we discuss last time?", now="2023-05-10T12:00").ids == [0, 1]
    ambiguous = memory.ask("Can you summarize what we discussed?", history=["We talked on May 5th, right?"])
    assert ambiguous.ids == [0, 1] and ambiguous.rewrite.method == "carry"
    original = memory.ask("Can you summarize what we discussed?", history=["We talked on May 5th"], rewrite="none")
    assert any("semantic search" in n for n in original.plan.notes)
    as_json = json.loads(json.dumps(ambiguous.to_dict()))  # plain JSON, no default= needed
    assert [r["response_idx"] for r in as_json["rows"]] == [0, 1] and as_json["rewrite"]["method"] == "carry"
    assert as_json["plan"] == json.loads(json.dumps(ambiguous.plan.to_dict()))


def test_cli_ask_json(tmp_path, tiny_backbone, capsys):
    path = write(tmp_path, "1.json", ZYPHRA)
    code = main(["ask", "--log", str(path), "--encoder", tiny_backbone, "--cache-dir", str(tmp_path / "c"),
                 "--json", "What did we discuss on May 12th?"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and [r["response_idx"] for r in out["rows"]] == [2, 3] and out["plan"]["ops"]


def test_cli_reports_bad_input(tmp_path, tiny_backbone, capsys):
    path = write(tmp_path, "chat.jsonl", jsonl([{"speaker": "me", "text": "hi", "timestamp": "never"}]))
    assert main(["ask", "--log", str(path), "--encoder", tiny_backbone, "--cache-dir", "", "hi"]) == 2
    assert "chat.jsonl:1" in capsys.readouterr().err


def test_real_zyphra_log(data_dir):
    path = data_dir / "zyphra_temporal" / "ConversationData" / "26.json"
    if not path.is_file():
        pytest.skip("Zyphra log 26 is not present")
    utts = read_zyphra_log(path)
    assert len(utts) == 432 and max(u.session for u in utts) == 20
    assert [u.response_idx for u in utts] == list(range(432))


def test_content_ranking_margin_keeps_rows_close_to_the_best(tmp_path, tiny_encoder):
    memory = TemporalMemory.from_file(write(tmp_path, "1.json", ZYPHRA), encoder=tiny_encoder)
    ids = [0, 1, 2, 3]
    full = memory._rank("pottery classes", 4, ids)
    assert len(full) == 4 and memory._rank("pottery classes", 4, ids, margin=100.0) == full
    best = full[0][1]
    alone = memory._rank("pottery classes", 4, ids, margin=0.0)
    assert alone == [(i, s) for i, s in full if s == best]  # only the best (and exact ties)
    spread = best - full[-1][1]
    for m in (0.25, 0.5, 0.75):
        kept = memory._rank("pottery classes", 4, ids, margin=m)
        assert kept == [(i, s) for i, s in full if s >= best - m * spread - 1e-9]  # a prefix of the full ranking
    rrf = TemporalMemory(memory.table, fusion="rrf")._rank("pottery classes", 4, ids)
    assert sorted(rrf) != sorted(full) and {i for i, _ in rrf} == {i for i, _ in full}  # same rows, other scores
    with pytest.raises(ValueError, match="fusion"):
        TemporalMemory(memory.table, fusion="max")
    plan_rows = memory.ask("What did Bob say about pottery on May 12th?").rows
    assert 1 <= len(plan_rows) <= 2 and set(plan_rows.index) <= {2, 3}


MARCH = [{"speaker": "Ann", "text": "The late-night pottery kiln finally fired.",
          "timestamp": "2024-03-18T00:30:00+01:00"},
         {"speaker": "Bob", "text": "Glazes look great after midnight.", "timestamp": "2024-03-18T00:35:00+01:00"},
         {"speaker": "Ann", "text": "Back the next evening to talk about hiking.",
          "timestamp": "2024-03-18T21:00:00+01:00"}]


def test_calendar_days_are_the_logs_own_days(tmp_path, tiny_encoder):
    """A log written at +01:00: its 00:30 on March 18 is March 18 (not 17 March in UTC), and the plan says why."""
    memory = TemporalMemory.from_file(write(tmp_path, "chat.jsonl", jsonl(MARCH)), encoder=tiny_encoder)
    on_18 = memory.ask("What did we discuss on March 18?")
    assert on_18.ids == [0, 1, 2] and on_18.plan.zone == "UTC+01:00"
    assert any("UTC+01:00" in n and "the zone the log's timestamps are written in" in n for n in on_18.plan.notes)
    assert on_18.to_dict()["plan"]["zone"] == "UTC+01:00"
    on_17 = memory.ask("What did we discuss on March 17?")  # no row that day: only the days-beside fallback
    assert any("option 2 used, the earlier ones left no rows" in t for t in on_17.execution.trace)
    # ... said first, with the days it kept instead
    assert on_17.warnings == ["no rows in the period read first: kept the rows of 2024-03-16, 2024-03-18 instead"]
    assert memory.table.frame.loc[0, "date"] == "2024-03-18"
    # an explicit tz wins: in UTC the first two rows are on the 17th
    utc = TemporalMemory.from_file(tmp_path / "chat.jsonl", encoder=tiny_encoder, tz="UTC")
    in_utc = utc.ask("What did we discuss on March 17?")
    assert in_utc.ids == [0, 1] and not any("option" in t for t in in_utc.execution.trace)
    assert any("the time zone given" in n for n in in_utc.plan.notes)


def test_a_log_without_zones_takes_the_zone_of_now(tmp_path, tiny_encoder):
    naive = [dict(m, timestamp=m["timestamp"][:19]) for m in MARCH]  # 00:30 etc. with no zone written
    memory = TemporalMemory.from_file(write(tmp_path, "chat.jsonl", jsonl(naive)), encoder=tiny_encoder)
    assert memory.ask("What did we discuss on March 18?").plan.zone == "UTC"  # nothing says otherwise
    in_ny = memory.ask("What did we discuss on March 17?", now="2024-03-19T12:00:00-04:00")
    assert in_ny.plan.zone == "UTC-04:00" and in_ny.ids == [0, 1]  # 00:30 UTC is the evening before in New York
    assert any("the zone of now" in n for n in in_ny.plan.notes)


def test_empty_question_is_an_error_and_stop_words_are_noted(tmp_path, tiny_encoder):
    memory = TemporalMemory.from_file(write(tmp_path, "1.json", ZYPHRA), encoder=tiny_encoder)
    for empty in ("", "   \n"):
        with pytest.raises(ValueError, match="the question is empty"):
            memory.ask(empty)
    vague = memory.ask("what did we do about it?")
    assert any("names no time and no content" in n for n in vague.plan.notes)
    assert not any("names no time" in n for n in memory.ask("What about pottery?").plan.notes)


def test_now_before_the_log_starts_is_noted(tmp_path, tiny_encoder):
    memory = TemporalMemory.from_file(write(tmp_path, "1.json", ZYPHRA), encoder=tiny_encoder)
    early = memory.ask("What did we discuss last time?", now="2023-01-01T00:00:00")
    assert early.ids == [] and any("before the log's first utterance" in n for n in early.plan.notes)
    assert not any("before the log's first" in n for n in memory.ask("What did we discuss last time?").plan.notes)


def test_a_now_the_clocks_skip_is_read_as_a_real_time(tmp_path, tiny_encoder):
    from datetime import datetime
    from zoneinfo import ZoneInfo

    memory = TemporalMemory.from_file(write(tmp_path, "1.json", ZYPHRA), encoder=tiny_encoder, tz="America/New_York")
    skipped = datetime(2024, 3, 10, 2, 30, tzinfo=ZoneInfo("America/New_York"))  # no such wall time that night
    plan = memory.ask("What did we discuss today?", now=skipped).plan
    assert plan.ops[0]["value"] == "2024-03-10T03:30:00-04:00"
    assert memory.ask("What did we discuss today?", now=plan.ops[0]["value"]).plan.ops == plan.ops


def test_cli_uses_the_logs_own_zone_unless_told(tmp_path, tiny_backbone, capsys):
    """The command line follows the same zone order: no --tz means the zone the stamps are written in."""
    path = write(tmp_path, "chat.jsonl", jsonl(MARCH))
    base = ["ask", "--log", str(path), "--encoder", tiny_backbone, "--cache-dir", "", "--json"]
    assert main([*base, "What did we discuss on March 18?"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["response_idx"] for r in out["rows"]] == [0, 1, 2] and out["plan"]["zone"] == "UTC+01:00"
    assert main([*base, "--tz", "UTC", "What did we discuss on March 17?"]) == 0
    assert [r["response_idx"] for r in json.loads(capsys.readouterr().out)["rows"]] == [0, 1]


def test_the_earlier_cut_reads_the_margin_in_rrf_votes(tmp_path, tiny_encoder):
    memory = TemporalMemory.from_file(write(tmp_path, "1.json", ZYPHRA), encoder=tiny_encoder)
    earlier = TemporalMemory(memory.table, fusion="rrf", cut="top")
    full = earlier._rank("pottery classes", 4, [0, 1, 2, 3])
    kept = earlier._rank("pottery classes", 4, [0, 1, 2, 3], margin=0.5)
    assert kept == [(i, s) for i, s in full if s >= full[0][1] - 0.5 / 61]  # 0.5 of one vote, 1 / (60 + 1)
    with pytest.raises(ValueError, match="cut"):
        TemporalMemory(memory.table, cut="votes")
