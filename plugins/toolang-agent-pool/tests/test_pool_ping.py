"""The pool's scheduled heartbeat of remote agents (``toolang_ping_agents``): a ping
that finds a remote agent unreachable makes it unhealthy (toolang-teams' tests: and the
team sweep replaces it), one that finds it again brings it back; pings run only when
due, ask only about remote agents, and are stored in the pool."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor

from pool_helpers import pool_runtime

from toolang_agent_pool.ping import PingSchedule
from toolang_agent_pool.pool import StoredPool
from toolang_core import AgentDefinition, AgentHealth, AgentLoad, PoolHealth, hookimpl
from toolang_core.runtime import Runtime
from toolang_core.testing.cast import Cast
from toolang_core.testing.pool import (
    FAR,
    ManualClock,
    PingedRemote,
    assert_found_far_unreachable,
)
from toolang_core.testing.runtimes import serving

LEAD = AgentDefinition(name="lead", description="leads the team")
W1 = AgentDefinition(name="w1", capabilities=("survey",))
W2 = AgentDefinition(name="w2", capabilities=("survey",))
W3 = AgentDefinition(name="w3", capabilities=("survey",))


def remote_runtime(tmp_path, remote: PingedRemote) -> tuple[Runtime, None]:
    runtime = pool_runtime(
        tmp_path, Cast(), agents=(LEAD, W1, W2, W3), plugins=[("remote", remote)]
    )
    return runtime, None


def far_runtime(tmp_path) -> tuple[PingedRemote, Runtime, ManualClock]:
    """A runtime whose remote agent ``far`` answers pings as the test says, and a clock
    for the ping schedule."""
    remote = PingedRemote()
    runtime, _ = remote_runtime(tmp_path, remote)
    return remote, runtime, ManualClock()


@contextlib.asynccontextmanager
async def pool_of(runtime: Runtime) -> AsyncIterator[StoredPool]:
    """The serving runtime's agent pool."""
    async with serving(runtime, sources=()):
        pool = runtime.agents.pool()
        assert isinstance(pool, StoredPool)
        yield pool


def test_a_ping_finding_a_remote_agent_unreachable_makes_it_unhealthy(tmp_path):
    remote, runtime, clock = far_runtime(tmp_path)

    async def scenario():
        async with pool_of(runtime) as pool:
            before = pool.get("far")
            remote.state = "unreachable"
            schedule = PingSchedule(10, clock)
            clock.now += 10
            found = await schedule.run(runtime, pool)
            return before, found, pool.get("far")

    before, found, after = asyncio.run(scenario())
    assert_found_far_unreachable(remote, before, found, after)


def test_a_ping_finding_it_again_brings_a_remote_agent_back(tmp_path):
    remote, runtime, clock = far_runtime(tmp_path)

    async def scenario():
        async with pool_of(runtime) as pool:
            schedule = PingSchedule(10, clock)
            healths = []
            for state in ("unreachable", "ok"):
                remote.state = state
                clock.now += 10
                await schedule.run(runtime, pool)
                healths.append(pool.get("far").health)
            for _ in range(3):  # then its calls fail: unhealthy by its outcomes
                pool.record("far", ok=False, latency_ms=5, error="boom")
            healths.append(pool.get("far").health)
            for _ in range(2):  # it answers its card after the failures, twice in a row
                clock.now += 10
                await schedule.run(runtime, pool)
                healths.append(pool.get("far").health)
            picked = pool.select("survey", 4)
            return healths, picked

    healths, picked = asyncio.run(scenario())
    assert healths == [
        PoolHealth.UNHEALTHY,
        PoolHealth.HEALTHY,  # never called: its card is all there is to go by
        PoolHealth.UNHEALTHY,
        PoolHealth.UNHEALTHY,  # one ping since its failures: 1 of recover_after (2)
        PoolHealth.DEGRADED,  # reachable again: a careful try, at half weight
    ]
    assert "far" in [m.name for m in picked.chosen]
    assert [m.name for m in picked.chosen][-1] == "far"


def test_pings_run_only_when_due(tmp_path):
    remote, runtime, clock = far_runtime(tmp_path)

    async def scenario():
        async with pool_of(runtime) as pool:
            schedule = PingSchedule(10, clock)
            never = PingSchedule(0, clock)
            ran = [await schedule.run(runtime, pool)]  # the card fetch at load counts
            clock.now += 9.5
            ran.append(await schedule.run(runtime, pool))
            clock.now += 0.5
            ran.append(await schedule.run(runtime, pool))
            ran.append(await schedule.run(runtime, pool))
            clock.now += 100
            ran.append(await never.run(runtime, pool))
            return ran, pool.stats("far"), pool.get("far").to_json()

    ran, stats, shown = asyncio.run(scenario())
    assert [bool(found) for found in ran] == [False, False, True, False, False]
    assert remote.asked == [["far"]]
    assert (stats.heartbeat, stats.heartbeat_detail) == ("ok", "ping: ok")
    assert shown["heartbeat"] == "ok" and shown["heartbeat_at"] == stats.heartbeat_at


class SlowRemote(PingedRemote):
    """A remote source whose first card read is slow (a loaded machine) and finds
    ``far`` gone; it ends when another read begins, or after half a second. A later
    read would find ``far`` again."""

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0
        self.first = threading.Event()
        self.second = threading.Event()

    def load(self, context: object) -> AgentLoad:
        self.reads += 1
        if self.reads == 1:
            self.first.set()
            self.second.wait(0.5)
            card = AgentHealth("unreachable", "card fetch: refused", time.time())
        else:
            self.second.set()
            card = AgentHealth("ok", "card read at load", time.time())
        return AgentLoad(definitions=[FAR], health={"far": card})


def test_a_pool_built_while_the_registry_is_read_at_start_up_sees_that_same_read(tmp_path):
    """The agent executor reads the registry in a worker thread at start-up; a pool
    built meanwhile on the event loop waits for that read instead of reading the
    sources again (two registries would each give ``far`` another health)."""
    remote = SlowRemote()
    runtime, _ = remote_runtime(tmp_path, remote)
    store = runtime.open_store()
    try:
        with ThreadPoolExecutor(max_workers=1) as worker:
            startup = worker.submit(runtime.agents.report_unmatched)  # as prepare() does
            assert remote.first.wait(60)  # its read has begun
            meanwhile = runtime.agents.pool(store).get("far")
            startup.result(timeout=60)
        later = runtime.agents.pool(store).get("far")
    finally:
        store.close()
    assert remote.reads == 1
    assert meanwhile is not None and later is not None
    assert meanwhile.health is later.health is PoolHealth.UNHEALTHY


class OtherUpkeep:
    @hookimpl
    async def toolang_upkeep(self, runtime):
        return None


def test_the_pings_run_before_every_other_plugins_upkeep(tmp_path):
    """A team sweep (toolang-teams' upkeep) sees what this upkeep's pings found: the
    pool's upkeep is called first, whatever was registered after it."""
    runtime = pool_runtime(tmp_path, Cast(), plugins=[("other", OtherUpkeep())])
    assert runtime.plugins.implementations("toolang_upkeep")[0] == "agent-pool"
