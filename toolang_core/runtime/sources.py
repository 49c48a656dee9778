"""Turn sources: loops that place turn requests into the inbox, and their supervision."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Protocol

import structlog

from toolang_core.errors import describe_exception

if TYPE_CHECKING:
    from toolang_core.inbox.inbox import Inbox

log = structlog.get_logger("toolang.sources")


class TurnSource(Protocol):
    """What a ``toolang_register_turn_sources`` factory returns.

    ``run`` places turn requests into ``inbox`` until ``stop`` is set, then returns. It
    must never execute work itself. A source with nothing to do in the background (chat,
    invoke: their requests arrive through the CLI or API) returns at once.
    """

    async def run(self, inbox: Inbox, stop: asyncio.Event) -> None: ...


async def supervise(
    name: str, source: TurnSource, inbox: Inbox, stop: asyncio.Event, *, max_backoff: float = 60.0
) -> None:
    """Run one source; if it raises, log it and restart it with growing back-off.

    A source with no ``run`` method is a plugin bug no retry can fix: it is logged once
    (naming the source and its type) and not run."""
    if not callable(getattr(source, "run", None)):
        log.error(
            "source.invalid",
            source=name,
            error=f"{type(source).__name__} has no run(inbox, stop) method; the source "
            "is not run (see docs/hooks/sources.md)",
        )
        return
    delay = 1.0
    while not stop.is_set():
        try:
            await source.run(inbox, stop)
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.error(
                "source.failed", source=name, error=describe_exception(exc), retry_in_seconds=delay
            )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)
            delay = min(delay * 2, max_backoff)
