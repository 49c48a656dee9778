"""Helpers for the team tests: a leader, workers advertising ``survey``, a reviewer, a
spare worker, one scripted model playing them all, and an event recorder; runtimes with
this plugin (``teams``), the agent pool (toolang-agent-pool), hand-made agents and a few
tools (the test kit's delegation runtimes, :mod:`toolang_core.testing.delegation`)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any

import toolang_agent_pool
import toolang_teams
from toolang_core import AgentDefinition, hookimpl
from toolang_core.runtime import Runtime
from toolang_core.testing.delegation import (
    CONTROL,
    Agents,
    Cast,
    Tools,
    make_config,
    make_runtime as delegation_runtime,
    outputs,
    release,
    run_turn,
)
from toolang_core.testing.runtimes import serving
from toolang_teams.coordinator import TeamCoordinator

__all__ = [
    "CONTROL",
    "LEAD",
    "REVIEWER",
    "SPARE",
    "TEAM_AGENTS",
    "W1",
    "W2",
    "W3",
    "Agents",
    "Recorder",
    "Tools",
    "coordinator",
    "make_config",
    "make_runtime",
    "outputs",
    "release",
    "run_turn",
    "team_runtime",
    "trust",
]


def make_runtime(
    tmp_path: Path,
    cast: Cast | None = None,
    *,
    agents: Iterable[AgentDefinition] = (),
    plugins: Iterable[tuple[str, object]] = (),
) -> Runtime:
    """A delegation runtime with this plugin and the agent pool, ``agents`` and
    ``plugins``."""
    chosen = [("teams", toolang_teams), ("agent-pool", toolang_agent_pool), *plugins]
    return delegation_runtime(tmp_path, cast, agents=agents, plugins=chosen)


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
