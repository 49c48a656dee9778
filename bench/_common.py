"""What the agent-turn benches share: the scripted model and delivery plugin, the
runtime as ``toolang init`` composes it with the bench's own sections, and a burst of
turns submitted over several threads.

Used by ``agent_turns.py``, ``compaction.py`` and ``output_validation.py``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolang_core import TurnRequest, hookimpl
from toolang_core.builtins import builtin_plugins
from toolang_core.cli.cmd_run import freeze_heap  # what `toolang run` does
from toolang_core.config import parse_config, starter_config
from toolang_core.inbox.inbox import Inbox
from toolang_core.models.types import ModelRequest, ModelResponse
from toolang_core.plugins.loader import scan_entry_points
from toolang_core.runtime import Runtime
from toolang_core.store.types import NewTurnRequest

BENCH_SECTIONS = {"[agents]", "[models]", "[runtime]"}
SERVER_SECTION = "[plugins.server]"


class ScriptedWorkload:
    """A bench's plugin: registers ``scripted``, a model answering with
    :meth:`complete` at once, and records each delivered answer (and when), waking the
    waiter set for its turn."""

    def __init__(self) -> None:
        self.answers: dict[str, str] = {}
        self.delivered_at: dict[str, float] = {}
        self.waiters: dict[str, asyncio.Future[None]] = {}

    def complete(self, request: ModelRequest) -> ModelResponse:
        raise NotImplementedError

    @hookimpl
    def toolang_register_models(self, register: Any) -> None:
        workload = self

        class Model:
            async def complete(self, request: ModelRequest) -> ModelResponse:
                return workload.complete(request)

        class Provider:
            def model(self, model_id: str | None) -> Model:
                return Model()

        register("scripted", lambda context: Provider(), description="the bench's model")

    @hookimpl
    def toolang_deliver_turn(self, turn: TurnRequest, runtime: Runtime) -> None:
        self.answers[turn.id] = turn.output or ""
        self.delivered_at[turn.id] = time.perf_counter()
        waiter = self.waiters.pop(turn.id, None)
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


def starter_text(edit: Callable[[str], str] = lambda text: text) -> str:
    """The starter ``toolang.toml`` for every installed plugin, passed through ``edit``,
    less its ``[agents]``, ``[models]`` and ``[runtime]`` sections: the bench appends
    its own. The server (toolang-server, when installed) listens on any free port: the
    starter's fixed one is the port of a runtime started by hand, and a bench must
    never collide with one, nor with a test."""
    installed = {ep.name for ep in scan_entry_points()}
    text = edit(starter_config(installed))
    kept: list[str] = []
    section = ""
    for line in text.splitlines():
        if line.startswith("["):
            section = line.strip()
        if section == SERVER_SECTION and line.startswith("port ="):
            kept.append("port = 0")  # any free port
        elif section not in BENCH_SECTIONS:
            kept.append(line)
    return "\n".join(kept)


def memory_off(text: str) -> str:
    return text.replace('[memory]\nplugin = "sqlite"', '# [memory]\n# plugin = "sqlite"')


def compose(home: Path, text: str, workload: ScriptedWorkload) -> Runtime:
    """The runtime of config ``text`` (as if at ``home/toolang.toml``) with ``workload``
    registered as the plugin ``bench``."""
    config = parse_config(text, file=home / "toolang.toml", env={})
    return Runtime.from_config(config, env={}, builtins=[*builtin_plugins(), ("bench", workload)])


async def started(
    runtime: Runtime, stop: asyncio.Event, *, freeze: bool = True
) -> asyncio.Task[Any]:
    """``runtime`` serving (no sources) until ``stop``, once it admits turns."""
    on_started = freeze_heap if freeze else None
    serving = asyncio.create_task(runtime.serve(stop, sources=(), on_started=on_started))
    while not runtime.admitting:
        await asyncio.sleep(0.001)
    return serving


async def burst(
    inbox: Inbox,
    workload: ScriptedWorkload,
    turns: int,
    threads: int,
    expect: Callable[[str, int, int], None],
) -> float:
    """Submit ``turns`` ``add a b`` turns over ``threads`` threads at once, wait for
    every answer; return turns / (first submit → last answer delivered). ``expect(id, a,
    b)`` is told each turn submitted."""
    start = time.perf_counter()
    for i in range(turns):
        a, b = i, 2 * i + 1
        submitted = inbox.submit(
            NewTurnRequest(source="chat", thread_id=f"chat:{i % threads}", input=f"add {a} {b}")
        )
        expect(submitted.id, a, b)
        if i % 25 == 24:  # each submit wakes the runtime; let it work while we produce
            await asyncio.sleep(0)
    while len(workload.answers) < turns:
        await asyncio.sleep(0.002)
    elapsed = max(workload.delivered_at.values(), default=start + 1) - start
    return turns / elapsed if turns else 0.0


async def ordered(
    inbox: Inbox,
    workload: ScriptedWorkload,
    threads: int,
    turns_per_thread: int,
    expect: Callable[[str, int, int], None],
) -> float:
    """Ordered conversations: ``threads`` threads of ``turns_per_thread`` ``add a b``
    turns, each thread's next turn submitted when its previous answer is delivered (one
    in flight per thread, as chat users and A2A/MCP callers send). Returns turns / (first
    submit → last answer delivered)."""
    loop = asyncio.get_running_loop()

    async def conversation(thread: int) -> None:
        for n in range(turns_per_thread):
            a, b = thread * turns_per_thread + n, n + 1
            submitted = inbox.submit(
                NewTurnRequest(
                    source="chat", thread_id=f"chat:ordered-{thread}", input=f"add {a} {b}"
                )
            )
            expect(submitted.id, a, b)
            waiter = loop.create_future()
            workload.waiters[submitted.id] = waiter
            if submitted.id not in workload.answers:
                await waiter

    start = time.perf_counter()
    await asyncio.gather(*(conversation(t) for t in range(threads)))
    turns = threads * turns_per_thread
    elapsed = time.perf_counter() - start
    return turns / elapsed if turns else 0.0
