"""The leader's side of the remote-member team tests: its runtime (in the test's
process), local workers played by a scripted cast, and the team helpers.

The answers: local ``w1`` says ``Paris``, local ``w2`` says ``Lyon``, the spare ``w3``
says ``Paris``; the leader, asked to decide, picks ``Lyon``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from taskrun_helpers import Agents
from team_remote_kit import RemoteMember

import toolang_agent_pool
import toolang_agents_remote
import toolang_teams
from toolang_core import AgentDefinition, hookimpl
from toolang_core.config.loader import load_config
from toolang_core.runtime import Runtime
from toolang_core.testing.cast import Cast, agent_of, user_text
from toolang_core.testing.models import text
from toolang_core.testing.runtimes import serving
from toolang_teams.coordinator import FormRequest, TeamCoordinator
from toolang_teams.types import Strategy

LOCAL = (
    AgentDefinition(name="lead", description="leads the team"),
    AgentDefinition(name="w1", capabilities=("survey",)),
    AgentDefinition(name="w2", capabilities=("survey",)),
)
SPARE = AgentDefinition(name="w3", capabilities=("survey",))
ANSWERS = {"w1": "Paris", "w2": "Lyon", "w3": "Paris"}
TASK = "What is the capital of France?"


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


def trust(runtime: Runtime, agent: str, successes: int) -> None:
    """Give ``agent`` a record of quick successes (a higher trust than a fresh agent)."""
    store = runtime.open_store()
    try:
        pool = runtime.agents.pool(store)
        for _ in range(successes):
            pool.record(agent, ok=True, latency_ms=5)
    finally:
        store.close()


def worker(request):
    return text(ANSWERS[agent_of(request)])


def pick_lyon(request):
    """The leader picks the candidate numbered beside ``Lyon``."""
    listed = [line for line in user_text(request).splitlines() if line.endswith(". Lyon")]
    return text(listed[0].split(".")[0] if listed else "none")


def cast() -> Cast:
    return Cast(lead=pick_lyon, w1=worker, w2=worker, w3=worker)


def leader(
    home: Path,
    remote: RemoteMember,
    the_cast: Cast,
    *agents: AgentDefinition,
    extra: str = "",
    card_timeout: float = 5.0,
    call_timeout: float = 30.0,
):
    """The leader's runtime: local agents played by ``the_cast``, ``far`` through
    toolang-agents-remote (its card read at load, as in any runtime; a card read gives
    up after ``card_timeout`` seconds, a call after ``call_timeout``)."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "toolang.toml").write_text(
        "[runtime]\n"
        'executor = "agent"\n'
        "poll_seconds = 0.02\n"
        "shutdown_grace_seconds = 0\n"
        f"{extra}\n"
        '[models]\ndefault = "scripted"\n\n'
        '[agents]\ndefault = "lead"\n\n' + remote.leader_config(card_timeout, call_timeout),
        encoding="utf-8",
    )
    env = {"HOME": str(home)}
    recorder = Recorder()
    plugins = [
        ("scripted", the_cast.plugin()),
        ("agents", Agents(*(agents or LOCAL))),
        ("agents-remote", toolang_agents_remote),
        ("teams", toolang_teams),
        ("agent-pool", toolang_agent_pool),
        ("recorder", recorder),
    ]
    runtime = Runtime.with_plugins(load_config(home / "toolang.toml", env=env), plugins, env=env)
    return runtime, recorder


@contextlib.asynccontextmanager
async def teams_of(runtime: Runtime) -> AsyncIterator[TeamCoordinator]:
    async with serving(runtime, sources=()):
        yield TeamCoordinator(runtime, runtime.task_runs)


def form(strategy: Strategy, team_id: str, **kw) -> FormRequest:
    return FormRequest(
        owner="ada",
        parent_thread_id="chat:1",
        goal="capital survey",
        leader="lead",
        capability="survey",
        workers=3,
        strategy=strategy,
        id=team_id,
        **kw,
    )


async def until(predicate, timeout: float, what: str) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.05)
