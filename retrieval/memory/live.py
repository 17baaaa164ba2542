"""A memory a person can live in: chat into it, import logs into it, ask it about the past.

    python -m retrieval.memory.live chat --memory runs/my_memory [--llm smollm2] [--speaker me] [--tz Europe/Paris]
    python -m retrieval.memory.live import chat.jsonl --memory runs/my_memory      # any log format, progress bar
    python -m retrieval.memory.live ask --memory runs/my_memory "What did I say about the dog last week?"
    python -m retrieval.memory.live recover --memory runs/my_memory   # a damaged memory.sqlite: from its snapshot
    python -m retrieval.memory.live chat --memory ann --store postgresql://me@dbhost/memories  # kept in PostgreSQL
    ctbls memory chat --memory DIR                                                 # the same, as a command

``chat`` reads lines from standard input. Every line is recorded as a turn of ``--speaker``, stamped with the
time it was typed (the memory is created on first use, ``--encoder`` and ``--tz`` then set for good). A line
ending in "?" is also a question: it is answered from the memory as it was before the line (the selected rows and
the plan, and with ``--llm`` an answer written from those rows), with "now" the time it was asked. The question is
recorded with the role "question" and the LLM's answer as the assistant's turn with the role "answer": kept, but
not evidence for later questions unless ``--include-asked``. ``/ask QUESTION`` asks without recording; ``/quit``
(or end of input) leaves.

``import FILE`` appends a log (Zyphra, LoCoMo or JSONL, read as ``retrieval.memory.temporal_memory ask --log`` reads
them, so a JSONL log without sessions has them by the 30-minute gap rule) after the memory's last turn: response
indices continued, each of its sessions a new session of the memory,
its timestamps kept (a log that starts before the memory's last turn is refused, naming the turn), in batches of
``--batch-size`` turns, each one transaction, under a progress bar.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TextIO

from tqdm import tqdm

from models.dual_encoder import PRECISIONS
from retrieval.config import option, parse_command
from retrieval.data.conversation_log import Utterance, load_log
from retrieval.data.jsonio import INPUT_ERRORS, DataError
from retrieval.data.timestamps import ZONE_SOURCES, zone_name
from retrieval.llm.base import LLMBackend
from retrieval.memory.follow_ups import FollowUps
from retrieval.memory.memory_answer import answer_messages
from retrieval.memory.memory_folder import MemoryFolder
from retrieval.memory.relevance.choices import AUTO, RELEVANCE_HELP
from retrieval.memory.relevance.rerank import use_relevance
from retrieval.memory.result_print import print_result
from retrieval.memory.snapshot import newest_readable
from retrieval.memory.temporal_memory import TemporalMemory
from retrieval.memory.temporal_result import TemporalResult


@dataclass(kw_only=True)
class MemoryArguments:
    memory: str = option(help="the memory's folder, or its name in --store (created on first use)")
    store: str | None = option(None, "a PostgreSQL URL (postgresql://user@host/db; the password from PGPASSWORD or "
                               "~/.pgpass): the memory is kept in that database (default: --memory is a folder)")
    encoder: str | None = option(None, "dual encoder for a new memory (default: packaged MiniLM); an existing "
                                 "memory uses its own")
    tz: str | None = option(None, "calendar zone of a new memory (default UTC)")
    precision: str = option("fp32", "encoder precision of a new memory (bf16: weights cast, about 3x faster on a "
                            "CPU with bf16 units); an existing memory uses its own", choices=PRECISIONS)
    relevance: str = option(AUTO, "ask and chat: " + RELEVANCE_HELP)


@dataclass(kw_only=True)
class ChatArguments(MemoryArguments):
    """Record what is typed, with the time; answer questions about the past from the memory."""

    speaker: str = option("user", "who is typing")
    llm: str | dict | None = option(None, "LLM spec for answers (smollm2, openai:MODEL, ...; default none: rows only)")
    max_rows: int = option(5, "rows shown (and given to the LLM) per answer")
    include_asked: bool = option(False, "answer from the questions put to the memory and its answers too (recorded "
                                 "with their roles; left out by default)")


@dataclass(kw_only=True)
class ImportArguments(MemoryArguments):
    """Append a conversation log to the memory."""

    file: str = option(help="a Zyphra .json, LoCoMo .json or JSONL log", positional=True)
    format: str = option("auto", "the log's format", choices=("auto", "zyphra", "locomo", "jsonl"))
    sample: str | None = option(None, "LoCoMo sample id (default: the first)")
    timestamps: str = option("strict", "how the log's timestamps are read: strict, lenient or a strptime format")
    batch_size: int = option(256, "turns per transaction")


@dataclass(kw_only=True)
class LiveAskArguments(MemoryArguments):
    """Ask the memory one question."""

    question: str = option(help="the question", positional=True)
    now: str | None = option(None, "the reference time, ISO 8601 (default: the memory's last turn)")
    history: list[str] = option([], "an earlier turn (repeat, oldest first): 'that day', 'the session before "
                                "that' are read against it", nargs=1)
    include_asked: bool = option(False, "answer from the questions put to the memory and its answers too")
    json: bool = option(False, "print the result as JSON")


@dataclass(kw_only=True)
class RecoverArguments:
    """Make a new memory from a damaged memory's snapshot (the rows as of its last close)."""

    memory: str = option(help="the damaged memory's folder")
    into: str | None = option(None, "the new memory's folder (default: MEMORY-recovered)")
    encoder: str | None = option(None, "dual encoder of the new memory (default: the packaged MiniLM)")
    batch_size: int = option(256, "turns per transaction")


