"""The pool's task-run observer: every finished task run updates its agent's statistics.

Task runs are how ``start_task_run``, ``agent_spawn`` and team work delegate, so one
observer covers them all (``ask_agent`` reports from the tool itself). A run that was
canceled says nothing about its agent and is not counted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from toolang_core import TaskRunStatus

if TYPE_CHECKING:
    from toolang_core import RuntimeView, TaskRun


@attrs.frozen
class PoolSettings:
    """``[plugins.agent-pool]``: prices per call by agent name (in ``currency``), the
    health policy's thresholds (see :class:`~toolang_agent_pool.stats.HealthPolicy`)
    and how often a serving runtime pings the remote agents (``ping_seconds``; 0: only
    the card fetch at load); ``recover_after`` pings in a row that reach an agent
    unhealthy by its failures make it degraded again."""

    prices: dict[str, float] = attrs.field(factory=dict)
    currency: str = "USD"
    unhealthy_after: int = 3
    max_error_rate: float = 0.5
    latency_threshold_ms: float = 30_000.0
    ping_seconds: float = 30.0
    recover_after: int = 2


def observe(run: TaskRun, runtime: RuntimeView) -> None:
    """Count ``run``'s outcome for its agent (completed or failed; not canceled)."""
    if run.status not in (TaskRunStatus.COMPLETED, TaskRunStatus.FAILED):
        return
    agent = run.agent_name or runtime.config.agents.default
    started = run.started_at or run.created_at
    latency_ms = max(0.0, ((run.finished_at or run.updated_at) - started) * 1000)
    ok = run.status is TaskRunStatus.COMPLETED
    error = "" if ok else (run.error or run.outcome or "failed")
    call = f"task-run:{run.id}"  # a run observed again (another node) counts once
    store = runtime.store
    if store is not None:
        runtime.agents.pool(store).record(
            agent, ok=ok, latency_ms=latency_ms, error=error, call=call
        )
        return
    opened = runtime.open_store()  # a CLI process (a cancel, a sweep) has no served store
    try:
        runtime.agents.pool(opened).record(
            agent, ok=ok, latency_ms=latency_ms, error=error, call=call
        )
    finally:
        opened.close()
