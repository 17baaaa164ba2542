"""Chat over tables with the cTBLS pipeline: an interactive loop, a one-shot JSON mode, and a demo of answered turns.

    python -m retrieval.ctbls.chat --dtr runs/dtr --tracker runs/state_tracker            # interactive
    python -m retrieval.ctbls.chat --dtr runs/dtr --tracker runs/state_tracker --once "who won in 1998?" \
        [--history history.json]                                                  # one turn, JSON out
    python -m retrieval.ctbls.chat --dtr runs/dtr --tracker runs/state_tracker --show-turns 3 --split test
                                                                                  # an OTT-QA conversation, in full
    ctbls chat --dtr runs/dtr --tracker runs/state_tracker                          # the same, as a command

The tables' index is loaded from ``DTR/index/tables`` when ``python -m retrieval.ctbls.build_index --dtr DTR``
saved one there for these tables (seconds); otherwise the tables are encoded first (a progress bar; minutes for
OTT-QA's 8,891 on a CPU, unless the embedding cache holds them), after a line saying why. ``--index DIR``
names the indices to use (``DIR/tables``, ``DIR/cells``), and one that is missing or does not fit is an error.
``--bf16`` encodes under bf16 autocast, as ``build_index --bf16`` and ``eval.retrieval --bf16`` do: the
embedding cache and a saved index keep bf16 and fp32 encodings apart, so each is reused only by a run in the
same precision.

Bad input (a missing or malformed file, a folder that is not a trained DTR or tracker, a split without
tables) ends the command with one line naming it (exit code 2), as every command does.

``--llm`` takes ``smollm2`` (default), ``openai:MODEL``, a JSON mapping (see ``retrieval.llm.factory``)
or ``none`` for extractive answers (the top cell's value). ``--history FILE`` is a JSON list of earlier
turns, each ``[query, answer]`` or ``{"query": ..., "answer": ...}``. ``--split test`` restricts the
tables to that split (faster to index; the paper's setting). In the interactive loop, ``/new`` starts
a new conversation, ``/table UID`` pins a table, ``/prompt`` shows the last prompt, ``/quit`` leaves.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from retrieval.config import option, parse_config
from retrieval.ctbls.build_index import build_command
from retrieval.ctbls.pipeline import DEFAULT_MAX_NEW_TOKENS, Answer, CTBLSPipeline
from retrieval.ctbls.state_tracker import History
from retrieval.data.jsonio import DataError, read_json, run_cli
from retrieval.data.ottqa import DEFAULT_DATA_DIR, load_questions, load_tables
from retrieval.data.ottqa_conversations import build_conversations, table_split
from retrieval.data.paths import default_cache_dir
from retrieval.llm.factory import llm_spec, load_backend


def read_history(path: str | Path) -> list[tuple[str, str]]:
    """Earlier turns from a JSON file: a list of ``[query, answer]`` pairs or ``{"query", "answer"}`` objects."""
    data = read_json(path)
    if not isinstance(data, list):
        raise DataError(f"{path}: expected a JSON list of turns")
    turns = []
    for i, turn in enumerate(data):
        if isinstance(turn, dict) and "query" in turn:
            turns.append((str(turn["query"]), str(turn.get("answer") or "")))
        elif isinstance(turn, list | tuple) and len(turn) == 2:
            turns.append((str(turn[0]), str(turn[1] or "")))
        else:
            raise DataError(f"{path}: turn {i} is neither [query, answer] nor {{'query', 'answer'}}: {turn!r}")
    return turns


def format_turn(number: int, history: History, query: str, answer: Answer, reference: str | None = None) -> str:
    """One answered turn in full: history, table, ranked cells, answer (and the reference, when known)."""
    lines = [f"--- turn {number}"]
    if history:
        lines.append("history:")
        lines += [f"  user: {q}\n  assistant: {a}" for q, a in history]
    lines.append(f"query: {query}")
    score = f" (score {answer.table_score:.3f})" if answer.table_score is not None else " (pinned)"
    lines.append(f"table: {answer.table_id}: {answer.table_title}{score}")
    lines.append("top cells:")
    lines += [f"  [{r}] {s:.3f}  ({i[1]}, {i[2]})  {t}" for r, (i, t, s) in enumerate(answer.cells, 1)]
    status = "" if answer.llm_ok else f"   [LLM failed: {answer.error}; showing the top cell]"
    lines.append(f"answer: {answer.answer}{status}")
    if reference is not None:
        lines.append(f"reference: {reference}")
    return "\n".join(lines)


def show_turns(pipe: CTBLSPipeline, questions: str | Path, n: int, conversation: str | None = None,
               split: str | None = "test") -> list[Answer]:
    """Answer the first ``n`` turns of one OTT-QA conversation, printing each in full.

    The conversation is ``conversation`` (its table uid) or the first one of ``split`` with the most
    turns (up to ``n``). The history holds the pipeline's own answers, as in a live chat.
    """
    convs = build_conversations(load_questions(questions), pipe.tables, split)
    if conversation is not None:
        convs = [c for c in convs if c.conv_id == conversation]
        if not convs:
            raise DataError(f"{questions}: no conversation {conversation!r} among the questions of split {split!r}")
    if not convs:
        raise DataError(f"{questions}: no conversations for split {split!r} over these tables")
    conv = max(convs, key=lambda c: min(len(c.turns), n))  # first with the most turns, up to n
    print(f"conversation {conv.conv_id} (gold table {conv.table_id}), {min(n, len(conv.turns))} turns")
    history: list[tuple[str, str]] = []
    answers = []
    for number, turn in enumerate(conv.turns[:n], 1):
        answer = pipe.answer(history, turn.query)
        print(format_turn(number, history, turn.query, answer, turn.answer), flush=True)
        history.append((turn.query, answer.answer))
        answers.append(answer)
    return answers


def repl(pipe: CTBLSPipeline, history: list[tuple[str, str]], pinned: str | None = None) -> None:
    """The interactive loop: one line a turn; slash commands as in the module docstring."""
    last: Answer | None = None
    print("cTBLS chat: ask about a table. /new, /table UID, /prompt, /quit")
    while True:
        try:
            line = input("you> ").strip()
        except (EOFError, KeyboardInterrupt):
            print()
            return
        if not line:
            continue
        if line in ("/quit", "/exit"):
            return
        if line == "/new":
            history, pinned, last = [], None, None
            print("(new conversation)")
        elif line.startswith("/table"):
            uid = line[len("/table"):].strip()
            if uid and uid not in pipe.tables:
                print(f"(unknown table {uid!r})")
            else:
                pinned = uid or None
                print(f"(table pinned: {pinned})" if pinned else "(table chosen by retrieval)")
        elif line == "/prompt":
            print("\n\n".join(f"[{m['role']}]\n{m['content']}" for m in last.prompt) if last and last.prompt
                  else "(no LLM: answers are the top cell's value)" if pipe.llm is None else "(no prompt yet)")
        else:
            last = pipe.answer(history, line, table_id=pinned)
            print(format_turn(len(history) + 1, history, line, last), flush=True)
            history.append((line, last.answer))


@dataclass(kw_only=True)
class ChatArguments:
    """Chat over tables with the cTBLS pipeline."""

    dtr: str = option(help="Dense Table Retriever checkpoint folder")
    tracker: str = option(help="cell state tracker checkpoint folder")
    llm: str | dict = option("smollm2", "'smollm2', 'openai:MODEL', a JSON mapping, or 'none' (the top cell's value)")
    cache: str = option(help="sqlite generation cache ('' for none)",
        default_factory=lambda: default_cache_dir("generations.sqlite"))
    tables: str = option(str(DEFAULT_DATA_DIR / "tables.jsonl"), "OTT-QA tables.jsonl")
    passages: str = option(str(DEFAULT_DATA_DIR / "passages_dev.jsonl"),
        "linked page intros ('' for none; a missing file is an error)")
    questions: str = option(str(DEFAULT_DATA_DIR / "questions_dev.json"), "OTT-QA questions, for --show-turns")
    split: str | None = option(None, "only the tables of this split", choices=("train", "val", "test"))
    table_retrieval: str = option("dtr", "how the table is found", choices=("dtr", "bm25"))
    k: int = option(3, "cells given to the LLM")
    max_new_tokens: int = option(DEFAULT_MAX_NEW_TOKENS, "answer length limit, tokens")
    cache_dir: str = option(help="embedding cache ('' to disable)", default_factory=default_cache_dir)
    index: str | None = option(None, "saved indices to use, DIR/tables and DIR/cells (default: DTR/index/tables and "
                                     "TRACKER/index/cells when they fit)", metavar="DIR")
    bf16: bool = option(False, "encode under bf16 autocast (the precision of a saved index must match)")
    history: str | None = option(None, "JSON file of earlier turns")
    table: str | None = option(None, "pin this table (uid) instead of retrieving one")
    once: str | None = option(None, "answer one query and print the answer as JSON", metavar="QUERY")
    show_turns: int | None = option(None, "answer N turns of an OTT-QA conversation", metavar="N")
    conversation: str | None = option(None, "with --show-turns: the conversation (table uid) to replay")

    def __post_init__(self) -> None:
        if self.once is not None and self.show_turns is not None:
            raise ValueError("--once and --show-turns are two modes: give one")


def main(argv: list[str] | None = None) -> None:
    a = parse_config(ChatArguments, argv, prog="python -m retrieval.ctbls.chat", description=__doc__)
    tables = load_tables(a.tables)
    if a.split:
        every = len(tables)
        tables = {u: t for u, t in tables.items() if table_split(u) == a.split}
        if not tables:
            raise DataError(f"{a.tables}: none of its {every:,} tables is in split {a.split}")
    spec = llm_spec(a.llm)
    llm = load_backend(spec, cache=a.cache or None) if spec is not None else None
    pipe = CTBLSPipeline.from_pretrained(a.dtr, a.tracker, llm=llm, tables=tables, passages=a.passages or None,
                                         k=a.k, table_retrieval=a.table_retrieval, max_new_tokens=a.max_new_tokens,
                                         cache_dir=a.cache_dir or None, bf16=a.bf16, index_dir=a.index,
                                         index_hint=build_command(a.dtr, a.tables, a.bf16))
    history = read_history(a.history) if a.history else []
    if a.once is not None:
        answer = pipe.answer(history, a.once, table_id=a.table)
        json.dump(answer.as_dict(), sys.stdout, indent=2, ensure_ascii=False)
        print()
    elif a.show_turns is not None:
        show_turns(pipe, a.questions, a.show_turns, a.conversation, a.split or "test")
    else:
        repl(pipe, history, a.table)


def cli() -> int:
    return run_cli(main)


if __name__ == "__main__":
    sys.exit(cli())
