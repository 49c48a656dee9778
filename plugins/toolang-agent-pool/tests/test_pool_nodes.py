"""The pool as several nodes use it, on both store backends (SQLite: processes sharing
one file; PostgreSQL: nodes sharing one schema) — each node its own store connection:

- outcomes recorded by many writers at once all land (none lost to another's write);
- a call reported again under its idempotency key (a turn taken over by another node
  re-runs its idempotent delegation call) counts once;
- reading the pool through a store that cannot be written (``toolang agents pool``, the
  doctor) changes nothing and shows what every node sees: its own card fetch is no
  heartbeat.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import pytest

from toolang_agent_pool.pool import COUNTED_CALLS, StoredPool
from toolang_agent_pool.stats import KIND
from toolang_core import AgentDefinition, AgentHealth, ExecutionStore, PoolHealth
from toolang_core.store.sqlite import SQLiteStore
from toolang_core.testing.pool import ManualClock

FAR = AgentDefinition(name="far", capabilities=("survey",), source="remote", origin="http://far")

WRITERS = 6
OUTCOMES = 15


@pytest.fixture(params=["sqlite", "postgres"])
def open_node(request, tmp_path) -> Iterator[Callable[..., ExecutionStore]]:
    """Opens one more node's store on the shared backend (``read_only`` as the CLI does)."""
    if request.param == "postgres":
        make = request.getfixturevalue("toolang_pg_store")
        yield lambda read_only=False: make(read_only=read_only)
        return
    opened: list[SQLiteStore] = []
    path = tmp_path / "toolang.db"

    def sqlite_node(read_only: bool = False) -> SQLiteStore:
        opened.append(SQLiteStore(path, read_only=read_only))
        return opened[-1]

    yield sqlite_node
    for store in opened:
        store.close()


def test_outcomes_recorded_by_many_nodes_at_once_all_count(open_node):
    pools = [StoredPool(open_node(), lambda: [FAR]) for _ in range(WRITERS)]
    start = threading.Barrier(WRITERS)
    failed: list[BaseException] = []

    def write(n: int) -> None:
        start.wait(60)
        try:
            for i in range(OUTCOMES):
                pools[n].record("far", ok=i % 5 != 0, latency_ms=10.0, call=f"w{n}:{i}")
        except BaseException as exc:
            failed.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert failed == []
    stats = StoredPool(open_node(), lambda: [FAR]).stats("far")
    assert stats.total_calls == WRITERS * OUTCOMES
    assert stats.successes == WRITERS * (OUTCOMES - OUTCOMES // 5)
    assert stats.avg_latency_ms == pytest.approx(10.0)


def test_a_call_reported_again_by_another_node_counts_once(open_node):
    clock = ManualClock(1000.0)
    a = StoredPool(open_node(), lambda: [FAR], clock=clock)
    b = StoredPool(open_node(), lambda: [FAR], clock=clock)
    a.record("far", ok=True, latency_ms=40, call="turn-1:call-0-0")
    a.record("far", ok=True, latency_ms=20, call="turn-2:call-0-0")
    # node A died after counting turn-1's call; node B resumed the turn and ran it again
    again = b.record("far", ok=False, latency_ms=999, error="late", call="turn-1:call-0-0")
    assert (again.total_calls, again.successes, again.avg_latency_ms) == (2, 2, 30.0)
    b.record("far", ok=True, latency_ms=30)  # no key: always counted
    assert a.stats("far").total_calls == 3
    # only the last COUNTED_CALLS keys are kept: the record stays small
    for n in range(COUNTED_CALLS + 5):
        b.record("far", ok=True, latency_ms=30, call=f"later-{n}")
    record = b.store.get_record(KIND, "far")
    assert record is not None and len(record.data["counted"]) == COUNTED_CALLS
    assert b.stats("far").total_calls == 3 + COUNTED_CALLS + 5


def test_reading_the_pool_where_it_cannot_be_written_changes_nothing(open_node):
    clock = ManualClock(1000.0)
    node = StoredPool(open_node(), lambda: [FAR], clock=clock)
    node.record("far", ok=True, latency_ms=50, call="turn-1:call-0-0")
    node.beat("far", AgentHealth("ok", "ping", 1001.0))
    before = node.store.get_record(KIND, "far")
    # the CLI's registry read the card just now: newer than the stored ping
    fresh = {"far": AgentHealth("ok", "card read by the CLI", 1500.0)}
    readers = [
        StoredPool(open_node(read_only=True), lambda: [FAR], heartbeat=fresh.get, clock=clock)
        for _ in range(2)
    ]
    seen = [reader.members() for reader in readers]
    assert seen[0] == seen[1] == node.members()
    (far,) = seen[0]
    assert (far.health, far.stats.heartbeat_at, far.stats.heartbeat_streak) == (
        PoolHealth.HEALTHY,
        1001.0,
        1,
    )
    assert node.store.get_record(KIND, "far") == before
