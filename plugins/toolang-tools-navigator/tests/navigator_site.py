"""A small site served on 127.0.0.1 for the navigator's tests, and a runtime served in
the background for a whole test module (one browser per module)."""

from __future__ import annotations

import asyncio
import html
import json
import os
import shutil
import threading
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from toolang_core import NewTurnRequest, TurnStatus
from toolang_core.runtime import Runtime
from toolang_core.testing.models import ScriptedModel, Step, text
from toolang_core.testing.pytest_plugin import ToolangHome

OUTSIDE = "http://203.0.113.9/away"
"""An address of TEST-NET-3: never reached (the allow-list refuses it first)."""

PAGES = {
    "/": f"""<title>Shop</title><h1>Shop</h1>
        <a href="/form">Order form</a> <a href="{OUTSIDE}">Elsewhere</a>""",
    "/form": """<title>Order</title><h1>Place an order</h1>
        <form action="/result" method="get">
          <label>Name <input name="name"></label>
          <label>Item <select name="item"><option>tea</option><option>coffee</option>
          </select></label>
          <label>Note <textarea name="note"></textarea></label>
          <button type="submit">Send order</button>
        </form>""",
    "/rerender": """<title>Live</title><h1>Live list</h1>
        <label>Filter <input name="filter" oninput="redraw()"></label>
        <div id="box"></div>
        <script>
          function redraw() {
            const b = document.createElement('button');
            b.textContent = 'Details';
            b.onclick = () => { location.href = '/result?name=details'; };
            document.getElementById('box').replaceChildren(b);
          }
          redraw();
        </script>""",
}


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if parts.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", OUTSIDE)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if parts.path == "/result":
            rows = "".join(
                f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>"
                for k, v in parse_qsl(parts.query)
            )
            body = f"<title>Thanks</title><h1>Thank you</h1><table>{rows}</table>"
        elif parts.path in PAGES:
            body = PAGES[parts.path]
        else:
            self.send_error(404)
            return
        data = f"<!doctype html><html><body>{body}</body></html>".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serving_site() -> Iterator[str]:
    """The site's base URL while it is served."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


CHROMIUM = os.environ.get("TOOLANG_CHROMIUM", "/usr/bin/chromium")
"""The Chromium the tests drive (``TOOLANG_CHROMIUM`` names another)."""


def require_chromium() -> str:
    """The Chromium to drive; fails (never skips) saying what to install without one."""
    path = shutil.which(CHROMIUM) or CHROMIUM
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.fail(
            f"the navigator's tests need Chromium at {CHROMIUM}: apt-get install chromium "
            "(tools/test-setup installs it), or set TOOLANG_CHROMIUM to a Chromium executable",
            pytrace=False,
        )
    return path


def require_bubblewrap() -> str:
    """bubblewrap, which the browser runs inside; fails (never skips) without it."""
    found = shutil.which("bwrap")
    if found is None:
        pytest.fail(
            "the navigator's browser runs inside bubblewrap: apt-get install bubblewrap "
            "(tools/test-setup installs it)",
            pytrace=False,
        )
    return found


def browser_processes() -> list[tuple[int, list[str]]]:
    """``(pid, command line)`` of every Chromium process started by this test process
    (its descendants, as the host sees them: real ids, whatever namespace they are in)."""
    parents: dict[int, int] = {}
    commands: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            raw = (entry / "cmdline").read_bytes()
        except OSError:  # gone meanwhile
            continue
        pid = int(entry.name)
        parents[pid] = int(stat.rsplit(")", 1)[1].split()[1])
        argv = [part.decode(errors="replace") for part in raw.split(b"\0") if part]
        if len(argv) == 1:  # Chromium's children rewrite theirs as one string
            argv = argv[0].split(" ")
        commands[pid] = argv
    me = os.getpid()

    def mine(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == me:
                return True
        return False

    return [
        (pid, argv)
        for pid, argv in commands.items()
        if argv and "chromium" in Path(argv[0]).name and mine(pid)
    ]


Agent = Callable[[], Generator[Any, Any, None]]
"""A scripted agent: a generator yielding steps (a tool call, or an awaitable function
to run between calls) and receiving what each tool call's result told the model."""


class Served:
    """A runtime served in the background; :meth:`turn` runs one chat turn whose model
    is a scripted agent and returns its id once it completed."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.agent: Generator[Any, Any, None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        async def serve() -> None:
            self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
            await self.runtime.serve(self._stop, sources=(), on_started=self._ready.set)

        asyncio.run(serve())

    def start(self) -> None:
        self._thread.start()
        assert self._ready.wait(120), "the runtime never started serving"

    def stop(self) -> None:
        assert self._loop is not None and self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(120)

    async def answer(self, request: Any) -> Step:
        """The model: the agent's next step, given the last tool result it asked for."""
        assert self.agent is not None
        last = request.messages[-1]
        told = json.loads(last.content.splitlines()[0]) if last.role == "tool" else None
        try:
            step = self.agent.send(told) if last.role == "tool" else next(self.agent)
            while callable(step):  # something the test does between two calls
                await step()
                step = self.agent.send(None)
        except StopIteration:
            return text("done")
        assert isinstance(step, Step)
        return step

    def turn(self, agent: Agent, *, said: str = "go", thread: str = "cli:alice") -> str:
        self.agent = agent()
        inbox = self.runtime.open_inbox()
        turn_id = inbox.submit(
            NewTurnRequest(source="chat", thread_id=thread, input=said, owner="alice")
        ).id
        deadline = time.monotonic() + 300
        while not (turn := inbox.get(turn_id)).status.is_terminal:
            assert time.monotonic() < deadline, f"turn {turn_id} never finished"
            time.sleep(0.05)
        assert turn.status is TurnStatus.COMPLETED, turn
        return turn_id


@contextmanager
def served_runtime(home: Path, plugin: object, settings: str = "") -> Iterator[Served]:
    """A runtime with the navigator and a scripted agent, served until the block ends."""
    chromium = require_chromium()
    require_bubblewrap()
    home.mkdir(parents=True, exist_ok=True)
    toolang = ToolangHome(home)
    toolang.write_config(
        '[models]\ndefault = "scripted"\n[runtime]\npoll_seconds = 0.05\n'
        f'[plugins.tools-navigator]\nexecutable_path = "{chromium}"\n{settings}'
    )
    env = {"HOME": str(home)}
    holder: dict[str, Served] = {}

    async def answer(request: Any) -> Step:
        return await holder["served"].answer(request)

    model = ScriptedModel(answer)
    runtime = Runtime.with_plugins(
        toolang.load(env),
        {"tools-navigator": plugin, "scripted": model.plugin()}.items(),
        env=env,
    )
    served = holder["served"] = Served(runtime)
    served.start()
    try:
        yield served
    finally:
        served.stop()
