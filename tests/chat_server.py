"""A chat-completions server on 127.0.0.1 (``http.server`` in a thread) whose behaviour is scripted per message.

Imported by test modules (``from chat_server import ChatServer``; pytest puts ``tests/`` on the path). The real
``openai`` client talks to it over loopback, so its retries, timeouts and typed errors are what the tests see.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# Error replies ask for a 10 ms wait, so the client's retries (which honour it) keep the tests fast.
FAST_RETRY = {"retry-after-ms": "10"}


def completion(text: str) -> dict:
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "scripted",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": len(text.split()), "total_tokens": 3},
    }


class ChatServer:
    """``script[content]`` lists the actions taken by successive requests whose last message is ``content``:

    - ``("status", code)`` or ``("status", code, headers)``: an error reply (``FAST_RETRY`` headers by default);
    - ``("slow", seconds)``: wait, then answer ``"echo: <content>"``;
    - ``("text", answer)``: answer; ``("garbage", body)``: a 200 whose body is ``body``.

    With the script used up, it answers ``"echo: <content>"``. Every request's JSON body, headers and arrival
    time are kept (``requests``, ``headers``, ``times``).
    """

    def __init__(self) -> None:
        self.script: dict[str, list[tuple]] = defaultdict(list)
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.times: list[float] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                content = body["messages"][-1]["content"]
                with server._lock:
                    server.requests.append(body)
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                    server.times.append(time.monotonic())
                    steps = server.script[content]
                    action = steps.pop(0) if steps else ("text", f"echo: {content}")
                try:
                    self._act(action, content)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting
                    pass

            def _act(self, action: tuple, content: str) -> None:
                kind, value, *rest = action
                if kind == "slow":
                    time.sleep(value)
                    self._reply(200, completion(f"echo: {content}"))
                elif kind == "status":
                    headers = rest[0] if rest else FAST_RETRY
                    self._reply(value, {"error": {"message": f"scripted {value}", "type": "test"}}, headers)
                elif kind == "garbage":
                    self._reply(200, value)
                else:
                    self._reply(200, completion(value))

            def _reply(self, code: int, payload, headers: dict | None = None) -> None:
                data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def hits(self, content: str) -> int:
        return sum(r["messages"][-1]["content"] == content for r in self.requests)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
