"""The living memory's command: chat (scripted standard input), import a log with a progress bar, ask."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

from retrieval.llm.base import GenerationResult
from retrieval.memory.live import chat, main
from retrieval.memory.temporal_memory import TemporalMemory

ROOT = Path(__file__).resolve().parents[1]


def write_log(path: Path) -> Path:
    lines = [{"speaker": "Ann", "text": "I adopted a beagle called Rex", "timestamp": "2023-05-01T10:00:00+00:00"},
             {"speaker": "Bob", "text": "Rex is a lovely name", "timestamp": "2023-05-01T10:01:00+00:00"},
             {"speaker": "Ann", "text": "My guitar lesson was cancelled", "timestamp": "2023-05-03T18:00:00+00:00"}]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return path


class FakeLLM:
    def __init__(self):
        self.prompts = []

    def generate(self, conversations, **kwargs):
        self.prompts += [c[-1]["content"] for c in conversations]
        return [GenerationResult("You talked about Rex the beagle.", True, None, 0.0, "fake", "fake")
                for _ in conversations]


def test_import_then_chat_from_scripted_stdin(tmp_path, tiny_backbone, capsys, monkeypatch):
    memory_dir, log = tmp_path / "mem", write_log(tmp_path / "log.jsonl")
    assert main(["import", str(log), "--memory", str(memory_dir), "--encoder", tiny_backbone]) == 0
    captured = capsys.readouterr()
    assert "imported 3 turns" in captured.out and "import " in captured.err  # the tqdm bar
    assert main(["import", str(log), "--memory", str(memory_dir)]) == 0  # the same log again: nothing added
    assert "imported 0 turns" in (out := capsys.readouterr().out) and "3 already there, skipped" in out
    assert "calendar zone: UTC (the memory's own, since its first turns)" in out  # the zone of its first import
    earlier = tmp_path / "earlier.jsonl"  # a turn before the memory's last that is not one of its turns
    earlier.write_text('{"speaker": "Ann", "text": "new but old", "timestamp": "2023-05-01T09:00:00+00:00"}\n')
    assert main(["import", str(earlier), "--memory", str(memory_dir)]) == 2
    assert "earlier than the memory's last turn" in capsys.readouterr().err
    script = "I am going hiking tomorrow\n/ask What did Ann say about the beagle on May 1st, 2023?\n" \
             "What did I say about hiking?\n/quit\nnever read\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(script))
    assert main(["chat", "--memory", str(memory_dir), "--speaker", "me"]) == 0
    out = capsys.readouterr().out
    assert "[0] 2023-05-01 10:00:00 Ann: I adopted a beagle called Rex" in out
    assert "me: I am going hiking tomorrow" in out  # the question sees the line typed before it
    assert "2 turns recorded; 5 in" in out  # the statement and the question; /ask is not recorded
    memory = TemporalMemory.open(memory_dir)
    frame = memory.table.frame
    assert frame["speaker"].tolist() == ["Ann", "Bob", "Ann", "me", "me"]
    assert frame["session"].tolist() == [1, 1, 2, 3, 3]  # the log's sessions (30-minute gap), then the chat's
    memory.close()
    assert main(["ask", "--memory", str(memory_dir), "What did we discuss on May 3rd, 2023?", "--json"]) == 0
    assert [r["response_idx"] for r in json.loads(capsys.readouterr().out)["rows"]] == [2]


def test_command_line_entry_point(tmp_path, tiny_backbone):
    log = write_log(tmp_path / "log.jsonl")
    done = subprocess.run([sys.executable, "-m", "retrieval.memory.live", "import", str(log), "--memory",
                           str(tmp_path / "mem"), "--encoder", tiny_backbone], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0 and "imported 3 turns" in done.stdout, done.stderr


def test_chat_answers_through_the_llm_and_records_the_answer(tmp_path, tiny_backbone):
    memory = TemporalMemory.open(tmp_path / "mem", create=True, encoder_spec=tiny_backbone)
    memory.add_many([{"speaker": "Ann", "text": "I adopted a beagle called Rex", "timestamp": "2023-05-01T10:00:00Z"}])
    llm, out = FakeLLM(), io.StringIO()
    n = chat(memory, io.StringIO("What did Ann say about her dog?\n"), out, backend=llm)
    assert n == 2 and "answer: You talked about Rex the beagle." in out.getvalue()
    assert "Ann: I adopted a beagle called Rex" in llm.prompts[0]
    assert memory.table.frame["speaker"].tolist() == ["Ann", "user", "assistant"]


def test_bad_log_is_one_line(tmp_path, capsys):
    (tmp_path / "bad.jsonl").write_text('{"speaker": "a", "text": "x", "timestamp": "yesterday"}\n')
    assert main(["import", str(tmp_path / "bad.jsonl"), "--memory", str(tmp_path / "m")]) == 2
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith("error: ") and "bad.jsonl:1" in last and "'yesterday'" in last
    assert not (tmp_path / "m").exists()  # the log is refused before a memory is created


def test_follow_ups_read_against_earlier_questions_and_their_dates(tmp_path, tiny_backbone, capsys, monkeypatch):
    memory_dir, log = tmp_path / "mem", write_log(tmp_path / "log.jsonl")
    assert main(["import", str(log), "--memory", str(memory_dir), "--encoder", tiny_backbone]) == 0
    capsys.readouterr()
    assert main(["ask", "--memory", str(memory_dir), "What else did we say that day?",
                 "--history", "When did Ann adopt Rex?", "--history", "on 1 May 2023", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [r["response_idx"] for r in result["rows"]] == [0, 1]
    assert "now is the log's last turn (2023-05-03T18:00+00:00)" in " ".join(result["plan"]["notes"])
    assert main(["ask", "--memory", str(memory_dir), "And the session before that?", "--history",
                 "What did we discuss on May 1st?", "--json"]) == 0  # before the session named, not before the last
    before = json.loads(capsys.readouterr().out)
    assert before["rows"] == [] and before["rewrite"]["method"] == "carry"  # May 1st's is the first session
    assert before["plan"]["notes"][0].startswith("no rows:")
    assert main(["ask", "--memory", str(memory_dir), "And the session before that?", "--json"]) == 0
    alone = json.loads(capsys.readouterr().out)  # alone: the one before the last (Zyphra's reading)
    assert [r["response_idx"] for r in alone["rows"]] == [0, 1] and alone["rewrite"] is None
    monkeypatch.setattr("sys.stdin", io.StringIO("/ask When did Ann adopt Rex?\n/ask What else did we say that "
                                                 "day?\n/quit\n"))
    assert main(["chat", "--memory", str(memory_dir)]) == 0
    out = capsys.readouterr().out
    assert "when: 1 May 2023 [2023-05-01 00:00, 2023-05-02 00:00) (from timestamp)" in out  # the date, shown
    follow = out.split("What else", 1)[-1] if "What else" in out else out.rsplit("plan:", 1)[-1]
    assert "2 rows:" in follow and "[0] 2023-05-01 10:00:00 Ann" in follow and "guitar" not in follow


def test_a_damaged_database_names_its_snapshot_and_recover_rebuilds_from_it(tmp_path, tiny_backbone, capsys):
    memory_dir, log = tmp_path / "mem", write_log(tmp_path / "log.jsonl")
    assert main(["import", str(log), "--memory", str(memory_dir), "--encoder", tiny_backbone]) == 0  # closed: snapshot
    (memory_dir / "memory.sqlite").write_bytes(b"")  # emptied by a bad copy or a full disk
    for name in ("memory.sqlite-wal", "memory.sqlite-shm"):
        (memory_dir / name).unlink(missing_ok=True)
    capsys.readouterr()
    assert main(["ask", "--memory", str(memory_dir), "What did we discuss?"]) == 2
    err = capsys.readouterr().err
    assert "memory.sqlite holds no memory (empty or damaged); its snapshot rows-0000000003.parquet" in err
    assert f"python -m retrieval.memory.live recover --memory {memory_dir}" in err
    assert main(["recover", "--memory", str(memory_dir), "--encoder", tiny_backbone]) == 0
    assert "recovered 3 turns from" in capsys.readouterr().out
    memory = TemporalMemory.open(tmp_path / "mem-recovered")
    assert memory.table.frame["text"].tolist() == ["I adopted a beagle called Rex", "Rex is a lovely name",
                                                   "My guitar lesson was cancelled"]
    assert memory.table.frame["session"].tolist() == [1, 1, 2] and memory.table.zone.name == "UTC"
    memory.close()
    assert main(["recover", "--memory", str(memory_dir), "--encoder", tiny_backbone]) == 2  # never over a memory
    assert "already there" in capsys.readouterr().err
    (tmp_path / "garbage").mkdir()
    (tmp_path / "garbage" / "memory.sqlite").write_bytes(b"not a database at all, just bytes" * 50)
    assert main(["ask", "--memory", str(tmp_path / "garbage"), "What?"]) == 2
    assert "no snapshot (rows-N.parquet) is beside it to recover from" in capsys.readouterr().err


def test_what_was_not_read_is_said_first(tmp_path, tiny_backbone, capsys):
    memory_dir, log = tmp_path / "mem", write_log(tmp_path / "log.jsonl")
    assert main(["import", str(log), "--memory", str(memory_dir), "--encoder", tiny_backbone]) == 0
    capsys.readouterr()
    assert main(["ask", "--memory", str(memory_dir), "What did we discuss a few weeks back?"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("question:")
    assert lines[1].startswith("warning: unreadable time phrase 'a few weeks back'")
    assert main(["ask", "--memory", str(memory_dir), "What did we discuss on May 1st?", "--now", "2024-06-01"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == ("warning: no rows: searched 2024-05-01 (reading 'now' as 2024-06-01T00:00+00:00); the memory "
                        "holds 2023-05-01 to 2023-05-03")
    assert main(["ask", "--memory", str(memory_dir), "What did we discuss on May 1st?", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["warnings"] == []


def test_chat_questions_never_come_back_as_evidence(tmp_path, tiny_backbone, capsys, monkeypatch):
    memory_dir, log = tmp_path / "mem", write_log(tmp_path / "log.jsonl")
    assert main(["import", str(log), "--memory", str(memory_dir), "--encoder", tiny_backbone]) == 0
    script = "What did Ann say about the guitar lesson?\nWhat did Ann say about the guitar lesson?\n/quit\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(script))
    capsys.readouterr()
    assert main(["chat", "--memory", str(memory_dir), "--speaker", "Ann"]) == 0
    out = capsys.readouterr().out
    assert "2 turns recorded; 5 in" in out  # both questions are recorded ...
    assert "Ann: What did Ann say about the guitar lesson?" not in out  # ... and the first is never listed as a row
    memory = TemporalMemory.open(memory_dir)
    assert memory.folder.roles == {3: "question", 4: "question"}
    memory.close()
