"""toolang-source-chore: chores on RRULE or cron schedules, and ``toolang chores``."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import click

from toolang_core import GroupPolicy, RegisterSettings, RegisterTurnSource, hookimpl
from toolang_source_chore.settings import ChoreSettings, ChoreSpec

if TYPE_CHECKING:
    from toolang_core import Inbox

__all__ = ["ChoreSettings", "ChoreSpec"]

NAME = "source-chore"


class ChoreSource:
    """Places a turn on ``chore:<key>`` when a chore's occurrence comes due.

    It sleeps until the next occurrence (at most ``poll_seconds``, the longest it goes
    without reading the chores again) or until :meth:`wake` — ``Runtime.wake_source``,
    e.g. from the automator's ``cron_add`` — says the chores changed."""

    def __init__(self, settings: ChoreSettings, base_dir: object) -> None:
        self.settings = settings
        self.base_dir = base_dir
        self._woken = asyncio.Event()

    def wake(self) -> None:
        """Read the chores again now (called in the runtime's event loop)."""
        self._woken.set()

    async def run(self, inbox: Inbox, stop: asyncio.Event) -> None:
        from toolang_source_chore.chores import ChoreBoard

        board = ChoreBoard(self.settings, self.base_dir, inbox.store, clock=inbox.clock)  # type: ignore[arg-type]
        while not stop.is_set():
            self._woken.clear()  # a wake-up from here on is for the chores read next
            board.reload()
            board.submit_due(inbox)
            now = inbox.clock()
            wake = board.next_due(now)
            delay = self.settings.poll_seconds if wake is None else max(0.0, wake - now)
            await self._sleep(stop, min(delay, self.settings.poll_seconds))

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
    register(ChoreSettings)


@hookimpl
def toolang_register_turn_sources(register: RegisterTurnSource) -> None:
    register(
        "chore",
        lambda context: ChoreSource(context.settings or ChoreSettings(), context.config.base_dir),
        description="recurring chores on RRULE or cron schedules",
        # Background work; a chore still queued absorbs its next occurrence.
        admission=GroupPolicy(priority=10, strategy="coalesce"),
    )


@hookimpl
def toolang_register_commands(cli: click.Group) -> None:
    from toolang_source_chore.cli import chores

    cli.add_command(chores)
