"""toolang-source-frozen: a toolang turn source that places a turn at start, then on a timer.

Enable it with ``[runtime] sources = ["frozen", …]`` (or leave ``sources`` unset: every
installed source runs). Its settings are ``[plugins.source-frozen]``: ``input`` (what
the turn says), ``every_seconds`` (how often) and ``agent`` (who answers; unset: the
``[agents] default``). A source only *places* requests in the inbox; the scheduler runs
them. Replace the timer with your own event (a webhook, a queue, a file).
"""

from __future__ import annotations

import asyncio
import contextlib

import attrs

from toolang_core import (
    Inbox,
    NewTurnRequest,
    PluginContext,
    RegisterFactory,
    RegisterSettings,
    hookimpl,
)

SOURCE = "frozen"


@attrs.frozen
class Settings:
    """[plugins.source-frozen] in toolang.toml."""

    input: str = "Good morning! What is on today?"
    every_seconds: float = 3600.0
    agent: str | None = None


class FrozenSource:
    """Places one request per ``every_seconds`` slot, on thread ``frozen:main``."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    async def run(self, inbox: Inbox, stop: asyncio.Event) -> None:
        """Submit this slot's request, then wait for the next slot until ``stop``."""
        while True:
            self.submit_due(inbox)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.settings.every_seconds)
            if stop.is_set():
                return

    def submit_due(self, inbox: Inbox) -> str:
        """Place the request of the current slot; return its id. The id is the slot's,
        so a restarted runtime (or a second one) never places the same turn twice."""
        slot = int(inbox.clock() // self.settings.every_seconds)
        request = NewTurnRequest(
            source=SOURCE,
            thread_id=f"{SOURCE}:main",
            input=self.settings.input,
            agent=self.settings.agent,
            id=f"{SOURCE}-{slot}",
        )
        return inbox.submit(request).id


def _source(context: PluginContext) -> FrozenSource:
    return FrozenSource(context.settings or Settings())


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(Settings)


@hookimpl
def toolang_register_turn_sources(register: RegisterFactory) -> None:
    register(SOURCE, _source, description="a turn at start, then every every_seconds")