def recover(args: RecoverArguments) -> tuple[TemporalMemory, int, Path]:
    """A new memory (``args.into``) holding the turns of the damaged one's newest readable snapshot, in its zone; (the
    memory, the turns recovered, the snapshot)."""
    source = Path(args.memory)
    found = newest_readable(source)
    if found is None:
        raise DataError(f"{source}: no snapshot (rows-N.parquet) that reads: nothing to recover from")
    frame, snapshot = found
    into = Path(args.into or f"{source.as_posix().rstrip('/')}-recovered")
    if MemoryFolder.exists(into):
        raise FileExistsError(f"{into}: a memory is already there; name another with --into")
    utterances = [Utterance(int(i), int(r["session"]), str(r["speaker"]), r["timestamp"].to_pydatetime(),
                            str(r["text"])) for i, r in frame.iterrows()]
    memory = TemporalMemory.open(into, create=True, encoder_spec=args.encoder,
                                 tz=zone_name(frame["timestamp"].dt.tz))
    ids, _ = import_log(memory, utterances, args.batch_size, where=snapshot.name)
    return memory, len(ids), snapshot


def open_memory(args: MemoryArguments) -> TemporalMemory:
    if args.store is None and Path(args.memory).exists() and not Path(args.memory).is_dir():
        raise DataError(f"--memory {args.memory}: a file, not a memory's folder (give a folder, new or made by "
                        "import or chat)")
    memory = TemporalMemory.open(args.memory, create=True, encoder_spec=args.encoder, tz=args.tz,
                                 precision=args.precision, store=args.store)
    return use_relevance(memory, args.relevance)


def session_of_last(memory: TemporalMemory) -> int | None:
    """The session of the memory's last turn (None before its first)."""
    last = memory.table.last_row()
    return None if last is None else int(last["session"])


