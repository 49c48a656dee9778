"""Helpers for driving a real runtime in-process from tests."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import attrs

from toolang_core.config import ToolangConfig
from toolang_core.config.model import RuntimeConfig, SchedulerConfig
from toolang_core.execution.seam import TurnContext, TurnOutcome
from toolang_core.runtime import Runtime
from toolang_core.store.types import NewTurnRequest, TurnRequest


def make_config(tmp_path: Path, **runtime: object) -> ToolangConfig:
    scheduler = runtime.pop("scheduler", SchedulerConfig())
    return ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        scheduler=scheduler,  # type: ignore[arg-type]
        runtime=RuntimeConfig(**{"poll_seconds": 0.05, "executor": "echo", **runtime}),  # type: ignore[arg-type]
    )


def make_runtime(tmp_path: Path, *, executor: object | None = None, **runtime: object) -> Runtime:
    rt = Runtime.from_config(make_config(tmp_path, **runtime), load_entrypoints=False)
    if executor is not None:
        rt.make_executor = lambda: executor  # type: ignore[method-assign]
    return rt


def request(thread: str = "chat:1", text: str = "hi", **kw: object) -> NewTurnRequest:
    source = kw.pop("source", thread.split(":", maxsplit=1)[0])
    return NewTurnRequest(source=source, thread_id=thread, input=text, **kw)  # type: ignore[arg-type]


class GatedExecutor:
    """Each turn waits until the test opens its gate; records what ran concurrently."""

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

    async def wait_started(self, turn_id: str, timeout: float = 10) -> None:
        await asyncio.wait_for(self._event(self.started, turn_id).wait(), timeout)

    def release(self, turn_id: str) -> None:
        self._event(self.gates, turn_id).set()

    def release_all(self) -> None:
        for gate in self.gates.values():
            gate.set()


@contextlib.asynccontextmanager
async def serving(runtime: Runtime, **kw: object) -> AsyncIterator[asyncio.Event]:
    """Run ``runtime.serve`` in the background for the body of the block."""
    stop = asyncio.Event()
    task = asyncio.create_task(runtime.serve(stop, **kw))  # type: ignore[arg-type]
    while runtime.scheduler is None and not task.done():
        await asyncio.sleep(0.005)
    try:
        yield stop
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)


async def wait_status(
    inbox: object, turn_id: str, statuses: set[str], timeout: float = 10
) -> TurnRequest:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        turn = inbox.get(turn_id)  # type: ignore[attr-defined]
        if turn.status.value in statuses:
            return turn  # type: ignore[no-any-return]
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"{turn_id} is {turn.status.value}, expected {statuses}")
        await asyncio.sleep(0.01)


def evolve_scheduler(**kw: object) -> SchedulerConfig:
    return attrs.evolve(SchedulerConfig(), **kw)  # type: ignore[arg-type]
