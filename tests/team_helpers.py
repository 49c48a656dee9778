"""Helpers for the team tests: a leader, workers advertising ``survey``, a reviewer, a
spare worker, one scripted model playing them all, and an event recorder."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from taskrun_helpers import make_runtime

from toolang_core import AgentDefinition, hookimpl
from toolang_core.agents.pool import pool_for
from toolang_core.runtime import Runtime
from toolang_core.teams.coordinator import TeamCoordinator
from toolang_core.testing.cast import Cast
from toolang_core.testing.runtimes import serving

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
        pool = pool_for(runtime, store)
        for _ in range(successes):
            pool.record(agent, ok=True, latency_ms=5)
    finally:
        store.close()
