"""The memory as an MCP server (the ``mcp`` SDK): tools an agent calls to remember turns, ask the memory, and ask
when something happened, over stdio or streamable HTTP, with no code of ours on the agent's side.

    python -m retrieval.service.server mcp --memory runs/my_memory                      # stdio (an agent starts it)
    python -m retrieval.service.server mcp --memory runs/my_memory --transport streamable-http --port 8765
                                                                                         # http://127.0.0.1:8765/mcp

Tools (each returns JSON):

- ``remember(turns)``: append turns ``[{"speaker", "text", "timestamp"?}]`` in one transaction; their ids.
- ``ask(question, now?)``: the rows the question selects (at most ``max_rows``, best first or in time order), the
  plan's notes, and the when-answer when it asks when.
- ``when(question, now?)``: the date (or length) with its interval, evidence and derivation.

A tool given bad input (an empty question, a timestamp that does not read) returns an error result that says why;
the server goes on.
"""

from __future__ import annotations

import threading

from retrieval.data.jsonio import INPUT_ERRORS
from retrieval.memory.temporal_memory import TemporalMemory

MAX_ROWS = 10


def memory_server(memory: TemporalMemory, max_rows: int = MAX_ROWS, name: str = "ctbls-memory"):
    """An ``MCPServer`` whose tools read and write ``memory`` (calls serialised by one lock)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server = MCPServer(name, instructions="A memory of a conversation: remember turns as they are said, then ask "
                       "what was said and when ('what did we discuss last Friday?', 'when did Ann adopt the dog?').")
    lock = threading.Lock()

    def checked(fn):
        try:
            with lock:
                return fn()
        except (*INPUT_ERRORS, ValueError) as e:
            raise ToolError(str(e)) from e  # the SDK returns its message as the tool's error result

    @server.tool()
    def remember(turns: list[dict]) -> dict:
        """Append turns to the memory, in time order: each {"speaker", "text", "timestamp"?: ISO 8601 (default
        now), "session"?}. Returns their ids; a turn already remembered (same time, speaker and text) is skipped."""
        def run():
            appended = memory.append(turns)
            return {"ids": appended.ids, "skipped": appended.skipped, "turns": len(memory.table)}
        return checked(run)

    @server.tool()
    def ask(question: str, now: str | None = None) -> dict:
        """Ask the memory in plain words ("what did we discuss two sessions ago?", "what did Bob say about his
        job last week?"): the rows that answer it, how they were chosen, and the date for a when-question."""
        def run():
            result = memory.ask(question, now=now)
            out = result.to_dict(max_text=500)
            out["rows"] = out["rows"][:max_rows]
            out.pop("trace", None)
            return out
        return checked(run)

    @server.tool()
    def when(question: str, now: str | None = None) -> dict:
        """When did something happen ("when did Ann start her new job?", "how long ago did we go to Lisbon?"):
        the date or length, its interval, the evidence and the derivation."""
        def run():
            result = memory.ask(question, now=now)
            if result.answer is None:
                raise ValueError("not a when-question ('when did ...?', 'how long ago ...?'): use the ask tool")
            return result.answer.to_dict()
        return checked(run)

    return server
