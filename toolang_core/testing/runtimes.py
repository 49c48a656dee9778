"""Driving a real runtime in-process from a test: building one, serving it in the
background, submitting turns and waiting for them, and building the contexts hooks and
tools are called with.

Everything here runs the real thing — a real :class:`~toolang_core.runtime.Runtime` on a
real SQLite store under the test's directory; only the model is scripted (see
:mod:`toolang_core.testing.models`). For plugins' tests as much as the core's.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final

import attrs

from toolang_core.config import ToolangConfig
from toolang_core.config.model import RuntimeConfig, SchedulerConfig
from toolang_core.execution.seam import TurnContext, TurnOutcome
from toolang_core.runtime import Runtime
from toolang_core.runtime_view import RuntimeView
from toolang_core.store.types import NewTurnRequest, StepRecord, TurnRequest, TurnStatus
from toolang_core.tools.types import ToolCall, ToolCallContext

SCRIPTED_AGENT_CONFIG: Final = """
[runtime]
executor = "agent"
poll_seconds = 0.05
shutdown_grace_seconds = 0

[models]
default = "scripted"
"""
"""A ``toolang.toml`` for real agent turns with the scripted model: the agent executor,
a 50 ms poll and no shutdown grace (add sections after it)."""


def make_config(base_dir: Path, **runtime: Any) -> ToolangConfig:
    """A configuration rooted at ``base_dir`` (home ``base_dir/.toolang``): the echo
    executor, a 50 ms poll, and ``runtime``'s ``[runtime]`` keys over them
    (``scheduler=`` gives a whole :class:`SchedulerConfig`)."""
    scheduler = runtime.pop("scheduler", SchedulerConfig())
    return ToolangConfig(
        base_dir=base_dir,
        home=base_dir / ".toolang",
        scheduler=scheduler,
        runtime=RuntimeConfig(**{"poll_seconds": 0.05, "executor": "echo", **runtime}),
    )


def make_runtime(
    base_dir: Path,
    *,
    executor: object | None = None,
    plugins: Iterable[tuple[str, object]] = (),
    **runtime: Any,
) -> Runtime:
    """A runtime on :func:`make_config`'s configuration with the built-in plugins and
    ``plugins`` (``(name, plugin object)`` pairs), no entry point loaded; ``executor``,
    when given, runs its turns instead of the configured one."""
    config = make_config(base_dir, **runtime)
    plugins = list(plugins)
    rt = (
        Runtime.with_plugins(config, plugins)
        if plugins
        else Runtime.from_config(config, load_entrypoints=False)
    )
    if executor is not None:
        rt.make_executor = lambda: executor  # type: ignore[assignment,method-assign,return-value]
    return rt


def plugin_runtime(
    toolang_runtime: Callable[..., Runtime],
    name: str,
    plugin: object,
    *,
    settings: str = "",
    model: Any = None,
    plugins: Mapping[str, object] | None = None,
    config: str = "",
) -> Runtime:
    """A runtime (from the ``toolang_runtime`` fixture) with the plugin under test as
    ``name``, its ``[plugins.<name>]`` section holding ``settings`` (TOML lines), the
    other ``plugins``, and — given a :class:`~toolang_core.testing.models.ScriptedModel`
    — that model as the default (``scripted``); turns are polled every 50 ms. ``config``
    adds whole TOML sections (e.g. a ``[store]`` and its plugin's section)."""
    every = {name: plugin, **(plugins or {})}
    if model is not None:
        every["scripted"] = model.plugin()
    base = '[models]\ndefault = "scripted"\n[runtime]\npoll_seconds = 0.05\n'
    section = f"[plugins.{name}]\n{settings}\n" if settings else ""
    return toolang_runtime(base + section + config, plugins=every)


def evolve_scheduler(**changes: Any) -> SchedulerConfig:
    """The default ``[scheduler]`` with ``changes``."""
    return attrs.evolve(SchedulerConfig(), **changes)


def request(thread: str = "chat:1", text: str = "hi", **fields: Any) -> NewTurnRequest:
    """A turn request on ``thread``, from the source its prefix names (``chat:1`` → chat)."""
    source = fields.pop("source", thread.split(":", maxsplit=1)[0])
    return NewTurnRequest(source=source, thread_id=thread, input=text, **fields)


@contextlib.asynccontextmanager
async def serving(runtime: Runtime, **serve: Any) -> AsyncIterator[asyncio.Event]:
    """Run ``runtime.serve(stop, **serve)`` in the background for the body of the block
    (entered once its scheduler exists); yields ``stop``, set and awaited on leaving."""
    stop = asyncio.Event()
    task = asyncio.create_task(runtime.serve(stop, **serve))
    while runtime.scheduler is None and not task.done():
        await asyncio.sleep(0.005)
    try:
        yield stop
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)