def import_log(memory: TemporalMemory, utterances: Sequence[Utterance], batch_size: int = 256,
               progress: bool = True, where: str = "log") -> tuple[list[int], int]:
    """Append a log's ``utterances`` (:func:`~retrieval.data.conversation_log.load_log`) to ``memory`` (see the
    module docstring): each one's response index, and how many were already there (exact duplicates, skipped)."""
    offset = session_of_last(memory) or 0
    numbers = {s: offset + n for n, s in enumerate(dict.fromkeys(u.session for u in utterances), start=1)}
    turns = [{"speaker": u.speaker, "text": u.text, "timestamp": u.timestamp, "session": numbers[u.session],
              "turn_id": u.turn_id, "where": f"{where}: {u.turn_id or u.response_idx}"} for u in utterances]
    if memory.folder is not None:  # a new memory takes the zone of the whole log, not of its first batch
        memory.folder.first_zone(turns)
    ids, skipped = [], 0
    with tqdm(total=len(turns), desc=f"import {where}", unit="turn", disable=not progress) as bar:
        for start in range(0, len(turns), batch_size):
            appended = memory.append(turns[start:start + batch_size])
            ids += appended.ids
            skipped += appended.skipped
            bar.update(min(batch_size, len(turns) - start))
    return ids, skipped


def answer_line(memory: TemporalMemory, question: str, now: datetime, backend: LLMBackend | None, max_rows: int,
                out: TextIO, history: Sequence[str] = (), include_asked: bool = False
                ) -> tuple[str | None, TemporalResult]:
    """Print the plan, the when-answer (for a question that asks when), the rows (and the LLM's answer) for
    ``question`` after ``history``; (the LLM's answer, or None; the result)."""
    result = memory.ask(question, history=list(history) or None, now=now, include_asked=include_asked)
    for warning in result.warnings:  # first: what was not read, what was not found
        print(f"warning: {warning}", file=out)
    plan = "; ".join(f"{op['op']}" + (f" {op.get('column', op.get('group', ''))}".rstrip()) for op in result.plan.ops)
    print(f"plan: {plan or '(none)'}", file=out)
    for note in result.plan.notes:
        print(f"  # {note}", file=out)
    if result.answer is not None:
        a = result.answer
        span = f" [{a.start:%Y-%m-%d %H:%M}, {a.end:%Y-%m-%d %H:%M})" if a.start and a.end else ""
        print(f"when: {a.answer or 'no date could be given'}{span} (from {a.provenance})", file=out)
        for line in a.derivation:
            print(f"  # {line}", file=out)
    print(f"{len(result.rows)} rows" + (f", the first {max_rows}:" if len(result.rows) > max_rows else ":"), file=out)
    for i, r in result.rows.head(max_rows).iterrows():
        print(f"  [{i}] {r['date']} {r['time']} {r['speaker']}: {r['text'][:120]}", file=out)
    if backend is None:
        return None, result
    reply = backend.generate([answer_messages(question, result.rows, max_rows)], max_new_tokens=96)[0]
    if not reply.ok:
        print(f"(no answer: the LLM failed: {reply.error})", file=out)
        return None, result
    print(f"answer: {reply.text.strip()}", file=out)
    return reply.text.strip(), result




def chat(memory: TemporalMemory, lines: TextIO, out: TextIO, speaker: str = "user", backend: LLMBackend | None = None,
         max_rows: int = 5, include_asked: bool = False) -> int:
    """The chat loop over ``lines``; the number of turns recorded. A question that refers back ("and the session
    before that?", "what else did we say that day?") is read after the earlier questions and the dates they were
    answered with; any other stands on its own."""
    recorded = 0
    follow_ups = FollowUps()
    print(f"memory: {memory.living().path} ({len(memory.table):,} turns, calendar {memory.table.zone.name}). Type; a "
          "line ending in '?' is also asked, with now the wall clock; /ask QUESTION asks only; /quit leaves.",
          file=out)
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if line == "/quit":
            break
        if line.startswith("/") and line.split()[0] != "/ask":  # "/help", "/exit": a command, not a turn
            print(f"(unknown command {line.split()[0]!r}: /ask QUESTION asks without recording, /quit leaves; "
                  "anything else is recorded)", file=out)
            continue
        now = datetime.now(timezone.utc)
        question = line[len("/ask"):].strip() if line.startswith("/ask") else line if line.endswith("?") else None
        reply = None
        if question:
            try:
                earlier = follow_ups.before(question, now)  # a new question stands on its own
                reply, result = answer_line(memory, question, now, backend, max_rows, out, earlier, include_asked)
                follow_ups.record(question, result)
            except ValueError as e:
                print(f"(cannot answer: {e})", file=out)
        if line.startswith("/ask"):
            continue
        role = "question" if question else "utterance"  # a question is kept, with its role: not evidence
        idx = memory.add_many([{"speaker": speaker, "text": line, "timestamp": now, "role": role}])[0]
        recorded += 1
        print(f"recorded [{idx}] session {session_of_last(memory)} at "
              f"{now.astimezone(memory.table.tz).isoformat(timespec='seconds')}", file=out)
        if reply:
            memory.add_many([{"speaker": "assistant", "text": reply, "role": "answer",
                              "timestamp": max(now + timedelta(microseconds=1), datetime.now(timezone.utc))}])
            recorded += 1
    return recorded


