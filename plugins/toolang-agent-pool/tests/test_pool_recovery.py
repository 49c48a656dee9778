"""An agent that comes back recovers monotonically: one step up per piece of evidence,
never back and forth, whichever process looks (the documented rule:
``HealthPolicy`` and docs/teams.md#health).

Unhealthy by its failures → degraded once ``recover_after`` (2) heartbeats in a row
found it since its last failure → still degraded while its recent error rate is high →
healthy. Only a new failure moves it down.
"""

from __future__ import annotations

import pytest

from toolang_agent_pool.pool import StoredPool
from toolang_agent_pool.stats import HealthPolicy
from toolang_core import AgentDefinition, AgentHealth, PoolHealth
from toolang_core.store.sqlite import SQLiteStore
from toolang_core.testing.pool import ManualClock

FAR = AgentDefinition(name="far", capabilities=("survey",), source="remote", origin="http://far")
RANK = {PoolHealth.UNHEALTHY: 0, PoolHealth.DEGRADED: 1, PoolHealth.HEALTHY: 2}


@pytest.fixture
def store(tmp_path):
    opened = SQLiteStore(tmp_path / "toolang.db")
    yield opened
    opened.close()


class Far:
    """The remote agent ``far`` in one pool, with a clock; ``loaded`` is what this
    process's registry read of its card found (``None``: nothing)."""

    def __init__(self, store: SQLiteStore, policy: HealthPolicy | None = None) -> None:
        self.clock = ManualClock(1000.0)
        self.loaded: AgentHealth | None = None
        self.pool = StoredPool(
            store,
            lambda: [FAR],
            heartbeat=lambda name: self.loaded,
            clock=self.clock,
            policy=policy,
        )

    def tick(self) -> float:
        self.clock.now += 10
        return self.clock.now

    def ping(self, state: str = "ok") -> None:
        self.pool.beat("far", AgentHealth(state, f"ping: {state}", self.tick()))  # type: ignore[arg-type]

    def call(self, ok: bool) -> None:
        self.tick()
        self.pool.record("far", ok=ok, latency_ms=5, error="" if ok else "boom")

    def health(self) -> PoolHealth:
        found = self.pool.get("far")
        assert found is not None
        return found.health


def test_recovery_goes_up_one_step_per_piece_of_evidence_and_never_down(store):
    far = Far(store)
    for _ in range(3):
        far.call(ok=False)
    seen = [far.health()]
    for step in ("ping", "ping", "ping", "call", "call", "call"):
        far.ping() if step == "ping" else far.call(ok=True)
        seen.append(far.health())
    assert seen == [
        PoolHealth.UNHEALTHY,
        PoolHealth.UNHEALTHY,  # one ping: 1 of recover_after 2
        PoolHealth.DEGRADED,  # two in a row: a careful try
        PoolHealth.DEGRADED,
        PoolHealth.DEGRADED,  # a success: failures reset, error rate 3/4 still high
        PoolHealth.DEGRADED,  # 3/5
        PoolHealth.HEALTHY,  # 3/6: not over 0.5
    ]
    assert [RANK[h] for h in seen] == sorted(RANK[h] for h in seen)  # monotone


def test_a_new_failure_starts_the_count_again(store):
    far = Far(store)
    for _ in range(3):
        far.call(ok=False)
    far.ping()
    far.ping("unreachable")
    assert far.health() is PoolHealth.UNHEALTHY
    far.ping()
    assert far.health() is PoolHealth.UNHEALTHY  # one in a row again, not two
    far.ping()
    assert far.health() is PoolHealth.DEGRADED
    far.call(ok=False)  # it fails again: back to the start
    assert (far.health(), far.pool.stats("far").heartbeat_streak) == (PoolHealth.UNHEALTHY, 0)
    far.pool.mark_unhealthy("far", "a team's run failed")
    far.ping()
    assert far.health() is PoolHealth.UNHEALTHY


def test_every_view_of_a_recovering_agent_agrees_whatever_came_last(store):
    """A CLI's own card read (newer than the stored pings) and a ping stored after it:
    the two orders a `toolang agents pool` can meet; each counts one heartbeat more."""
    far = Far(store)
    for _ in range(3):
        far.call(ok=False)
    far.ping()
    views = []
    for _ in range(3):
        far.loaded = AgentHealth("ok", "card read at load", far.tick())  # the CLI's read
        views.append(far.health())
        far.ping()  # the runtime's ping lands after it
        views.append(far.health())
    assert views[0] is PoolHealth.DEGRADED  # stored 1 + its own read 1
    assert set(views) == {PoolHealth.DEGRADED}


def test_an_older_ping_from_another_runtime_changes_nothing(store):
    far = Far(store)
    far.ping()
    newest = far.pool.stats("far")
    far.pool.beat("far", AgentHealth("unreachable", "late", newest.heartbeat_at - 5))
    assert far.pool.stats("far") == newest


def test_a_card_read_made_before_the_last_failure_is_no_evidence(store):
    far = Far(store, HealthPolicy(recover_after=1))
    for _ in range(3):
        far.call(ok=False)
    far.ping()
    assert far.health() is PoolHealth.DEGRADED  # one ping is enough here
    far.loaded = AgentHealth("ok", "card read at load", far.tick())
    far.call(ok=False)  # it fails after this process read its card
    assert far.health() is PoolHealth.UNHEALTHY  # the older read does not lift it
    far.ping()
    assert far.health() is PoolHealth.DEGRADED
