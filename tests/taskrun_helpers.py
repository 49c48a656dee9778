"""Helpers for the delegation tests: agents and tools; one scripted model playing them
(:class:`toolang_core.testing.cast.Cast`, re-exported here with its request readers).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs

from toolang_core import (
    AgentDefinition,
    SpawnRequest,
    StepRecord,
    TaskRunController,
    Tool,
    ToolCallContext,
    TurnRequest,
    TurnStatus,
    hookimpl,
)
from toolang_core.config import ToolangConfig
from toolang_core.config.model import (
    AgentsConfig,
    DelegationConfig,
    GroupConfig,
    ModelsConfig,
    RuntimeConfig,
    SchedulerConfig,
    ToolsConfig,
)
from toolang_core.runtime import Runtime
from toolang_core.testing.agents import AgentsPlugin
from toolang_core.testing.cast import (
    DELEGATION_TOOLS,
    Cast,
)


class Agents(AgentsPlugin):
    """An agent source plugin with hand-made definitions (label ``builtin``)."""

    label = "builtin"


CONTROL = DELEGATION_TOOLS

ROUTER = AgentDefinition(name="assistant", prefixes=CONTROL, description="routes work")
RESEARCHER = AgentDefinition(name="researcher", prefixes=("lookup_",), description="finds")
WRITER = AgentDefinition(name="writer", prefixes=("draft_",), description="writes")
SLOWPOKE = AgentDefinition(name="slowpoke", prefixes=("hang",), description="never done")
AUTOMATOR = AgentDefinition(name="automator", tools=CONTROL, description="nests")
DEFAULT_AGENTS = (ROUTER, RESEARCHER, WRITER, SLOWPOKE, AUTOMATOR)


def lookup_fact(topic: str) -> str:
    """Look a topic up.

    :param topic: what to look up
    """
    return f"fact about {topic}"


def lookup_source(topic: str) -> str:
    """Find a source for a topic.

    :param topic: what to find a source for
    """
    return f"source for {topic}"


def draft_text(text: str) -> str:
    """Draft a text.

    :param text: what to draft
    """
    return f"draft: {text}"


async def hang(label: str, context: ToolCallContext | None = None) -> str:
    """Wait until the test releases LABEL (or the call is cancelled).

    :param label: the gate to wait for
    """
    assert context is not None and context.runtime is not None
    gates: dict[str, asyncio.Event] = context.runtime.plugin_state("gates", dict)
    started: dict[str, asyncio.Event] = context.runtime.plugin_state("started", dict)
    started.setdefault(label, asyncio.Event()).set()
    await gates.setdefault(label, asyncio.Event()).wait()
    return f"released {label}"


class Tools:
    @staticmethod
    @hookimpl
    def toolang_register_tools(register: Any) -> None:
        for function in (lookup_fact, lookup_source, draft_text):
            register(Tool.from_function(function, blocking=False))
        register(Tool.from_function(hang))


def release(runtime: Runtime, label: str) -> None:
    runtime.plugin_state("gates", dict).setdefault(label, asyncio.Event()).set()


async def started(runtime: Runtime, label: str, timeout: float = 60) -> None:
    event = runtime.plugin_state("started", dict).setdefault(label, asyncio.Event())
    await asyncio.wait_for(event.wait(), timeout)


def make_config(
    tmp_path: Path,
    *,
    delegation: DelegationConfig | None = None,
    agents_config: AgentsConfig | None = None,
    task_max_running: int | None = None,
    task_max_queued: int | None = None,
    max_running: int = 8,
    tool_timeout: float = 60.0,
    executor: str = "agent",
) -> ToolangConfig:
    groups = {"task": GroupConfig(max_running=task_max_running, max_queued=task_max_queued)}
    return ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor=executor, poll_seconds=0.05, shutdown_grace_seconds=0),
        scheduler=SchedulerConfig(max_running=max_running, groups=groups),
        models=ModelsConfig(default="scripted"),
        agents=agents_config or AgentsConfig(),
        delegation=delegation or DelegationConfig(),
        tools=ToolsConfig(timeout_seconds=tool_timeout),
    )


def make_runtime(
    tmp_path: Path,
    cast: Cast | None = None,
    *,
    agents: Iterable[AgentDefinition] = DEFAULT_AGENTS,
    plugins: Iterable[tuple[str, object]] = (),
    **config: Any,
) -> Runtime:
    chosen = [("tools", Tools()), ("agents", Agents(*agents)), *plugins]
    if cast is not None:
        chosen.insert(0, ("scripted", cast.plugin()))
    return Runtime.with_plugins(make_config(tmp_path, **config), chosen, env={})


def with_delegation(**changes: Any) -> DelegationConfig:
    return attrs.evolve(DelegationConfig(), **changes)


RUN = "run-a"
"""The run id the by-hand runtime of :class:`Plane` claims turns as."""


class Plane:
    """A controller plus the store moves a runtime would make for a run's turn."""

    def __init__(self, controller: TaskRunController) -> None:
        self.controller = controller
        self.store = controller.store

    def spawn(self, task: str = "do it", **kw: Any) -> str:
        kw.setdefault("owner", "ada")
        kw.setdefault("parent_thread_id", "chat:1")
        return asyncio.run(self.controller.spawn(SpawnRequest(task=task, **kw))).id

    def start(self, run_id: str) -> TurnRequest:
        (turn,) = self.store.claim(
            run_id=RUN, limit=1, now=time.time(), lease_seconds=30, caps={}, only=[run_id]
        )
        return turn

    def step(self, run_id: str, kind: str, data: dict[str, Any], **kw: Any) -> None:
        now = time.time()
        step = StepRecord(run_id, 0, 1, kind, kw.pop("status", "completed"), now, now, data, **kw)
        assert self.store.record_step(step, run_id=RUN) is not None

    def end(self, run_id: str, status: TurnStatus = TurnStatus.COMPLETED, **kw: Any) -> None:
        turn = self.store.get(run_id)
        assert turn is not None
        assert self.store.finish(
            run_id, run_id=RUN, attempt=turn.attempt, status=status, now=time.time(), **kw
        )

    def finalize(self, run_id: str) -> Any:
        return asyncio.run(self.controller.finalize(run_id))

    def get(self, run_id: str, owner: str | None = "ada") -> Any:
        return self.controller.get(run_id, owner=owner)
