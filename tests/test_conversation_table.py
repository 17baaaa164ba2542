"""Log readers (Zyphra, LoCoMo, JSONL), the conversation table and its index, TemporalMemory and its CLI."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from retrieval.data.conversation_log import assign_sessions, load_log, read_jsonl_log, read_locomo, read_zyphra_log
from retrieval.data.jsonio import DataError
from retrieval.memory.conversation_table import COLUMNS, ConversationTable, turn_texts
from retrieval.memory.temporal_memory import RRF_K, TemporalMemory, main

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
    vote = 1 / (RRF_K + 1)
    for m in (0.5, 1.5):
        kept = memory._rank("pottery classes", 4, ids, margin=m)
        assert kept == [(i, s) for i, s in full if s >= best - m * vote]  # a prefix of the full ranking
    plan_rows = memory.ask("What did Bob say about pottery on May 12th?").rows
    assert 1 <= len(plan_rows) <= 2 and set(plan_rows.index) <= {2, 3}