async def wait_status(
    inbox: Any, turn_id: str, statuses: set[str], timeout: float = 60
) -> TurnRequest:
    """Poll ``inbox.get(turn_id)`` until its status is one of ``statuses``.

    :raises AssertionError: after ``timeout`` seconds, naming the status it has."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        turn: TurnRequest = inbox.get(turn_id)
        if turn.status.value in statuses:
            return turn
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"{turn_id} is {turn.status.value}, expected {statuses}")
        await asyncio.sleep(0.01)


def serve_until_parked(runtime: Runtime, turn_id: str, timeout: float = 30) -> None:
    """Serve ``runtime`` (no turn source) until ``turn_id`` waits for a person, then
    stop it. With no shutdown grace configured the waiting turn is handed back to the
    queue, as at a restart.

    :raises AssertionError: the turn did not park within ``timeout`` seconds."""

    async def until_parked() -> None:
        async with serving(runtime, sources=()):
            store = runtime.open_store()
            try:
                await wait_status(store, turn_id, {TurnStatus.AWAITING_APPROVAL.value}, timeout)
            finally:
                store.close()

    asyncio.run(until_parked())


def serve_until_idle(runtime: Runtime) -> None:
    """Serve ``runtime`` (no turn source) until nothing is running or waiting, then
    shut it down."""
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))


def serve_turns(
    runtime: Runtime,
    *inputs: str,
    thread: str = "cli:t",
    source: str = "chat",
    agent: str | None = None,
) -> list[str]:
    """Submit one turn per input (all on ``thread``, in order), serve until idle and
    return their ids."""
    inbox = runtime.open_inbox()
    try:
        ids = [
            inbox.submit(
                NewTurnRequest(source=source, thread_id=thread, input=text, agent=agent)
            ).id
            for text in inputs
        ]
    finally:
        inbox.store.close()
    serve_until_idle(runtime)
    return ids


def run_turn(
    runtime: Runtime,
    text: str = "go",
    *,
    owner: str = "alice",
    thread: str = "",
    agent: str | None = None,
) -> str:
    """Submit one chat turn of ``owner`` (thread ``cli:<owner>`` unless given), serve
    until idle, check it completed and return its id."""
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(
        NewTurnRequest(
            source="chat", thread_id=thread or f"cli:{owner}", input=text, owner=owner, agent=agent
        )
    ).id
    serve_until_idle(runtime)
    turn = inbox.get(turn_id)
    assert turn.status is TurnStatus.COMPLETED, turn
    return turn_id


def crashed_with_intent(
    runtime: Runtime,
    tool: str,
    params: Mapping[str, Any] | None = None,
    *,
    call_id: str = "c1",
    thread: str = "cli:doubt",
    text: str = "mail ada",
) -> str:
    """A turn whose first attempt — by a runtime that died (run ``dead``, its lease long
    expired) — recorded the intent of calling ``tool`` and nothing after: the call is in
    doubt when ``runtime`` resumes the turn. Returns the turn's id."""
    store = runtime.open_store()
    try:
        turn_id = runtime.open_inbox().submit(request(thread, text, source="chat")).id
        long_ago = time.time() - 600
        (turn,) = store.claim(run_id="dead", limit=1, now=long_ago, lease_seconds=1, caps={})
        call = {"id": call_id, "name": tool, "params": dict(params or {"to": "ada"})}
        store.record_step(
            StepRecord(
                turn_id=turn_id,
                seq=0,
                attempt=turn.attempt,
                kind="tool_call",
                status="intent",
                started_at=long_ago,
                finished_at=long_ago,
                data={"call": call},
                idempotency_key=f"{turn_id}:tool:{call_id}",
            ),
            run_id="dead",
        )
    finally:
        store.close()
    return turn_id


def tool_results(runtime: Runtime, turn_id: str) -> list[Any]:
    """The result of each tool call of the turn, in order (read from its steps)."""
    store = runtime.open_store()
    try:
        return [s.data["result"] for s in store.steps(turn_id) if "result" in s.data]
    finally:
        store.close()


def tool_call_context(
    runtime: RuntimeView,
    name: str = "echo",
    params: Mapping[str, Any] | None = None,
    **fields: Any,
) -> ToolCallContext:
    """The context of a call of tool ``name`` with ``params`` in ``runtime``, as a hook
    or a tool receives it (turn ``t1`` on thread ``chat:1``, run ``r1``, agent ``a``,
    unless ``fields`` say otherwise)."""
    call = fields.pop("call", None) or ToolCall("c1", name, dict(params or {}))
    defaults: dict[str, Any] = {
        "turn_id": "t1",
        "thread_id": "chat:1",
        "run_id": "r1",
        "agent": "a",
    }
    return ToolCallContext(call=call, runtime=runtime, **{**defaults, **fields})


class GatedExecutor:
    """A turn executor whose turns each wait until the test opens their gate; it records
    how many ran at once (overall and per thread group)."""

    def __init__(self) -> None:
        self.started: dict[str, asyncio.Event] = {}
        self.gates: dict[str, asyncio.Event] = {}
        self.active: set[str] = set()
        self.peak = 0
        self.peak_by_group: dict[str, int] = {}
        self._active_turns: dict[str, TurnRequest] = {}

    def _event(self, table: dict[str, asyncio.Event], key: str) -> asyncio.Event:
        return table.setdefault(key, asyncio.Event())

    async def execute(self, ctx: TurnContext) -> TurnOutcome:
        turn = ctx.turn
        self.active.add(turn.id)
        self._active_turns[turn.id] = turn
        self.peak = max(self.peak, len(self.active))
        group_now = sum(t.thread_group == turn.thread_group for t in self._active_turns.values())
        self.peak_by_group[turn.thread_group] = max(
            self.peak_by_group.get(turn.thread_group, 0), group_now
        )
        self._event(self.started, turn.id).set()
        try:
            await self._event(self.gates, turn.id).wait()
            ctx.record_step("gated", data={"input": turn.input})
            return TurnOutcome.completed(f"done: {turn.input}")
        finally:
            self.active.discard(turn.id)
            self._active_turns.pop(turn.id, None)

    async def wait_started(self, turn_id: str, timeout: float = 60) -> None:
        """Wait until turn ``turn_id`` has started (its gate still closed)."""
        await asyncio.wait_for(self._event(self.started, turn_id).wait(), timeout)

    def release(self, turn_id: str) -> None:
        """Open turn ``turn_id``'s gate: it records a step and completes."""
        self._event(self.gates, turn_id).set()

    def release_all(self) -> None:
        """Open every gate made so far."""
        for gate in self.gates.values():
            gate.set()
