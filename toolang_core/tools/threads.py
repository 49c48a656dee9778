"""Tool functions running in worker threads, counted.

A blocking tool runs in a worker thread (``asyncio.to_thread``). When the tool outlives
its time limit the turn moves on, but the thread cannot be stopped: it goes on using
whatever the tool opened — a plugin's database among them. The runtime asks
:attr:`ToolThreads.busy` before it closes what such a thread may still be using (closing
an SQLite connection while another thread steps a statement on it crashes the process).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping
from typing import Any


class ToolThreads:
    """How many tool functions are running in worker threads right now."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0

    @property
    def busy(self) -> int:
        """Tool functions still running in a thread (some may have outlived a time limit)."""
        return self._running

    async def run(self, function: Callable[..., Any], params: Mapping[str, Any]) -> Any:
        """``function(**params)`` in a worker thread, counted until it returns or raises
        (not until the awaiting turn gives up on it)."""
        with self._lock:
            self._running += 1
        return await asyncio.to_thread(self._counted, function, params)

    def _counted(self, function: Callable[..., Any], params: Mapping[str, Any]) -> Any:
        try:
            return function(**params)
        finally:
            with self._lock:
                self._running -= 1
