"""A tool call's time limit (``[tools] timeout_seconds``), which a wait for a person
pauses.

The chain arms the limit around a tool's function with :func:`armed`; a tool that parks
its turn on a person (``ask_person``) waits inside that limit, and a person's time is
not the tool's: :func:`paused` stops the clock while the turn is parked and gives the
tool the rest of its time afterwards.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from typing import Final

_LIMIT: Final[ContextVar[asyncio.Timeout | None]] = ContextVar(
    "toolang_tool_time_limit", default=None
)


@asynccontextmanager
async def armed(seconds: float) -> AsyncIterator[None]:
    """``asyncio.timeout(seconds)`` around a tool's function, findable by :func:`paused`.

    :raises TimeoutError: when the limit passes (as ``asyncio.timeout`` does)."""
    async with asyncio.timeout(seconds) as limit:
        token = _LIMIT.set(limit)
        try:
            yield
        finally:
            _LIMIT.reset(token)


@contextmanager
def paused() -> Iterator[None]:
    """Stop the running tool call's time limit (if any) inside this block."""
    limit = _LIMIT.get()
    due = limit.when() if limit is not None else None
    if limit is None or due is None:
        yield
        return
    loop = asyncio.get_running_loop()
    remaining = due - loop.time()
    limit.reschedule(None)
    try:
        yield
    finally:
        limit.reschedule(loop.time() + remaining)
