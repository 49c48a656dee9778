"""On a PostgreSQL store every node sees one pool: outcomes, pings and a card fetch
recorded by whichever node saw them, read the same by every other node (two store
connections here, as two nodes have)."""

from __future__ import annotations

from toolang_agent_pool.pool import StoredPool
from toolang_core import AgentDefinition, AgentHealth, PoolHealth
from toolang_core.testing.pool import ManualClock

FAR = AgentDefinition(name="far", capabilities=("survey",), source="remote", origin="http://far")
NEAR = AgentDefinition(name="near", capabilities=("survey",), source="user")


def test_two_nodes_see_one_pool_whichever_node_saw_the_agent(toolang_pg_store):
    clock = ManualClock(1000.0)
    loaded: dict[str, AgentHealth] = {}  # node A's registry read the remote card
    a = StoredPool(toolang_pg_store(), lambda: [FAR, NEAR], heartbeat=loaded.get, clock=clock)
    b = StoredPool(toolang_pg_store(), lambda: [FAR, NEAR], clock=clock)

    for i in range(6):  # outcomes from both nodes, interleaved: none lost
        (a if i % 2 else b).record("near", ok=i != 3, latency_ms=10.0 * (i + 1), error="boom")
    for _ in range(3):
        clock.now += 1
        b.record("far", ok=False, latency_ms=5, error="refused")
    assert a.get("far").health is PoolHealth.UNHEALTHY

    # Node A's card fetch finds it back; node B, which never read the card, sees it too.
    clock.now += 1
    loaded["far"] = AgentHealth("ok", "card read at load", clock.now)
    seen_by_a = a.members()
    assert b.members() == seen_by_a
    assert b.stats("far").heartbeat == "ok"
    assert b.stats("far").heartbeat_streak == 1
    near = {m.name: m for m in seen_by_a}["near"]
    assert (near.stats.total_calls, near.stats.consecutive_failures) == (6, 0)

    # A ping stored by node B (the upkeep's node) lifts it for both: two in a row.
    clock.now += 1
    b.beat("far", AgentHealth("ok", "ping", clock.now))
    assert a.get("far").health is PoolHealth.DEGRADED
    assert a.members() == b.members()
    assert a.select("survey", 2) == b.select("survey", 2)

    # An older card read (node A's, from before the ping) changes nothing anywhere.
    before = b.stats("far")
    loaded["far"] = AgentHealth("unreachable", "old read", clock.now - 5)
    a.members()
    assert b.stats("far") == before
