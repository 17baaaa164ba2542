"""A living memory: append, persist, reopen, repair, and survive a SIGKILL in a loop of adds."""

from __future__ import annotations

import gc
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from models.dual_encoder import DualEncoder
from retrieval.memory.folder_lock import MemoryInUseError
from retrieval.memory.temporal_memory import TemporalMemory
from retrieval.search.bm25 import BM25Retriever
from retrieval.search.dense_index import EncoderMismatchError
from retrieval.search.sparse_segments import SegmentedBM25

ROOT = Path(__file__).resolve().parents[1]
T0 = datetime(2023, 5, 1, 9, 0, tzinfo=timezone.utc)
WORDS = ("dog park painting beagle guitar concert support group job interview pizza recipe hiking trip "
         "museum sister wedding garden roses camping lake book novel").split()
QUESTIONS = ("What did we discuss on May 1st?", "What did we say about the dog on May 1st?",
             "What did we talk about two sessions ago?", "What did Ann say about painting?")


def turn_text(i: int) -> str:
    rng = random.Random(i)
    return f"turn {i}: " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9)))


def turn(i: int) -> dict:
    """The i-th scripted turn: two speakers, a new session every 7 turns (a 2-hour gap), a minute apart."""
    ts = T0 + timedelta(minutes=i + 120 * (i // 7))
    return {"speaker": "Ann" if i % 2 else "Bob", "text": turn_text(i), "timestamp": ts.isoformat()}


@pytest.fixture(scope="module")
def encoder(tiny_backbone):
    return DualEncoder.from_backbone(tiny_backbone)


def answers(memory: TemporalMemory) -> list:
    now = memory.table.end
    return [(r.ids, r.plan.ops) for r in (memory.ask(q, now=now) for q in QUESTIONS)]


def test_segmented_bm25_ranks_as_bm25s(tmp_path):
    texts = [turn_text(i) for i in range(300)]
    grown = SegmentedBM25(tmp_path / "bm25", segment_rows=16, merge_factor=3)
    for t in texts:  # one at a time, as a chat adds them: seals and merges along the way
        grown.add([t])
    assert len(grown.segments) > 1 and len(grown) == 300
    reference = BM25Retriever(texts, list(range(300)))
    reopened = SegmentedBM25.load(tmp_path / "bm25", segment_rows=16, merge_factor=3)
    reopened.add(texts[len(reopened):])
    subset = random.Random(0).sample(range(300), 40)
    for q in ("dog park", "guitar concert with my sister", "turn 17", "the of and", "zebra"):
        expected = reference.search([q], 10)[0]
        for index in (grown, reopened):
            got = index.search([q], 10)[0]
            assert [i for i, _ in got] == [i for i, _ in expected]
            np.testing.assert_allclose([s for _, s in got], [s for _, s in expected], rtol=1e-5)
            assert [i for i, _ in index.search([q], 5, subset)[0]] == [i for i, _ in
                                                                      reference.search([q], 5, subset)[0]]


def test_add_ask_reopen(tmp_path, encoder, tiny_backbone):
    memory = TemporalMemory.open(tmp_path / "m", encoder=encoder, create=True, encoder_spec=tiny_backbone)
    with pytest.raises(ValueError, match="no turns yet"):
        memory.ask("What did we discuss yesterday?")
    ids = memory.add_many([turn(i) for i in range(10)])
    assert ids == list(range(10))
    assert memory.table.frame["session"].tolist() == [1] * 7 + [2] * 3  # the gap rule
    assert memory.add("Ann", "I adopted a beagle called Rex", (T0 + timedelta(days=1)).isoformat()) == 10
    r = memory.ask("What did Ann say about the beagle Rex?", now=T0 + timedelta(days=2))
    assert 10 in r.ids  # a question after an add sees it
    assert memory.table.frame.loc[10, "session"] == 3
    assert memory.add("Bob", "same session", T0 + timedelta(days=1, minutes=5), session=3) == 11
    with pytest.raises(ValueError, match="earlier than the memory's last turn"):
        memory.add("Bob", "too early", T0.isoformat())
    with pytest.raises(ValueError, match="before the memory's last session"):
        memory.add("Bob", "old session", T0 + timedelta(days=3), session=1)
    before = answers(memory)
    memory.close()
    reopened = TemporalMemory.open(tmp_path / "m")  # the encoder it records
    assert len(reopened.table) == 12 and answers(reopened) == before
    assert reopened.add("Ann", "after the restart", T0 + timedelta(days=4)) == 12
    with pytest.raises(FileNotFoundError):
        TemporalMemory.open(tmp_path / "nothing")


def test_event_times_survive_reopen(tmp_path, encoder, tiny_backbone):
    """The event-time columns (a tz-aware interval, a granularity, a (low, high, unit) length) are stored as they
    are: a first turn without an event time does not turn the interval column into text, and when-answers after a
    reopen (from the database, then from the snapshot) are the ones before it."""
    memory = TemporalMemory.open(tmp_path / "m", encoder=encoder, create=True, encoder_spec=tiny_backbone)
    memory.add("Bob", "Hello there, how are you doing?", "2023-05-25T09:59:00+00:00")
    memory.add("Ann", "I went to a support group yesterday.", "2023-05-25T10:00:00+00:00")
    memory.add_many([{"speaker": "Ann", "text": "Got the tattoo a few years ago",
                      "timestamp": "2023-05-25T10:02:00+00:00"}])
    questions = ("When did Ann go to the support group?", "When did Ann get the tattoo?")
    before = [memory.ask(q).answer.answer for q in questions]
    assert before[0] == "24 May 2023"
    memory.close()
    for _ in range(2):
        reopened = TemporalMemory.open(tmp_path / "m")
        frame = reopened.table.frame
        assert str(frame["event_start"].dtype).startswith("datetime64") and frame["event_start"].dt.tz is not None
        assert frame.loc[2, "event_duration"] == (2, 5, "year") and frame.loc[0, "event_duration"] is None
        assert [reopened.ask(q).answer.answer for q in questions] == before
        reopened.close()


def test_other_encoder_refused(tmp_path, encoder, tiny_backbone, tmp_path_factory):
    from conftest import tiny_backbone_folder

    memory = TemporalMemory.open(tmp_path / "m", encoder=encoder, create=True, encoder_spec=tiny_backbone)
    memory.add_many([turn(i) for i in range(3)])
    memory.close()
    other = DualEncoder.from_backbone(str(tiny_backbone_folder(tmp_path_factory.mktemp("other"), seed=1)))
    with pytest.raises(EncoderMismatchError, match="encoder_id"):
        TemporalMemory.open(tmp_path / "m", encoder=other)


def test_lagging_vectors_repaired_encoding_only_missing_rows(tmp_path, encoder, tiny_backbone, monkeypatch):
    memory = TemporalMemory.open(tmp_path / "m", encoder=encoder, create=True, encoder_spec=tiny_backbone)
    memory.add_many([turn(i) for i in range(20)])
    before = answers(memory)
    memory.close()
    vectors = tmp_path / "m" / "vectors-text.f32"
    row = 4 * encoder.dim
    os.truncate(vectors, 17 * row + row // 2)  # three rows short, the last one torn
    encoded = []
    original = encoder.encode_documents
    monkeypatch.setattr(encoder, "encode_documents", lambda texts, *a, **k: encoded.append(texts) or
                        original(texts, *a, **k))
    reopened = TemporalMemory.open(tmp_path / "m", encoder=encoder)
    assert encoded == [[turn(i)["text"] for i in (17, 18, 19)]]
    assert vectors.stat().st_size == 20 * row and answers(reopened) == before


CHILD = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r}); sys.path.insert(0, {tests!r})
    from test_live_memory import turn
    from retrieval.memory.temporal_memory import TemporalMemory
    memory = TemporalMemory.open({path!r})
    start = len(memory.table)
    print("ready", flush=True)
    for i in range(start, start + 10_000):
        memory.add(**turn(i))
        print("ack", i, flush=True)
""")


def kill_in_a_loop(script: str, rounds: int, seed: int = 0) -> int:
    """Run ``script`` (it prints "ready", then "ack i" after each committed add) ``rounds`` times, each time killed
    with SIGKILL a few adds in; the last turn acknowledged."""
    rng, acked = random.Random(seed), -1
    for _ in range(rounds):
        child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=ROOT)
        assert child.stdout.readline().strip() == "ready"
        for _ in range(rng.randint(3, 12)):
            line = child.stdout.readline().split()
            assert line[0] == "ack", line
            acked = int(line[1])
        time.sleep(rng.uniform(0, 0.02))  # somewhere inside the next add
        child.send_signal(signal.SIGKILL)
        child.wait()
        # the acknowledgements printed before the kill and not read yet (an add takes ~1 ms: several fit in the
        # sleep) are still in the pipe: the last one is the last acknowledged turn
        acked = max([acked] + [int(w[1]) for w in map(str.split, child.stdout.read().splitlines())
                               if len(w) == 2 and w[0] == "ack"])
        child.stdout.close()
    return acked


def assert_whole(frame, acked: int) -> None:
    """Every acknowledged turn is in ``frame``, at most the one in flight besides, and each one whole."""
    assert len(frame) in (acked + 1, acked + 2)
    for i in frame.index:
        expected = turn(i)
        assert (frame.loc[i, "speaker"], frame.loc[i, "text"]) == (expected["speaker"], expected["text"])
        assert frame.loc[i, "timestamp"].isoformat() == expected["timestamp"]


def test_sigkill_in_a_loop_of_adds_loses_no_acknowledged_turn(tmp_path, encoder, tiny_backbone):
    path = tmp_path / "m"
    TemporalMemory.open(path, encoder=encoder, create=True, encoder_spec=tiny_backbone).close()
    acked = kill_in_a_loop(CHILD.format(root=str(ROOT), tests=str(ROOT / "tests"), path=str(path)), 3)
    memory = TemporalMemory.open(path, encoder=encoder)
    frame = memory.table.frame
    assert_whole(frame, acked)
    reference = TemporalMemory.open(tmp_path / "reference", encoder=encoder, create=True)
    for i in frame.index:
        reference.add(**turn(i))
    assert answers(memory) == answers(reference)


def test_snapshot_then_rows_after_it_and_a_disagreeing_snapshot_ignored(tmp_path, encoder, tiny_backbone):
    memory = TemporalMemory.open(tmp_path / "m", encoder=encoder, create=True, encoder_spec=tiny_backbone)
    memory.add_many([turn(i) for i in range(8)])
    memory.close()  # seals BM25 and writes rows-0000000008.parquet
    assert [p.name for p in (tmp_path / "m").glob("rows-*.parquet")] == ["rows-0000000008.parquet"]
    memory = TemporalMemory.open(tmp_path / "m", encoder=encoder)
    memory.add_many([turn(i) for i in range(8, 12)])  # and no close: a crash after these
    expected = answers(memory)
    with pytest.raises(MemoryInUseError, match="open in another process or object"):
        TemporalMemory.open(tmp_path / "m", encoder=encoder)
    del memory  # dropped without close(): its lock goes with it, as with a killed process
    gc.collect()
    reopened = TemporalMemory.open(tmp_path / "m", encoder=encoder)
    assert reopened.table.frame["text"].tolist() == [turn(i)["text"] for i in range(12)]
    assert answers(reopened) == expected
    reopened.close()  # the snapshot now holds all 12
    snapshot = tmp_path / "m" / "rows-0000000012.parquet"
    frame = reopened.table.frame.copy()
    frame.loc[11, "text"] = "not what was said"
    frame.to_parquet(snapshot)
    again = TemporalMemory.open(tmp_path / "m", encoder=encoder)
    assert again.table.frame.loc[11, "text"] == turn(11)["text"] and answers(again) == expected


def test_a_turn_from_the_future_is_refused_and_blocks_nothing(tmp_path, encoder):
    memory = TemporalMemory.open(tmp_path / "m", encoder=encoder, create=True)
    memory.add_many([turn(0)])
    future = {"speaker": "Ann", "text": "typo in the year", "timestamp": "2031-05-01T09:00:00+00:00"}
    with pytest.raises(ValueError, match=r"turn 0: timestamp 2031-05-01T09:00:00\+00:00 is after this machine's "
                                         r"clock .* by more than 0:10:00"):
        memory.add_many([future])
    with pytest.raises(ValueError, match="after this machine's clock"):  # a batch with one: nothing of it written
        memory.add_many([turn(1), future])
    assert len(memory.table) == 1
    soon = datetime.now(timezone.utc) + timedelta(minutes=5)  # clocks disagree a little: within the skew
    memory.add("Bob", "my clock runs fast", soon)
    memory.add("Ann", "and the next line still goes in")  # now, after the fast clock's turn: not blocked
    assert len(memory.table) == 3
    memory.close()


def test_exact_duplicates_are_skipped_and_counted(tmp_path, encoder):
    memory = TemporalMemory.open(tmp_path / "m", encoder=encoder, create=True)
    first = memory.append([turn(i) for i in range(5)] + [turn(4)])  # one repeated inside the batch
    assert first.ids == [0, 1, 2, 3, 4, 4] and first.skipped == 1 and len(memory.table) == 5
    again = memory.append([turn(i) for i in range(8)])  # an import run again, with three new turns at its end
    assert again.ids == list(range(8)) and again.skipped == 5 and len(memory.table) == 8
    same_time = {**turn(7), "text": "another line at the same minute"}  # same time, other text: a new turn
    assert memory.append([same_time]).ids == [8]
    with pytest.raises(ValueError, match="earlier than the memory's last turn"):  # earlier and not a duplicate
        memory.append([{**turn(2), "text": "never said then"}])
    memory.close()
    reopened = TemporalMemory.open(tmp_path / "m", encoder=encoder)
    assert reopened.append([turn(3)]).skipped == 1 and len(reopened.table) == 9  # found after a reopen too
    assert reopened.table.frame["text"].tolist().count(turn(3)["text"]) == 1
    reopened.close()


def test_a_memory_without_a_zone_takes_its_turns_zone(tmp_path, encoder):
    memory = TemporalMemory.open(tmp_path / "m", encoder=encoder, create=True)
    late = [{"speaker": "Ann", "text": "Just home from the wedding", "timestamp": "2025-05-15T00:30:00+01:00"},
            {"speaker": "Bob", "text": "Sleep well", "timestamp": "2025-05-15T00:31:00+01:00"}]
    memory.add_many(late)
    assert memory.table.zone.name == "UTC+01:00" and memory.table.zone.source == "log"
    assert memory.table.frame["date"].tolist() == ["2025-05-15", "2025-05-15"]  # not the 14th, as UTC would file it
    result = memory.ask("What did we talk about on May 15th?")
    assert result.ids == [0, 1] and "the zone the log's timestamps are written in" in " ".join(result.plan.notes)
    memory.close()
    reopened = TemporalMemory.open(tmp_path / "m", encoder=encoder)
    assert reopened.table.zone.name == "UTC+01:00" and reopened.table.frame["time"].iloc[0] == "00:30:00"
    reopened.close()
    given = TemporalMemory.open(tmp_path / "g", encoder=encoder, create=True, tz="Europe/Paris")
    given.add_many(late)
    assert given.table.zone.name == "Europe/Paris" and given.table.frame["time"].iloc[0] == "01:30:00"
    given.close()


def test_an_empty_answer_says_what_was_searched_and_what_the_memory_holds(tmp_path, encoder):
    memory = TemporalMemory.open(tmp_path / "m", encoder=encoder, create=True)
    memory.add_many([turn(i) for i in range(3)])
    result = memory.ask("What did we talk about on May 1st?", now="2024-06-01T12:00:00+00:00")  # last year's data
    assert result.ids == []
    assert result.plan.notes[0] == ("no rows: searched 2024-05-01 (reading 'now' as 2024-06-01T12:00+00:00); the "
                                    "memory holds 2023-05-01 to 2023-05-01")
    memory.close()


def test_a_question_in_another_language_says_so_first(tmp_path, encoder):
    memory = TemporalMemory.open(tmp_path / "m", encoder=encoder, create=True)
    memory.add_many([turn(i) for i in range(3)])
    result = memory.ask("¿Qué dijimos el martes sobre el perro?")
    assert result.plan.notes[0].startswith("not read as English: it names 'martes' (Spanish)")
    assert not memory.ask("What did we say on Tuesday about the dog?").plan.notes[0].startswith("not read")
    memory.close()


def test_questions_and_answers_are_kept_but_are_not_evidence(tmp_path, encoder):
    memory = TemporalMemory.open(tmp_path / "m", encoder=encoder, create=True)
    memory.add_many([turn(i) for i in range(3)])
    asked = {**turn(3), "speaker": "Ann", "text": "What did we say about the beagle?", "role": "question"}
    answer = {**turn(4), "speaker": "assistant", "text": "You talked about a beagle.", "role": "answer"}
    assert memory.add_many([asked, answer]) == [3, 4]
    with pytest.raises(ValueError, match="role 'bot'; a turn's role is one of utterance, question, answer"):
        memory.add_many([{**turn(5), "role": "bot"}])
    assert len(memory.table) == 5  # the refused batch wrote nothing
    every = memory.ask("What did we discuss on May 1st?").ids
    assert every == [0, 1, 2]  # the day's turns, not the question put to the memory or its answer
    assert memory.ask("What did we discuss on May 1st?", include_asked=True).ids == [0, 1, 2, 3, 4]
    memory.close()
    reopened = TemporalMemory.open(tmp_path / "m", encoder=encoder)  # the roles are kept with the rows
    assert reopened.folder.roles == {3: "question", 4: "answer"}
    assert reopened.ask("What did we discuss on May 1st?").ids == [0, 1, 2]
    reopened.close()
    only = TemporalMemory.open(tmp_path / "q", encoder=encoder, create=True)
    only.add_many([asked])
    with pytest.raises(ValueError, match="only questions put to it"):
        only.ask("What did we discuss?")
    only.close()
