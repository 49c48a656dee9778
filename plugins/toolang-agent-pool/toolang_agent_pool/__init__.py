"""toolang-agent-pool: the agent pool — health, performance, trust and selection of every
callable agent — for the core's ``toolang_agent_pool`` hook.

Statistics are generic records in the execution store (kind ``agent_pool``), updated by
every finished task run (this plugin's task-run observer) and every ``ask_agent`` call
(the core reports it through ``runtime.agents``); a serving runtime's upkeep pings the
remote agents when due; ``toolang doctor`` names unhealthy and degraded agents.
``[plugins.agent-pool]`` holds prices and the health policy (docs/teams.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import structlog

from toolang_agent_pool.observer import PoolSettings, observe
from toolang_core import describe_exception, hookimpl

if TYPE_CHECKING:
    from toolang_agent_pool.ping import PingSchedule
    from toolang_agent_pool.pool import StoredPool
    from toolang_core import (
        DoctorCheck,
        PoolHooks,
        PoolRecords,
        RegisterSettings,
        RuntimeView,
        TaskRun,
    )

NAME = "agent-pool"

log = structlog.get_logger("toolang.pool")


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(PoolSettings)


@hookimpl
def toolang_agent_pool(runtime: RuntimeView, records: PoolRecords, hooks: PoolHooks) -> StoredPool:
    from toolang_agent_pool.pool import pool_for

    return pool_for(runtime, records, hooks)


@hookimpl
def toolang_observe_task_run(run: TaskRun, runtime: RuntimeView) -> None:
    observe(run, runtime)


# First among the plugins' upkeep: a team sweep after it sees what the pings found.
@hookimpl(tryfirst=True)
async def toolang_upkeep(runtime: RuntimeView) -> None:
    """Ping the remote agents when due (``[plugins.agent-pool] ping_seconds``) and store
    what was found in the pool."""
    from toolang_agent_pool.ping import PingSchedule
    from toolang_agent_pool.pool import StoredPool

    store = runtime.store
    if store is None:
        return

    def schedule() -> PingSchedule:
        settings = runtime.settings.get("agent-pool")
        return PingSchedule(settings.ping_seconds if isinstance(settings, PoolSettings) else 30.0)

    pings = runtime.plugin_state("toolang:pool_ping", schedule)
    if not pings.due():
        return
    try:
        pool = runtime.agents.pool(store)
        # another plugin's pool (answering toolang_agent_pool first) keeps its own heartbeats
        if isinstance(pool, StoredPool) and pool.hooks is not None:
            await pings.run(runtime, pool)
    except Exception as exc:
        log.warning("pool.ping_failed", error=describe_exception(exc))


@hookimpl
def toolang_doctor_checks(runtime: RuntimeView) -> Iterable[DoctorCheck]:
    from toolang_agent_pool.doctor import check_pool

    return list(check_pool(runtime))
