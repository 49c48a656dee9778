"""Helpers for this plugin's tests: test tools, a bus subscriber, a real HTTP receiver,
and a real agent turn."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import attrs

from toolang_core import NewTurnRequest, Tool, hookimpl


def lookup(term: str, token: str = "") -> str:
    """Look a term up (a tool the scripted model calls).

    :param term: what to look up
    :param token: a credential the tool would use
    """
    return f"found {term}: " + "x" * 300


def explode(why: str) -> str:
    """Fail with ``why``.

    :param why: the error message
    """
    raise RuntimeError(why)


class Tools:
    @staticmethod
    @hookimpl
    def toolang_register_tools(register):
        register(Tool.from_function(lookup, blocking=False))
        register(Tool.from_function(explode, blocking=False))


class Subscriber:
    """Another plugin on the bus: records every event it is given."""

    def __init__(self):
        self.events = []

    @hookimpl
    def toolang_on_event(self, event, runtime):
        self.events.append(event)


@attrs.define
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: dict


class Receiver:
    """A real HTTP server that answers with scripted statuses (then 200) and records
    every request."""

    def __init__(self, statuses=()):
        self.statuses = list(statuses)
        self.requests: list[Received] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length))
                with receiver.lock:
                    receiver.requests.append(
                        Received(
                            "POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body
                        )
                    )
                    status = receiver.statuses.pop(0) if receiver.statuses else 200
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args):  # keep the test output clean
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def run_turn(runtime, text="go"):
    """Submit one chat turn, serve until idle (shutdown included); return the turn."""
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:t", input=text)).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    return inbox.get(turn_id)


def read_lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]
