"""The agent pool: health from outcomes, the trust formula, selection, persistence, and
the updates every delegation makes (a task run's observer, ``ask_agent``)."""

from __future__ import annotations

import asyncio

import pytest
from pool_helpers import pool_runtime

from toolang_agent_pool.pool import StoredPool
from toolang_agent_pool.stats import KIND, HealthPolicy, Price, health_of, trust_score
from toolang_core import (
    AgentDefinition,
    AgentHealth,
    AgentStats,
    PoolHealth,
    SpawnRequest,
    TaskRunController,
)
from toolang_core.store.sqlite import SQLiteStore
from toolang_core.testing.cast import Cast
from toolang_core.testing.delegation import asking_cast, run_turn
from toolang_core.testing.models import text

AGENTS = (
    AgentDefinition(name="ann", capabilities=("review",)),
    AgentDefinition(name="bob", capabilities=("review", "draft")),
    AgentDefinition(name="cid", capabilities=("review",)),
    AgentDefinition(name="dee", capabilities=("draft",)),
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        self.now += 1
        return self.now


@pytest.fixture
def store(tmp_path):
    opened = SQLiteStore(tmp_path / "toolang.db")
    yield opened
    opened.close()


def make_pool(store, **kw) -> StoredPool:
    return StoredPool(store, lambda: AGENTS, clock=Clock(), **kw)


def test_an_agent_never_called_is_unknown_with_a_neutral_trust(store):
    member = make_pool(store).get("ann")
    assert member is not None
    assert member.health is PoolHealth.UNKNOWN
    assert member.trust == 0.5
    assert member.stats.last_seen is None


def test_failures_degrade_then_make_unhealthy_and_a_success_recovers(store):
    pool = make_pool(store)
    pool.record("ann", ok=True, latency_ms=100)
    assert pool.get("ann").health is PoolHealth.HEALTHY
    healthy_at = pool.get("ann").stats.last_healthy
    seen = []
    for _ in range(3):
        pool.record("ann", ok=False, latency_ms=50, error="model error: boom")
        seen.append(pool.get("ann").health)
    assert seen == [PoolHealth.DEGRADED, PoolHealth.DEGRADED, PoolHealth.UNHEALTHY]
    member = pool.get("ann")
    assert member.stats.consecutive_failures == 3
    assert member.stats.last_healthy == healthy_at
    assert member.stats.last_error == "model error: boom"
    pool.record("ann", ok=True, latency_ms=100)
    member = pool.get("ann")
    # one success clears the consecutive count, but 3 of the last 5 calls failed
    assert member.stats.consecutive_failures == 0
    assert member.health is PoolHealth.DEGRADED
    for _ in range(2):
        pool.record("ann", ok=True, latency_ms=100)
    assert pool.get("ann").health is PoolHealth.HEALTHY


def test_an_error_rate_over_the_limit_degrades_without_consecutive_failures(store):
    pool = make_pool(store)
    for ok in (False, True, False, True, False, True):
        pool.record("bob", ok=ok, latency_ms=10)
    member = pool.get("bob")
    assert member.stats.consecutive_failures == 0
    assert member.stats.error_rate == 0.5
    assert member.health is PoolHealth.HEALTHY  # not over 0.5
    for ok in (False, False, True):
        pool.record("bob", ok=ok, latency_ms=10)
    assert pool.get("bob").stats.error_rate == 5 / 9
    assert pool.get("bob").health is PoolHealth.DEGRADED


def test_latency_over_the_threshold_degrades(store):
    pool = make_pool(store, policy=HealthPolicy(latency_threshold_ms=500))
    pool.record("cid", ok=True, latency_ms=400)
    assert pool.get("cid").health is PoolHealth.HEALTHY
    pool.record("cid", ok=True, latency_ms=1000)
    assert pool.get("cid").stats.avg_latency_ms == 700
    assert pool.get("cid").health is PoolHealth.DEGRADED


def test_the_trust_formula():
    policy = HealthPolicy(latency_threshold_ms=1000)
    assert trust_score(AgentStats("x"), policy) == 0.5
    perfect = AgentStats("x", total_calls=5, successes=5, avg_latency_ms=500)
    # confidence 5/10: 0.5*0.5 + 0.5*(0.7*1 + 0.3*1)
    assert trust_score(perfect, policy) == pytest.approx(0.75)
    slow = AgentStats("x", total_calls=15, successes=12, avg_latency_ms=2000)
    # confidence 0.75: 0.25*0.5 + 0.75*(0.7*0.8 + 0.3*0.5)
    assert trust_score(slow, policy) == pytest.approx(0.125 + 0.75 * 0.71)
    failing = AgentStats("x", total_calls=5, successes=2, consecutive_failures=3, avg_latency_ms=1)
    # 0.25 + 0.5*(0.7*0.4 + 0.3) - 0.3
    assert trust_score(failing, policy) == pytest.approx(0.25 + 0.5 * 0.58 - 0.3)
    hopeless = AgentStats("x", total_calls=50, successes=0, consecutive_failures=50)
    assert trust_score(hopeless, policy) == 0.0
    assert health_of(hopeless, policy) is PoolHealth.UNHEALTHY


def test_select_ranks_by_score_breaks_ties_by_name_and_says_who_was_left_out(store):
    pool = make_pool(store)
    for _ in range(4):
        pool.record("cid", ok=True, latency_ms=10)
    for _ in range(3):
        pool.record("bob", ok=False, latency_ms=10, error="down")
    selection = pool.select("review", 2)
    assert [m.name for m in selection.chosen] == ["cid", "ann"]
    assert selection.scores[0] > selection.scores[1] == 0.5
    reasons = {e.name: e.reason for e in selection.excluded}
    assert reasons["bob"].startswith("unhealthy (3 consecutive failures; last: down)")
    assert reasons["dee"] == "does not advertise 'review'"
    # ann and a fresh agent tie at 0.5: the name decides, every time
    tie = make_pool(store).select("draft", 2, exclude=("bob",))
    assert [m.name for m in tie.chosen] == ["dee"]
    assert {e.name: e.reason for e in tie.excluded}["bob"] == "excluded by the caller"
    assert [m.name for m in pool.select("review", 1).chosen] == ["cid"]
    assert (
        "ranked below the top 1"
        in {e.name: e.reason for e in pool.select("review", 1).excluded}["ann"]
    )


def test_a_scorer_replaces_the_default_score(store):
    pool = make_pool(store, scorer=lambda m, c: {"ann": 0.1}.get(m.name))
    pool.record("cid", ok=True, latency_ms=10)
    chosen = pool.select("review", 3).chosen
    assert [m.name for m in chosen] == ["cid", "bob", "ann"]  # ann scored 0.1 by the scorer


def test_prices_come_from_the_configuration(store):
    pool = make_pool(store, prices={"bob": Price(0.25, "EUR")})
    bob = pool.get("bob")
    assert (bob.price_per_call, bob.currency) == (0.25, "EUR")
    assert pool.get("ann").price_per_call == 0.0


def test_the_pool_survives_a_restart(tmp_path):
    path = tmp_path / "toolang.db"
    first = SQLiteStore(path)
    make_pool(first).record("ann", ok=True, latency_ms=120)
    make_pool(first).record("ann", ok=False, latency_ms=80, error="boom")
    first.close()
    again = SQLiteStore(path)
    try:
        member = make_pool(again).get("ann")
        assert member.stats.total_calls == 2
        assert member.stats.avg_latency_ms == 100
        assert member.health is PoolHealth.DEGRADED
    finally:
        again.close()


def test_concurrent_writers_lose_no_outcome(tmp_path):
    path = tmp_path / "toolang.db"
    stores = [SQLiteStore(path) for _ in range(2)]
    try:
        pools = [make_pool(s) for s in stores]
        for i in range(10):
            pools[i % 2].record("ann", ok=True, latency_ms=10)
        assert make_pool(stores[0]).get("ann").stats.total_calls == 10
    finally:
        for s in stores:
            s.close()


# -- every delegation updates the pool --------------------------------------------------


def test_finished_task_runs_update_their_agents_statistics(tmp_path):
    cast = Cast(researcher=[text("tides follow the moon")], writer=lambda r: 1 / 0)
    runtime = pool_runtime(tmp_path, cast)

    async def scenario() -> None:
        store = runtime.open_store()
        controller = TaskRunController(store, runtime)
        for agent in ("researcher", "writer"):
            await controller.spawn(
                SpawnRequest(owner="ada", parent_thread_id="chat:1", task="go", agent_name=agent)
            )
        store.close()
        await runtime.serve(asyncio.Event(), until_idle=True, sources=())

    asyncio.run(scenario())
    store = runtime.open_store()
    try:
        pool = runtime.agents.pool(store)
        assert pool.get("researcher").stats.total_calls == 1
        assert pool.get("researcher").health is PoolHealth.HEALTHY
        writer = pool.get("writer")
        assert (writer.stats.total_calls, writer.stats.successes) == (1, 0)
        assert writer.health is PoolHealth.DEGRADED
        assert writer.stats.last_error
        # each run's outcome counted under its run id (observed again: counted once)
        record = store.get_record(KIND, "writer")
        assert record is not None and [k[:9] for k in record.data["counted"]] == ["task-run:"]
    finally:
        store.close()


def test_ask_agent_updates_the_asked_agents_statistics(tmp_path):
    runtime = pool_runtime(tmp_path, asking_cast())
    turn = run_turn(runtime, "ask")
    store = runtime.open_store()
    try:
        assert runtime.agents.pool(store).get("researcher").stats.successes == 1
        # counted under the call's idempotency key: a resumed turn re-running it counts once
        (asked,) = [
            s for s in store.steps(turn.id) if s.kind == "tool_call" and s.status != "intent"
        ]
        record = store.get_record(KIND, "researcher")
        assert record is not None and record.data["counted"] == [asked.idempotency_key]
    finally:
        store.close()


def test_a_remote_agents_card_fetch_is_its_heartbeat(store):
    remote = (
        AgentDefinition(name="far", capabilities=("review",), source="remote"),
        AgentDefinition(name="gone", capabilities=("review",), source="remote"),
    )
    beats = {
        "far": AgentHealth("ok", checked_at=1500.0),
        "gone": AgentHealth("unreachable", "connection refused", checked_at=1500.0),
    }
    pool = StoredPool(store, lambda: remote, heartbeat=beats.get, clock=Clock())
    for _ in range(3):
        pool.record("gone", ok=True, latency_ms=10)
    far, gone = pool.members()
    assert (far.health, far.stats.last_seen, far.stats.total_calls) == (
        PoolHealth.HEALTHY,
        1500.0,
        0,
    )
    assert gone.health is PoolHealth.UNHEALTHY
    assert gone.stats.last_error == "card fetch: unreachable connection refused"
    selection = pool.select("review", 2)
    assert [m.name for m in selection.chosen] == ["far"]
    assert {e.name for e in selection.excluded} == {"gone"}
