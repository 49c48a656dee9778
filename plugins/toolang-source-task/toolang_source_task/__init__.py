"""toolang-source-task: tasks as durable work items, and the ``toolang tasks`` commands."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

import attrs
import click

from toolang_core import RegisterRoute, RegisterSettings, RegisterTurnSource, hookimpl

if TYPE_CHECKING:
    from toolang_core import Inbox

NAME = "source-task"


@attrs.frozen
class TaskSettings:
    """``[plugins.source-task]``."""

    poll_seconds: float = 1.0


class TaskSource:
    """Hands each active task's new revisions to an agent, on thread ``task:<ref>``."""

    def __init__(self, settings: TaskSettings) -> None:
        self.settings = settings

    async def run(self, inbox: Inbox, stop: asyncio.Event) -> None:
        from toolang_source_task.tasks import TaskBook

        book = TaskBook(inbox.store, clock=inbox.clock)
        while not stop.is_set():
            book.submit_due(inbox)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.settings.poll_seconds)


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(TaskSettings)


@hookimpl
def toolang_register_turn_sources(register: RegisterTurnSource) -> None:
    # No admission defaults: tasks share the ``task`` group with the core's task runs,
    # whose defaults the core sets (priority 20, coalesced, at most four at once).
    register(
        "task",
        lambda context: TaskSource(context.settings or TaskSettings()),
        description="durable tasks, one thread each",
    )


@hookimpl
def toolang_register_commands(cli: click.Group) -> None:
    from toolang_source_task.cli import tasks

    cli.add_command(tasks)


@hookimpl
def toolang_register_routes(register: RegisterRoute) -> None:
    from toolang_source_task import routes

    routes.register(register)
