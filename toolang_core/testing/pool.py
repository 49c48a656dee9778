"""Agents for agent-pool tests: a remote agent whose pings a test controls, a clock a
test moves, and an installed agent-source distribution with a pool history, for
``toolang agents pool`` / ``toolang teams`` run as real processes.

Shared by toolang-agent-pool's and toolang-teams' tests (the pool needs the
toolang-agent-pool plugin in the runtime: pass it, or load it by entry point).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from toolang_core.agents.types import AgentDefinition, AgentHealth, AgentLoad, HealthState
from toolang_core.config import load_config
from toolang_core.markers import hookimpl
from toolang_core.runtime import Runtime

FAR: Final = AgentDefinition(name="far", capabilities=("survey",), origin="http://far.test")
"""The remote agent of :class:`PingedRemote` (it advertises ``survey``)."""


class PingedRemote:
    """An agent-source plugin (label ``remote``) offering :data:`FAR`, whose card read
    at load finds it ``ok`` and whose pings (``toolang_ping_agents``) find it in
    ``state``; ``asked`` lists the agents each ping asked about. Every ping also
    answers for ``w1``, which it was never asked about (the pool must ignore that)."""

    label = "remote"
    name = "test-remote"

    def __init__(self) -> None:
        self.state: HealthState = "ok"
        self.asked: list[list[str]] = []

    def load(self, context: object) -> AgentLoad:
        card = AgentHealth("ok", "card read at load", time.time())
        return AgentLoad(definitions=[FAR], health={"far": card})

    @hookimpl
    def toolang_agent_sources(self) -> PingedRemote:
        return self

    @hookimpl
    def toolang_ping_agents(self, agents: Any, runtime: Any) -> dict[str, AgentHealth]:
        self.asked.append([a.name for a in agents])
        found = AgentHealth(self.state, f"ping: {self.state}", time.time())
        return {"far": found, "w1": AgentHealth("unreachable", "not asked about")}


class ManualClock:
    """A clock that moves only when a test sets ``now``."""

    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


POOL_AGENTS_PLUGIN: Final = "test-pool-agents"
"""The entry-point name of the distribution :func:`install_pool_agents` installs."""

POOL_AGENTS_MODULE: Final = """
from toolang_core import AgentDefinition, AgentLoad, hookimpl


class Source:
    label = "user"
    name = "fixture"

    def load(self, context):
        return AgentLoad(definitions=(
            AgentDefinition(name="assistant"),
            AgentDefinition(name="good", capabilities=("survey",)),
            AgentDefinition(name="flaky", capabilities=("survey",)),
            AgentDefinition(name="fresh", capabilities=("survey",)),
        ))


@hookimpl
def toolang_agent_sources():
    return Source()
"""
"""An agent-source plugin's module: ``assistant``, and ``good``, ``flaky`` and ``fresh``
advertising ``survey``."""

POOL_AGENTS_CONFIG: Final = '\n[models]\ndefault = "scripted"\n'


def install_pool_agents(home: Path, toolang_distribution: Any) -> None:
    """Install the :data:`POOL_AGENTS_MODULE` distribution (with the
    ``toolang_distribution`` fixture) and write ``home``'s ``toolang.toml``."""
    toolang_distribution(
        "toolang-test-pool-agents",
        entry_points={"toolang": {POOL_AGENTS_PLUGIN: "poolfix"}},
        modules={"poolfix": POOL_AGENTS_MODULE},
    )
    (home / "toolang.toml").write_text(POOL_AGENTS_CONFIG)


def pool_agents_home(home: Path, toolang_distribution: Any, env: Mapping[str, str]) -> Runtime:
    """:func:`install_pool_agents` into ``home``, then :func:`record_pool_history` in its
    execution store, by a runtime loading ``env``'s plugins (``TOOLANG_LOAD_PLUGINS``
    must name ``agent-pool``); that runtime (its store closed again)."""
    install_pool_agents(home, toolang_distribution)
    runtime = Runtime.from_config(load_config(home / "toolang.toml", env=env), env=env)
    store = runtime.open_store()
    try:
        record_pool_history(runtime.agents.pool(store))
    finally:
        store.close()
    return runtime


def assert_found_far_unreachable(
    remote: PingedRemote, before: Any, found: Mapping[str, Any], after: Any
) -> None:
    """What one ping finding :data:`FAR` unreachable must leave: ``before`` (its member
    then) healthy by its card read at load, only remote agents asked, the answer about
    an agent not asked about ignored, ``after`` unhealthy with the ping's reason and no
    call counted."""
    assert before.health == "healthy"  # the card read at load
    assert remote.asked == [["far"]]  # only remote agents are pinged
    assert set(found) == {"far"}  # an answer about an agent not asked about is ignored
    assert after.health == "unhealthy"
    assert after.stats.last_error == "card fetch: unreachable ping: unreachable"
    assert after.stats.total_calls == 0  # a ping is not a call


def record_pool_history(pool: Any) -> None:
    """Give ``pool`` (an :class:`~toolang_core.AgentPool`) the history the tests read:
    ``good`` four quick successes, ``flaky`` three failures in a row (unhealthy),
    ``fresh`` nothing."""
    for _ in range(4):
        pool.record("good", ok=True, latency_ms=200)
    for _ in range(3):
        pool.record("flaky", ok=False, latency_ms=50, error="model error: overloaded")
