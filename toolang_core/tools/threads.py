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
        (not until the awaiting turn gives up on it).

        A call the turn gives up on before a worker thread took it never runs and is
        not counted from then on (the executor's queue may hold it a while: a pool whose
        threads are all busy, or one just starting a thread).
        """
        call = _Call(function, params)
        with self._lock:
            self._running += 1
        try:
            return await asyncio.to_thread(self._counted, call)
        except BaseException:
            with self._lock:
                if not call.started:
                    call.abandoned = True  # a thread that takes it later returns at once
                    self._running -= 1
            raise

    def _counted(self, call: _Call) -> Any:
        with self._lock:
            if call.abandoned:
                return None
            call.started = True
        try:
            return call.function(**call.params)
        finally:
            with self._lock:
                self._running -= 1


class _Call:
    """One call handed to a worker thread: taken by it, or given up on first."""

    __slots__ = ("abandoned", "function", "params", "started")

    def __init__(self, function: Callable[..., Any], params: Mapping[str, Any]) -> None:
        self.function = function
        self.params = params
        self.started = False
        self.abandoned = False
