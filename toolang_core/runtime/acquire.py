"""Taking the store for a runtime: waiting for another runtime to let go, and saying so."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING

import structlog

from toolang_core.store.errors import StoreBusy

if TYPE_CHECKING:
    from toolang_core.store.protocol import ExecutionStore

log = structlog.get_logger("toolang.runtime")

RETRY_SECONDS = 0.1


async def take_store(
    store: ExecutionStore, run_id: str, stop: asyncio.Event, *, wait_seconds: float
) -> bool:
    """Acquire ``store`` for run ``run_id``, waiting up to ``wait_seconds`` for a
    runtime holding it. It says at once that it waits, and for whom (the
    ``runtime.waiting_for_store`` warning, with the holder's pid and run), instead of
    being silent until it gives up; the event loop keeps running meanwhile, so a signal
    that sets ``stop`` ends the wait (``False``: not taken).

    :raises StoreBusy: when the holder did not let go in time.
    """
    deadline = time.monotonic() + wait_seconds
    said = False
    while True:
        try:
            store.acquire(run_id)
            return True
        except StoreBusy as exc:
            if time.monotonic() >= deadline:
                if not said:
                    raise
                raise StoreBusy(f"{exc} (waited {wait_seconds:g} s)", holder=exc.holder) from None
            if not said:
                said = True
                log.warning(
                    "runtime.waiting_for_store",
                    store=store.location,
                    holder=exc.holder or str(exc),
                    wait_seconds=wait_seconds,
                    detail=f"another runtime holds the store: waiting up to {wait_seconds:g} s "
                    "for it to stop, then giving up (toolang run --wait SECONDS sets how "
                    "long; --wait 0 fails at once)",
                )
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(RETRY_SECONDS):
                await stop.wait()
        if stop.is_set():
            log.info("runtime.stopped_waiting_for_store", store=store.location)
            return False
