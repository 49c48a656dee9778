"""`toolang agents pool` showed a remote agent that had come back as unhealthy, then
degraded, then unhealthy again: each command reads the agent's card itself (its
registry load), and the last call in the call log — the one that found the agent
unreachable before it came back — turned that fresh read into ``unreachable``, while
the serving runtime's stored pings said ``ok``. Whichever was newer won: the command
flapped with the timing of the runtime's pings. The card read now says what it found;
the call's failure stays in the detail (the pool counts every call itself)."""

from __future__ import annotations

import json
import time

import toolang_agents_remote
from toolang_agent_pool.pool import StoredPool
from toolang_agents_remote.calls import CallLog
from toolang_agents_remote.testing import A2AServer
from toolang_core import AgentHealth, PoolHealth


def test_a_call_that_found_it_unreachable_does_not_outlive_a_card_read(toolang_runtime):
    with A2AServer("polyglot") as server:
        runtime = toolang_runtime(
            f"[plugins.agents-remote]\nendpoints = {json.dumps([server.url])}\n",
            plugins={"agents-remote": toolang_agents_remote},
        )
        calls = CallLog(runtime.plugin_databases, runtime.config.home)
        calls.begin("k1", server.url, "m1")
        calls.end("k1", "failed", f"remote agent at {server.url} is unreachable: refused")
        calls.close()
        registry = runtime.agents.registry
        store = runtime.open_store()
        try:
            health = registry.health["polyglot"]
            # The pool as `toolang agents pool` builds it (heartbeat: the registry's read),
            # over a record where three calls failed and two pings found it since.
            loaded_at = health.checked_at or time.time()
            clock = iter(loaded_at - 100 + n for n in range(100))
            pool = StoredPool(
                store, registry.active, heartbeat=registry.health.get, clock=lambda: next(clock)
            )
            for _ in range(3):
                pool.record("polyglot", ok=False, latency_ms=5, error="unreachable")
            for at in (loaded_at - 20, loaded_at - 10):
                pool.beat("polyglot", AgentHealth("ok", "ping", at))
            before_ping = pool.get("polyglot")
            pool.beat("polyglot", AgentHealth("ok", "ping", loaded_at + 1))  # lands after
            after_ping = pool.get("polyglot")
        finally:
            store.close()
    assert before_ping is not None and after_ping is not None
    assert (before_ping.health, after_ping.health) == (PoolHealth.DEGRADED, PoolHealth.DEGRADED)
    assert health.state == "ok"  # its card was read just now
    assert "last call failed: " in health.detail and "unreachable" in health.detail
