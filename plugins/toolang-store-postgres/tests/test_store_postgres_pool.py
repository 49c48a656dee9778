"""The agent pool on PostgreSQL: two runtimes on one store see and update the same pool
(its statistics are store records, updated with a revision check)."""

from __future__ import annotations

import threading

from test_store_postgres_runtime import config_text

import toolang_agent_pool
import toolang_store_postgres
from toolang_core import AgentDefinition, AgentLoad, PoolHealth, hookimpl


class Agents:
    label = "builtin"
    name = "pg-pool-agents"

    def load(self, context):
        return AgentLoad(
            definitions=[
                AgentDefinition(name="assistant"),
                AgentDefinition(name="good", capabilities=("survey",)),
                AgentDefinition(name="flaky", capabilities=("survey",)),
            ]
        )

    @hookimpl
    def toolang_agent_sources(self):
        return self


def runtime(toolang_runtime, dsn, schema):
    return toolang_runtime(
        config_text(dsn, schema, ""),
        plugins={
            "store-postgres": toolang_store_postgres,
            "agents": Agents(),
            "agent-pool": toolang_agent_pool,
        },
    )


def test_two_runtimes_on_one_postgres_store_share_the_pool(
    toolang_runtime, toolang_pg_dsn, toolang_pg_schema
):
    first = runtime(toolang_runtime, toolang_pg_dsn, toolang_pg_schema)
    second = runtime(toolang_runtime, toolang_pg_dsn, toolang_pg_schema)
    stores = [first.open_store(), second.open_store()]
    try:
        pools = [first.agents.pool(stores[0]), second.agents.pool(stores[1])]
        for _ in range(3):
            pools[0].record("flaky", ok=False, latency_ms=10, error="down")
        assert pools[1].get("flaky").health is PoolHealth.UNHEALTHY
        # Both runtimes record at once: no outcome is lost.
        threads = [
            threading.Thread(
                target=lambda pool=pool: [
                    pool.record("good", ok=True, latency_ms=20) for _ in range(10)
                ]
            )
            for pool in pools
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert pools[0].get("good").stats.total_calls == 20
        assert pools[1].get("good").stats.total_calls == 20
        selection = pools[1].select("survey", 2)
        assert [m.name for m in selection.chosen] == ["good"]
        reasons = {e.name: e.reason for e in selection.excluded}
        assert reasons["flaky"].startswith("unhealthy (3 consecutive failures; last: down)")
    finally:
        for store in stores:
            store.close()


def test_a_ping_stored_by_one_runtime_is_seen_by_the_other(
    toolang_runtime, toolang_pg_dsn, toolang_pg_schema
):
    import time

    from toolang_core import AgentHealth

    first = runtime(toolang_runtime, toolang_pg_dsn, toolang_pg_schema)
    second = runtime(toolang_runtime, toolang_pg_dsn, toolang_pg_schema)
    stores = [first.open_store(), second.open_store()]
    try:
        pools = [first.agents.pool(stores[0]), second.agents.pool(stores[1])]
        pools[0].beat("good", AgentHealth("unreachable", "ping: refused", time.time()))
        seen = pools[1].get("good")
        assert seen.health is PoolHealth.UNHEALTHY
        assert seen.stats.last_error == "card fetch: unreachable ping: refused"
        assert seen.stats.total_calls == 0
    finally:
        for store in stores:
            store.close()
