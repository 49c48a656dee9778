"""Reading lines from the terminal inside the event loop, with Ctrl-C as a cancel.

``input()`` in a worker thread cannot be interrupted: Ctrl-C cancelled the waiting
task, but the thread kept reading until Enter (and the first Ctrl-C seemed ignored).
Here stdin is watched by the loop itself, so a cancel stops a read at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


class LineReader:
    """Lines from a file descriptor (stdin by default), read without a thread."""

    def __init__(self, fd: int | None = None) -> None:
        self.fd = sys.stdin.fileno() if fd is None else fd
        self.buffer = b""
        self.eof = False

    async def readline(self, prompt: str = "") -> str:
        """Show ``prompt`` on stdout and return the next line (without its newline).

        :raises EOFError: at the end of input (Ctrl-D on a terminal).
        """
        if prompt:
            sys.stdout.write(prompt)
            sys.stdout.flush()
        while b"\n" not in self.buffer and not self.eof:
            await self._readable()
            chunk = os.read(self.fd, 4096)
            if chunk:
                self.buffer += chunk
            else:
                self.eof = True
        if not self.buffer:
            raise EOFError
        line, _, self.buffer = self.buffer.partition(b"\n")
        # Undecodable bytes stay visible (as surrogates) so the inbox can refuse them.
        return line.decode("utf-8", errors="surrogateescape").rstrip("\r")

    async def _readable(self) -> None:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            if not ready.done():
                ready.set_result(None)

        try:
            loop.add_reader(self.fd, wake)
        except (OSError, ValueError, NotImplementedError):
            return  # a regular file (or no selector support): a read never blocks long
        try:
            await ready
        finally:
            loop.remove_reader(self.fd)


class Interrupts:
    """Ctrl-C cancels whatever the session is waiting for right now (``run``).

    The caller decides what a cancel means: at the prompt it leaves, while a turn is
    waited for it detaches and returns to the prompt.
    """

    def __init__(self) -> None:
        self.current: asyncio.Future[object] | None = None

    def __enter__(self) -> Interrupts:
        asyncio.get_running_loop().add_signal_handler(signal.SIGINT, self._on_sigint)
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(Exception):
            asyncio.get_running_loop().remove_signal_handler(signal.SIGINT)

    def _on_sigint(self) -> None:
        if self.current is not None and not self.current.done():
            self.current.cancel()

    async def run(self, work: Awaitable[T]) -> T:
        """Await ``work``; :raises KeyboardInterrupt: when Ctrl-C cancelled it."""
        task = asyncio.ensure_future(work)
        self.current = task  # type: ignore[assignment]
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if not task.cancelled():
                raise  # this session itself is being cancelled
            raise KeyboardInterrupt from None
        finally:
            self.current = None