def off_zone(utterances, zone) -> str | None:
    """What to say when turns are written with UTC offsets ``zone`` does not have at their times (a log of another
    zone imported into a memory whose calendar is set): they are filed on the memory's calendar; None when all fit."""
    off = [u for u in utterances if u.timestamp.utcoffset() != u.timestamp.astimezone(zone).utcoffset()]
    if not off:
        return None
    return (f"{len(off):,} of the {len(utterances):,} turns are written with UTC offsets the memory's zone, "
            f"{getattr(zone, 'key', zone)}, does not have at their times (e.g. {off[0].timestamp.isoformat()}): their "
            "days are this calendar's, not their own; a memory per zone keeps each on its own calendar")


def main(argv: Sequence[str] | None = None) -> int:
    commands = {"chat": (ChatArguments, ChatArguments.__doc__), "import": (ImportArguments, ImportArguments.__doc__),
                "ask": (LiveAskArguments, LiveAskArguments.__doc__),
                "recover": (RecoverArguments, RecoverArguments.__doc__)}
    name, args = parse_command(commands, argv, prog="python -m retrieval.memory.live",
                               description=__doc__.split("\n")[0])
    try:
        if name == "recover":
            memory, n, snapshot = recover(args)
            print(f"recovered {n:,} turns from {snapshot} into {memory.living().path}; turns added after that snapshot "
                  "was written (at the memory's last close) are not in it")
            memory.close()
            return 0
        # a log is read (and refused) before the memory is opened or created
        utterances = load_log(args.file, args.format, None, args.sample, timestamps=args.timestamps) \
            if name == "import" else []
        memory = open_memory(args)
        if name == "import":
            before = len(memory.table)
            ids, skipped = import_log(memory, utterances, args.batch_size, where=args.file)
            print(f"imported {len(ids) - skipped:,} turns into {args.memory} (now {len(memory.table):,})"
                  + (f"; {skipped:,} already there, skipped" if skipped else ""))
            source = "the memory's own, since its first turns" if before else ZONE_SOURCES[memory.table.zone.source]
            print(f"calendar zone: {memory.table.zone.name} ({source})")
            if off := off_zone(utterances, memory.table.zone.zone):
                print(f"warning: {off}", file=sys.stderr)
        elif name == "ask":
            print_result(memory.ask(args.question, history=args.history or None, now=args.now,
                                    include_asked=args.include_asked), args.json)
        else:
            backend = None
            if args.llm is not None:
                from retrieval.llm import llm_spec, load_backend

                backend = load_backend(args.llm) if llm_spec(args.llm) else None
            n = chat(memory, sys.stdin, sys.stdout, args.speaker, backend, args.max_rows, args.include_asked)
            print(f"{n} turns recorded; {len(memory.table):,} in {args.memory}")
    except (*INPUT_ERRORS, ValueError, FileExistsError, ConnectionError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    memory.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
