"""A real ``toolang run`` with the server on, in a subprocess, for API and browser tests.

The test distribution it installs holds the only fakes: a model (``testmodel``) that
follows ``/tool NAME {json}``, answers ``/json VALUE`` with VALUE (a typed answer) and
otherwise echoes its input, streamed word by word (``TL_WORD_DELAY`` seconds apart),
each answer reporting 10 input and 2 output tokens; an approval gate that asks a person
about every ``guarded_write`` call; and three tools: ``guarded_write`` (writes a file),
``slow_wait`` (sleeps, for cancelling running work) and ``gate_wait`` (runs until the
test creates a file: a tool call caught while it runs). The model takes image attachments
and names each it got after its echo (``[dot.png image/png 70]``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx

from toolang_core.testing import processes
from toolang_core.testing.live_server import bearer_client, server_url

ANSWER_WAIT = 120
"""The ``wait`` a test's submit asks for: the server answers as soon as the turn is
finished; this only bounds a turn that never finishes (a combined run on a busy machine
can take far longer than usual, and a 202 there would fail the test for nothing)."""


TEST_PLUGIN = r'''
import asyncio, json, os, re
from pathlib import Path
from toolang_core import ApprovalBook, Pending, Tool, ToolCall, hookimpl
from toolang_core.models import ModelRequest, ModelResponse

_TOOL = re.compile(r"/tool\s+([A-Za-z][\w-]*)\s*(\{.*\})?", re.S)
_WORD = re.compile(r"\s*\S+\s*|\s+")


USAGE = {"input_tokens": 10, "output_tokens": 2}  # every answer reports the same usage


class TestModel:
    attachment_types = ("image/*",)

    async def complete(self, request):
        last = request.messages[-1]
        if last.role == "tool":
            return ModelResponse(text=f"done: {last.content[:200]}", model="testmodel",
                                 usage=USAGE)
        if last.content.startswith("/json "):
            return ModelResponse(text=last.content[6:], model="testmodel", usage=USAGE)
        asked = _TOOL.search(last.content)
        if asked:
            params = json.loads(asked.group(2) or "{}")
            return ModelResponse(tool_calls=(ToolCall("", asked.group(1), params),),
                                 model="testmodel", usage=USAGE)
        seen = "".join(f" [{a.ref.name} {a.media_type} {a.ref.size}]" for a in last.attachments)
        return ModelResponse(text=f"echo: {last.content}{seen}", model="testmodel", usage=USAGE)

    async def stream(self, request):
        response = await self.complete(request)
        delay = float(os.environ.get("TL_WORD_DELAY", "0"))
        for index, word in enumerate(_WORD.findall(response.text)):
            if index and delay:
                await asyncio.sleep(delay)
            yield word
        yield response


class Provider:
    def model(self, model_id):
        return TestModel()


@hookimpl
def toolang_register_models(register):
    register("testmodel", lambda context: Provider())


def guarded_write(name: str, text: str) -> str:
    """Write TEXT to the file NAME (a person must approve)."""
    path = Path(os.environ["TL_OUT_DIR"]) / name
    path.write_text(text)
    return f"wrote {len(text)} characters to {name}"


async def slow_wait(seconds: float) -> str:
    """Wait SECONDS seconds."""
    await asyncio.sleep(seconds)
    return f"waited {seconds} s"


async def gate_wait(name: str) -> str:
    """Wait until the file NAME exists in the out directory (a test opens the gate)."""
    gate = Path(os.environ["TL_OUT_DIR"]) / name
    while not gate.exists():
        await asyncio.sleep(0.02)
    return f"gate {name} opened"


@hookimpl
def toolang_register_tools(register):
    register(Tool.from_function(guarded_write))
    register(Tool.from_function(slow_wait, blocking=False))
    register(Tool.from_function(gate_wait, blocking=False))


class KitMemory:
    """A list in memory, searched by shared words: enough for the server's memory
    routes and for every turn to have a memory-write stage (this plugin's tox env has no
    other memory plugin; toolang-memory-sqlite is tested by the conformance suite).
    Like every memory plugin, it keeps each owner's entries apart."""

    def __init__(self):
        self.entries = []

    def recall(self, request):
        from toolang_core.memory import MemoryItem, MemoryRecallResult, Provenance

        words = set(request.query_text.lower().split())
        found = [
            MemoryItem(str(i), text, float(len(words & set(text.lower().split()))),
                       Provenance(agent, thread, owner=owner))
            for i, (agent, thread, text, owner) in enumerate(self.entries)
            if agent == request.agent_id
            and owner == request.owner
            and (request.thread_id is None or thread == request.thread_id)
            and words & set(text.lower().split())
        ]
        found.sort(key=lambda item: -item.score)
        return MemoryRecallResult(items=tuple(found[: request.limits.max_items]), provider="kit")

    def remember(self, batch):
        from toolang_core.memory import MemoryWriteResult

        for entry in batch.entries:
            self.entries.append((batch.agent_id, batch.thread_id, entry.text, batch.owner))
        return MemoryWriteResult(written=len(batch.entries), provider="kit")

    def forget(self, request):
        from toolang_core.memory import MemoryForgetResult

        before = len(self.entries)
        self.entries = [
            e for e in self.entries if (e[0], e[3]) != (request.agent_id, request.owner)
        ]
        return MemoryForgetResult(forgotten=before - len(self.entries), provider="kit")

    def list_entries(self, request):
        return ()

    def health(self):
        from toolang_core.memory import MemoryHealth

        return MemoryHealth(status="ok", provider="kit", entries=len(self.entries))

    def close(self):
        pass


