"""Helpers for the team tests: a leader, workers advertising ``survey``, a reviewer, a
spare worker, one scripted model playing them all, and an event recorder; runtimes with
this plugin (``teams``), hand-made agents and a few tools (from the core's delegation
test helpers, which a plugin's own env does not have)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any

import toolang_teams
from toolang_core import AgentDefinition, NewTurnRequest, Tool, ToolCallContext, hookimpl
from toolang_core.config import ToolangConfig
from toolang_core.config.model import (
    GroupConfig,
    ModelsConfig,
    RuntimeConfig,
    SchedulerConfig,
    ToolsConfig,
)
from toolang_core.runtime import Runtime
from toolang_core.testing.agents import AgentsPlugin
from toolang_core.testing.cast import DELEGATION_TOOLS, Cast
from toolang_core.testing.runtimes import serving
from toolang_teams.coordinator import TeamCoordinator

CONTROL = DELEGATION_TOOLS


class Agents(AgentsPlugin):
    """An agent source plugin with hand-made definitions (label ``builtin``)."""

    label = "builtin"


async def hang(label: str, context: ToolCallContext | None = None) -> str:
    """Wait until the test releases LABEL (or the call is cancelled).

    :param label: the gate to wait for
    """
    assert context is not None and context.runtime is not None
    gates: dict[str, asyncio.Event] = context.runtime.plugin_state("gates", dict)
    await gates.setdefault(label, asyncio.Event()).wait()
    return f"released {label}"


class Tools:
    @staticmethod
    @hookimpl
    def toolang_register_tools(register: Any) -> None:
        register(Tool.from_function(hang))


def release(runtime: Runtime, label: str) -> None:
    runtime.plugin_state("gates", dict).setdefault(label, asyncio.Event()).set()


def make_config(tmp_path: Path) -> ToolangConfig:
    return ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.05, shutdown_grace_seconds=0),
        scheduler=SchedulerConfig(max_running=8, groups={"task": GroupConfig()}),
        models=ModelsConfig(default="scripted"),
        tools=ToolsConfig(timeout_seconds=60.0),
    )


def make_runtime(
    tmp_path: Path,
    cast: Cast | None = None,
    *,
    agents: Iterable[AgentDefinition] = (),
    plugins: Iterable[tuple[str, object]] = (),
) -> Runtime:
    """A runtime with this plugin, ``agents``, the ``hang`` tool and ``plugins``."""
    chosen = [("teams", toolang_teams), ("tools", Tools()), ("agents", Agents(*agents))]
    if cast is not None:
        chosen.insert(0, ("scripted", cast.plugin()))
    return Runtime.with_plugins(make_config(tmp_path), [*chosen, *plugins], env={})


LEAD = AgentDefinition(name="lead", description="leads the team")
W1 = AgentDefinition(name="w1", capabilities=("survey",))
W2 = AgentDefinition(name="w2", capabilities=("survey",))
W3 = AgentDefinition(name="w3", capabilities=("survey",))
SPARE = AgentDefinition(name="w4", capabilities=("survey",))
REVIEWER = AgentDefinition(name="critic", capabilities=("review",))
TEAM_AGENTS = (LEAD, W1, W2, W3, REVIEWER)


class Recorder:
    """Every ``team.*`` event, in order."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    @hookimpl
    def toolang_on_event(self, event: Any, runtime: Any) -> None:
        if event.kind.startswith("team."):
            self.events.append(event)

    def kinds(self) -> list[str]:
        return [e.kind for e in self.events]


def team_runtime(
    tmp_path, cast: Cast, *, agents=TEAM_AGENTS, plugins=()
) -> tuple[Runtime, Recorder]:
    recorder = Recorder()
    runtime = make_runtime(
        tmp_path, cast, agents=agents, plugins=[("recorder", recorder), *plugins]
    )
    return runtime, recorder


@contextlib.asynccontextmanager
async def coordinator(runtime: Runtime) -> AsyncIterator[TeamCoordinator]:
    async with serving(runtime, sources=()):
        yield TeamCoordinator(runtime, runtime.task_runs)


def trust(runtime: Runtime, agent: str, successes: int) -> None:
    """Give ``agent`` a record of quick successes (a higher trust than a fresh agent)."""
    store = runtime.open_store()
    try:
        pool = runtime.agents.pool(store)
        for _ in range(successes):
            pool.record(agent, ok=True, latency_ms=5)
    finally:
        store.close()


def run_turn(runtime: Runtime, text_in: str = "go", thread: str = "chat:t", **kw: Any) -> Any:
    """Submit one chat turn and serve until nothing is left to do."""
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id=thread, input=text_in, **kw)).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    try:
        return inbox.get(turn_id)
    finally:
        inbox.store.close()


def results(cast: Cast, agent: str = "assistant") -> list[dict[str, Any]]:
    """Every tool result the agent's model was shown, in order."""
    return [
        json.loads(r.messages[-1].content)
        for r in cast.requests_of(agent)
        if r.messages[-1].role == "tool"
    ]


def outputs(cast: Cast, agent: str = "assistant") -> list[Any]:
    return [r.get("output") if r["ok"] else r["error"] for r in results(cast, agent)]
