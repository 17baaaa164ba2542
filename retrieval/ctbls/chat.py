"""Chat over tables with the cTBLS pipeline: an interactive loop, a one-shot JSON mode, and a demo of answered turns.

    python -m retrieval.ctbls.chat --dtr runs/dtr --tracker runs/state_tracker            # interactive
    python -m retrieval.ctbls.chat --dtr runs/dtr --tracker runs/state_tracker --once "who won in 1998?" \
        [--history history.json]                                                  # one turn, JSON out
    python -m retrieval.ctbls.chat --dtr runs/dtr --tracker runs/state_tracker --show-turns 3 --split test
                                                                                  # an OTT-QA conversation, in full

``--llm`` takes ``smollm2`` (default), ``openai:MODEL``, a JSON mapping (see ``retrieval.llm.factory``)
or ``none`` for extractive answers (the top cell's value). ``--history FILE`` is a JSON list of earlier
turns, each ``[query, answer]`` or ``{"query": ..., "answer": ...}``. ``--split test`` restricts the
tables to that split (faster to index; the paper's setting). In the interactive loop, ``/new`` starts
a new conversation, ``/table UID`` pins a table, ``/prompt`` shows the last prompt, ``/quit`` leaves.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from retrieval.ctbls.pipeline import DEFAULT_MAX_NEW_TOKENS, Answer, CTBLSPipeline
from retrieval.ctbls.state_tracker import History
from retrieval.data.ottqa import DEFAULT_DATA_DIR, load_questions, load_tables
from retrieval.data.ottqa_conversations import build_conversations, table_split
from retrieval.llm.cache import CachedBackend


def read_history(path: str | Path) -> list[tuple[str, str]]:
    """Earlier turns from a JSON file: a list of ``[query, answer]`` pairs or ``{"query", "answer"}`` objects."""
    data = json.loads(Path(path).read_text())
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of turns")
    turns = []
    for i, turn in enumerate(data):
        if isinstance(turn, dict) and "query" in turn:
            turns.append((str(turn["query"]), str(turn.get("answer") or "")))
        elif isinstance(turn, list | tuple) and len(turn) == 2:
            turns.append((str(turn[0]), str(turn[1] or "")))
        else:
            raise ValueError(f"{path}: turn {i} is neither [query, answer] nor {{'query', 'answer'}}: {turn!r}")
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
            raise SystemExit(f"no conversation {conversation!r} among the questions of split {split!r}")
    if not convs:
        raise SystemExit(f"no conversations in {questions} for split {split!r} over these tables")
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


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dtr", required=True, help="Dense Table Retriever checkpoint folder")
    p.add_argument("--tracker", required=True, help="cell state tracker checkpoint folder")
    p.add_argument("--llm", default="smollm2", help="'smollm2', 'openai:MODEL', a JSON mapping, or 'none'")
    p.add_argument("--cache", default="runs/cache/generations.sqlite", help="sqlite generation cache ('' for none)")
    p.add_argument("--tables", default=str(DEFAULT_DATA_DIR / "tables.jsonl"))
    p.add_argument("--passages", default=str(DEFAULT_DATA_DIR / "passages_dev.jsonl"), help="'' for none")
    p.add_argument("--questions", default=str(DEFAULT_DATA_DIR / "questions_dev.json"), help="for --show-turns")
    p.add_argument("--split", help="only the tables of this split (train, val, test)")
    p.add_argument("--table-retrieval", choices=("dtr", "bm25"), default="dtr")
    p.add_argument("--k", type=int, default=3, help="cells given to the LLM")
    p.add_argument("--max-new-tokens", type=int, default=DEFAULT_MAX_NEW_TOKENS)
    p.add_argument("--cache-dir", default="runs/cache", help="embedding cache ('' to disable)")
    p.add_argument("--history", help="JSON file of earlier turns")
    p.add_argument("--table", help="pin this table (uid) instead of retrieving one")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--once", metavar="QUERY", help="answer one query and print the answer as JSON")
    mode.add_argument("--show-turns", type=int, metavar="N", help="answer N turns of an OTT-QA conversation")
    p.add_argument("--conversation", help="with --show-turns: the conversation (table uid) to replay")
    a = p.parse_args(argv)

    tables = load_tables(a.tables)
    if a.split:
        tables = {u: t for u, t in tables.items() if table_split(u) == a.split}
    llm = None
    if a.llm != "none":
        from retrieval.llm import load_backend

        llm = load_backend(json.loads(a.llm) if a.llm.lstrip().startswith("{") else a.llm)
        if a.cache:
            llm = CachedBackend(llm, a.cache)
    pipe = CTBLSPipeline.from_pretrained(a.dtr, a.tracker, llm=llm, tables=tables, passages=a.passages or None,
                                         k=a.k, table_retrieval=a.table_retrieval, max_new_tokens=a.max_new_tokens,
                                         cache_dir=a.cache_dir or None)
    history = read_history(a.history) if a.history else []
    if a.once is not None:
        answer = pipe.answer(history, a.once, table_id=a.table)
        json.dump(answer.as_dict(), sys.stdout, indent=2, ensure_ascii=False)
        print()
    elif a.show_turns is not None:
        show_turns(pipe, a.questions, a.show_turns, a.conversation, a.split or "test")
    else:
        repl(pipe, history, a.table)


if __name__ == "__main__":
    main()
