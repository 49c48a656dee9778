"""Real `toolang run` processes serving the MCP endpoint, and `toolang mcp serve`
processes, for the tests and the bench.

The model is a test plugin installed as a real distribution: it answers
``echo: <the last user message>`` and appends each message to ``$MCP_COUNTER`` (so a
test counts the turns that ran); a message containing ``slow`` waits a minute first
(something to cancel); a message containing ``gated`` first calls the tool
``kit_gated``, which the kit's approval gate hands to a person (an approval request),
and answers ``done: <the tool's result>`` once it ran.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import httpx
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from toolang_core import TurnFilter
from toolang_core.store.sqlite import SQLiteStore
from toolang_core.testing.dists import make_distribution
from toolang_core.testing.processes import free_port, start_toolang_run, wait_serving

T = TypeVar("T")

MODEL_MODULE = """
import asyncio, os
from toolang_core import Tool, ToolCall, hookimpl
from toolang_core.models.types import ModelResponse
from toolang_core.testing.approvals import ask_a_person


class Echo:
    async def complete(self, request):
        last = request.messages[-1]
        if last.role == "tool":
            return ModelResponse(text="done: " + last.content, model="echo")
        text = next(m.content for m in reversed(request.messages) if m.role == "user")
        counter = os.environ.get("MCP_COUNTER")
        if counter:
            with open(counter, "a", encoding="utf-8") as f:
                f.write(text + "\\n")
        if "gated" in text:
            return ModelResponse(tool_calls=(ToolCall("g1", "kit_gated", {}),), model="echo")
        if "slow" in text:
            await asyncio.sleep(60)
        return ModelResponse(text="echo: " + text, model="echo")


class Provider:
    def model(self, model_id):
        return Echo()


@hookimpl
def toolang_register_models(register):
    register("echo", lambda context: Provider(), description="echoes (tests)")


@hookimpl
def toolang_register_tools(register):
    register(Tool(name="kit_gated", description="Needs a person's yes.",
                  parameters={"type": "object"}, function=lambda **_: "ran"))


@hookimpl
def toolang_approve_tool_call(call, ctx):
    return ask_a_person(call, ctx) if call.name == "kit_gated" else None
"""

BASE_CONFIG = """
[runtime]
executor = "agent"
poll_seconds = 0.02
lease_seconds = 5.0
shutdown_grace_seconds = 0.2

[models]
default = "echo"

[plugins.source-mcp]
{mcp}
"""
MCP_SETTINGS = "poll_seconds = 0.02\n"
"""The ``[plugins.source-mcp]`` lines of a home unless it is given its own."""

TOKENS = """
[plugins.server]
enabled = true
port = {port}
tokens = {{ alice = "alice-token-0123456789", bob = "bob-token-0123456789" }}
"""

ALICE = "alice-token-0123456789"
BOB = "bob-token-0123456789"
PLUGINS = "source-mcp,mcp-echo-model,source-chat,server"


def install_kit(site: Path) -> None:
    make_distribution(
        site,
        "toolang-mcp-test-kit",
        entry_points={"toolang": {"mcp-echo-model": "mcp_echo_model"}},
        modules={"mcp_echo_model": MODEL_MODULE},
    )


class Home:
    """One toolang home (its own store) with the kit; ``start()`` runs `toolang run`
    serving the server plugin (and the MCP endpoint) on a free port. ``mcp``: the
    lines of its ``[plugins.source-mcp]`` section."""

    def __init__(
        self,
        home: Path,
        site: Path,
        *,
        server: bool = True,
        extra: str = "",
        mcp: str = MCP_SETTINGS,
    ) -> None:
        self.home = home
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        home.mkdir(parents=True, exist_ok=True)
        tokens = TOKENS.format(port=self.port) if server else ""
        config = BASE_CONFIG.format(mcp=mcp) + tokens + extra
        (home / "toolang.toml").write_text(config, encoding="utf-8")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
        self.env.update(
            TOOLANG_LOAD_PLUGINS=PLUGINS,
            PYTHONPATH=os.pathsep.join([str(site), self.env.get("PYTHONPATH", "")]),
            MCP_COUNTER=str(home / "received.txt"),
        )
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> Home:
        self.log = self.home / f"run-{time.monotonic_ns()}.log"
        self.process = start_toolang_run(self.home, self.env, self.log)
        wait_serving(self.process, self.log, self.serving, what=f"the server at {self.url}")
        return self

    def serving(self) -> bool:
        try:
            return httpx.get(self.url + "/api/openapi.json", timeout=1).is_success
        except httpx.HTTPError:
            return False

    def stop(self) -> str:
        if self.process is None:
            return ""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)
        return self.log.read_text(encoding="utf-8")

    def stdio_command(self, *args: str) -> tuple[str, list[str]]:
        """The command line of `toolang mcp serve` in this home."""
        return sys.executable, ["-m", "toolang_core", "mcp", "serve", *args]

    def received(self) -> list[str]:
        path = self.home / "received.txt"
        return path.read_text(encoding="utf-8").splitlines() if path.exists() else []

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "toolang_core", *args],
            cwd=self.home,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def stored(self, what: Callable[[SQLiteStore], T]) -> T:
        """``what`` of this home's store, opened read-only for the look."""
        store = SQLiteStore(self.home / ".toolang" / "toolang.db", read_only=True)
        try:
            return what(store)
        finally:
            store.close()

    def turns(self, **where: Any) -> list[Any]:
        """The stored turns matching ``where`` (``TurnFilter``'s fields)."""
        return self.stored(lambda store: store.list_turns(TurnFilter(limit=500, **where)))


@asynccontextmanager
async def http_session(home: Home, token: str = ALICE) -> AsyncIterator[ClientSession]:
    """An initialised SDK client session on ``home``'s HTTP endpoint, as ``token``."""
    client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with (
        client,
        streamable_http_client(home.url + "/api/mcp", http_client=client) as (read, write),
        ClientSession(read, write) as opened,
    ):
        await opened.initialize()
        yield opened


@asynccontextmanager
async def stdio_session(home: Home, *args: str) -> AsyncIterator[ClientSession]:
    """An initialised SDK client session on `toolang mcp serve` (stdio) in ``home``."""
    command, argv = home.stdio_command(*args)
    params = StdioServerParameters(command=command, args=argv, env=home.env, cwd=str(home.home))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as opened:
        await opened.initialize()
        yield opened
