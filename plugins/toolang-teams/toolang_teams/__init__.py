"""toolang-teams: teams of agents from the agent pool, and ``toolang teams``.

A leader and workers chosen from the agent pool (``runtime.agents.pool()``, which
toolang-agent-pool provides) by capability, health and trust work one goal: every
worker's task is a task run on the runtime's one controller, the answers are resolved
by the team's strategy and recorded with every candidate (docs/teams.md). The plugin
contributes the model-facing ``team_*`` tools (owned by the automator role), the
``toolang teams`` command, and the health sweep of active teams at every upkeep of a
serving runtime.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import structlog

from toolang_core import Tool, describe_exception, hookimpl

if TYPE_CHECKING:
    import click

    from toolang_core import RegisterTool, RuntimeView, TaskRunController

NAME = "teams"

log = structlog.get_logger("toolang.teams")


@hookimpl
def toolang_register_tools(register: RegisterTool) -> None:
    from toolang_teams.tools import TOOLS

    for function in TOOLS:
        # Like the core's delegation tools: offered only while delegation is up, and
        # idempotent (a call found in doubt after a crash is made again under its key).
        register(
            Tool.from_function(function, blocking=False, requires=("delegation",), idempotent=True)
        )


@hookimpl
def toolang_register_commands(cli: click.Group) -> None:
    from toolang_teams.cli import teams

    cli.add_command(teams)


@hookimpl
async def toolang_upkeep(runtime: RuntimeView) -> None:
    """Replace unhealthy members of active teams (start-up and every heartbeat)."""
    from toolang_teams.types import KIND

    if runtime.store is None:
        return
    try:
        # No team stored, nothing to sweep: the coordinator (and the agent pool under
        # it) is imported only when there is one — every one-shot chat runs an upkeep.
        if not runtime.store.list_records(KIND):
            return
        from toolang_teams.coordinator import TeamCoordinator

        # The view types it as the TaskRuns protocol; a serving runtime's is the controller.
        controller = cast("TaskRunController", runtime.task_runs)
        await TeamCoordinator(runtime, controller).sweep()
    except Exception as exc:
        log.warning("team.sweep_failed", error=describe_exception(exc))
