"""toolang-tools-automator: the automator role's tools, over the runtime's own machinery.

``cron_*`` keep durable chores the chore source fires, ``bg_*`` are thin views over
task runs, ``workflow_*`` run YAML pipelines whose steps are task runs. Hooks: the
task-run observer advances a workflow run the moment one of its steps ends; start-up
and a periodic reconcile advance what a crash or a missed event left behind. This
module stays import-light (every ``toolang`` command imports it).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from toolang_core import hookimpl
from toolang_tools_automator.settings import NAME, AutomatorSettings

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from toolang_core import RegisterSettings, RegisterTool, Runtime, TaskRun

__all__ = ["NAME", "AutomatorSettings"]


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(AutomatorSettings)


@hookimpl
def toolang_register_tools(register: RegisterTool) -> None:
    from toolang_tools_automator.tools import TOOLS

    for tool in TOOLS:
        register(tool)


@hookimpl
def toolang_observe_task_run(run: TaskRun, runtime: Runtime) -> Awaitable[Any] | None:
    workflow_run = run.metadata.get("workflow_run")
    if not workflow_run or not run.status.is_terminal or runtime.store is None:
        return None
    from toolang_tools_automator.engine import advance

    return advance(runtime, workflow_run)


async def _reconcile_loop(runtime: Runtime, every: float) -> None:
    from toolang_tools_automator.engine import reconcile

    while True:
        await reconcile(runtime)
        await asyncio.sleep(every)


@hookimpl
def toolang_startup(runtime: Runtime) -> None:
    from toolang_tools_automator.common import settings_of

    if runtime.store is None or runtime.scheduler is None:
        return
    every = settings_of(runtime).reconcile_seconds
    tasks = _reconcilers(runtime)
    tasks.append(asyncio.get_running_loop().create_task(_reconcile_loop(runtime, every)))


def _reconcilers(runtime: Runtime) -> list[asyncio.Task[None]]:
    return runtime.plugin_state(f"{NAME}:reconcile", list)


@hookimpl
def toolang_shutdown(runtime: Runtime, reason: str) -> None:
    tasks = _reconcilers(runtime)
    while tasks:
        tasks.pop().cancel()
