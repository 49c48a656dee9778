"""The pool's doctor check (read-only): agents unhealthy or degraded by their delegation
outcomes, with the last error; teams select around them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from toolang_core import ConfigError, DoctorCheck, PoolHealth, StoreError

if TYPE_CHECKING:
    from toolang_core import RuntimeView


def check_pool(runtime: RuntimeView) -> Iterator[DoctorCheck]:
    """``toolang doctor``'s ``pool`` findings: a warning naming the unhealthy agents, a
    note naming the degraded ones, else ``ok``; nothing when there is no store yet
    (the store check reports it)."""
    try:
        store = runtime.open_store(read_only=True)
    except (StoreError, ConfigError):
        return  # the core's store check reported it
    try:
        members = runtime.agents.pool(store).members()
    except Exception as exc:
        yield DoctorCheck("pool", "warn", f"reading the agent pool failed: {exc}")
        return
    finally:
        store.close()
    for health, status in ((PoolHealth.UNHEALTHY, "warn"), (PoolHealth.DEGRADED, "info")):
        found = [m for m in members if m.health is health]
        if found:
            yield DoctorCheck(
                "pool",
                status,  # type: ignore[arg-type]
                f"{len(found)} agent(s) {health.value} in the pool: "
                + ", ".join(m.name for m in found),
                tuple(
                    f"{m.name}: {m.stats.consecutive_failures} consecutive failure(s), "
                    f"success rate {m.stats.success_rate:.2f}; last: {m.stats.last_error or '-'}"
                    for m in found
                ),
            )
    if members and not any(
        m.health in (PoolHealth.UNHEALTHY, PoolHealth.DEGRADED) for m in members
    ):
        yield DoctorCheck("pool", "ok", f"{len(members)} agent(s) in the pool, none unhealthy")
