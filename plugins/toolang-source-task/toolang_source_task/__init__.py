"""toolang-source-task: tasks as durable work items, and the ``toolang tasks`` commands."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import attrs
import click

from toolang_core import RegisterRoute, RegisterSettings, RegisterTurnSource, hookimpl

if TYPE_CHECKING:
    from toolang_core import Inbox, RegisterTool

NAME = "source-task"


@attrs.frozen
class TaskSettings:
    """``[plugins.source-task]``."""

    poll_seconds: float = 1.0


class TaskSource:
    """Hands each active task's new revisions to an agent, on thread ``task:<ref>``.

    Looks every ``poll_seconds``, and at once when woken (``wake``: a task tool changed
    a task)."""

    def __init__(self, settings: TaskSettings) -> None:
        self.settings = settings
        self._woken = asyncio.Event()

    def wake(self) -> None:
        self._woken.set()

    async def run(self, inbox: Inbox, stop: asyncio.Event) -> None:
        from toolang_source_task.tasks import TaskBook

        book = TaskBook(inbox.store, clock=inbox.clock)
        while not stop.is_set():
            self._woken.clear()  # a wake-up from here on is for the tasks read next
            book.submit_due(inbox)
            await self._sleep(stop, self.settings.poll_seconds)

    async def _sleep(self, stop: asyncio.Event, seconds: float) -> None:
        """Until ``seconds`` pass, ``stop`` is set or :meth:`wake` is called."""
        waits = {asyncio.ensure_future(stop.wait()), asyncio.ensure_future(self._woken.wait())}
        try:
            await asyncio.wait(waits, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in waits:
                waiting.cancel()
            await asyncio.gather(*waits, return_exceptions=True)


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
def toolang_register_tools(register: RegisterTool) -> None:
    from toolang_source_task.tools import TOOLS

    for tool in TOOLS:
        register(tool)


@hookimpl
def toolang_register_commands(cli: click.Group) -> None:
    from toolang_source_task.cli import tasks

    cli.add_command(tasks)


@hookimpl
def toolang_register_routes(register: RegisterRoute) -> None:
    from toolang_source_task import routes

    routes.register(register)