@hookimpl
def toolang_register_memory(register):
    register("kit", lambda context: KitMemory())


@hookimpl
def toolang_on_event(event, runtime):
    """A bus subscriber, so every turn has all five after-turn stages."""


@hookimpl
def toolang_inactive_hooks(runtime):
    """With TL_NO_SUBSCRIBER set, a run without that subscriber (no events stage)."""
    return ["toolang_on_event"] if os.environ.get("TL_NO_SUBSCRIBER") else []


@hookimpl
def toolang_approve_tool_call(call, ctx):
    if call.name != "guarded_write":
        return None
    approval = ApprovalBook(ctx.runtime.store).create(
        turn_id=ctx.turn_id, call_id=ctx.call_id, tool=call.name, params=call.params,
        thread_id=ctx.thread_id, agent=ctx.agent, requester=None,
        prompt="write a file?", timeout_seconds=None,
    )
    return Pending(approval.id)
'''

TOKENS = {"alice": "alice-token-0123456789", "bob": "bob-token-0123456789abc"}

TOKEN_CONFIG = f"""
[plugins.server.tokens]
alice = "{TOKENS["alice"]}"
bob = "${{BOB_TOKEN}}"
"""
"""The two owners' tokens (bob's from the environment: ``BOB_TOKEN``)."""

BASE_CONFIG = """
[runtime]
executor = "agent"
poll_seconds = 0.05
shutdown_grace_seconds = 1
[models]
default = "testmodel"
[memory]
plugin = "kit"
[plugins.server]
enabled = true
port = 0
"""


class LiveServer:
    """A running ``toolang run`` (its home, URL and process)."""

    def __init__(self, home: Path, proc: subprocess.Popen[str], url: str) -> None:
        self.home = home
        self.proc = proc
        self.url = url

    def client(self, token: str | None = None, **kw: object) -> httpx.Client:
        timeout = ANSWER_WAIT + 30  # above the longest wait a test asks the server for
        return bearer_client(self.url, token, timeout=timeout, **kw)

    def new_sign_in_link(self) -> str:
        """A fresh one-time sign-in link, as `toolang console` makes one."""
        from toolang_server.signin import sign_in_url

        credential = (self.home / ".toolang" / "credential").read_text().strip()
        return sign_in_url(self.url, credential)

    def operator_credential(self) -> str:
        return (self.home / ".toolang" / "credential").read_text().strip()

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        return (self.home / "server.log").read_text()


def install_test_plugin(make_distribution: object) -> None:
    make_distribution(  # type: ignore[operator]
        "toolang-test-server-kit",
        entry_points={"toolang": {"test-kit": "tl_server_kit"}},
        modules={"tl_server_kit": TEST_PLUGIN},
    )


def server_environment(
    home: Path, site: Path, *, extra_config: str = "", env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Write ``home``'s config (the kit's, then ``extra_config``) and return the
    environment a ``toolang run`` of it gets (the kit on its path, ``env`` on top)."""
    (home / "toolang.toml").write_text(BASE_CONFIG + extra_config, encoding="utf-8")
    out = home / "out"
    out.mkdir(exist_ok=True)
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    full_env.update(
        {
            "PYTHONPATH": os.pathsep.join([str(site), full_env.get("PYTHONPATH", "")]),
            "TOOLANG_LOAD_PLUGINS": "server,test-kit",
            "TL_OUT_DIR": str(out),
            **(env or {}),
        }
    )
    return full_env


def start_server(
    home: Path,
    site: Path,
    *,
    extra_config: str = "",
    env: Mapping[str, str] | None = None,
    timeout: float = 60,
) -> LiveServer:
    """Start ``toolang run`` in ``home`` and wait (with a deadline) until it listens."""
    full_env = server_environment(home, site, extra_config=extra_config, env=env)
    url_file = home / ".toolang" / "server.url"
    url_file.unlink(missing_ok=True)
    log = (home / "server.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolang_core", "--log-format", "json", "run"],
        cwd=home,
        env=full_env,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        url = server_url(proc, home / "server.log", home, timeout)
    except AssertionError:
        proc.kill()  # it never listened: not left running (a no-op when it exited)
        raise
    return LiveServer(home, proc, url)


def wait_for(predicate: Any, timeout: float = 60, what: str = "condition") -> Any:
    """:func:`toolang_core.testing.processes.wait_for` with a 60 s bound (an upper bound
    only: the wait ends as soon as the condition holds; a loaded CI machine needs it)."""
    return processes.wait_for(predicate, timeout, what)


def last_call_text(events: list[tuple[str, dict[str, object]]]) -> str:
    """The joined text deltas of the last model call in ``events``."""
    texts = [d for k, d in events if k == "text"]
    if not texts:
        return ""
    last = texts[-1]["call"]
    return "".join(str(d["delta"]) for d in texts if d["call"] == last)


def open_runtime_store(server: LiveServer) -> tuple[object, object]:
    """A runtime (not serving) and a new connection to the server's store, from here."""
    from toolang_core import Runtime, load_config

    env = {"BOB_TOKEN": TOKENS["bob"], "TOOLANG_LOAD_PLUGINS": "server,test-kit"}
    runtime = Runtime.from_config(load_config(server.home / "toolang.toml", env=env), env=env)
    return runtime, runtime.open_store()


def spawn_run(server: LiveServer, owner: str, task: str) -> str:
    """Start a task run for ``owner`` as an agent would (the controller writes it to the
    store; the server's runtime admits it). Runs in a thread of its own: a caller may
    already have an event loop (Playwright's)."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from toolang_core import SpawnRequest, TaskRunController

    def spawn() -> str:
        runtime, store = open_runtime_store(server)
        try:
            controller = TaskRunController(store, runtime)  # type: ignore[arg-type]
            request = SpawnRequest(owner=owner, parent_thread_id=f"http:{owner}", task=task)
            return asyncio.run(controller.spawn(request)).id
        finally:
            store.close()  # type: ignore[attr-defined]

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(spawn).result(60)
