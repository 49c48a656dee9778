"""Wake-ups for the runtime that owns an SQLite store.

A process that commits a submission or a cancellation sends one datagram to a Linux
abstract-namespace Unix socket named after the store file; the runtime listening there
wakes at once instead of at its next poll. Nothing is on disk and a lost datagram only
costs latency: the runtime also polls. Elsewhere (no abstract namespace) it only polls.

A submission made in the listening runtime's own thread (a turn source, a task run, the
Python API beside ``serve``) pokes the listener directly instead: no system call, and
no datagram for the loop to read back, on every submission.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import socket
import sys
import threading
from pathlib import Path

_LISTENING: dict[str, SocketWaker] = {}
"""The bound listener of each address in this process (at most one can bind it)."""

# A forked child listens to nothing: its copy of the parent's loop must not swallow the
# wake-ups meant for the parent.
os.register_at_fork(after_in_child=_LISTENING.clear)


def wake_address(path: Path) -> str:
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:32]
    return f"\0toolang-wake-{digest}"


class WakeSender:
    """Nudges the runtime listening on one store's address; never raises."""

    def __init__(self, address: str) -> None:
        self.address = address
        self._sock: socket.socket | None = None
        self._linux = sys.platform.startswith("linux")

    def send(self) -> None:  # once per submission: kept short
        if not self._linux:
            return
        listener = _LISTENING.get(self.address)
        if listener is not None and listener.poke():
            return
        try:
            if self._sock is None:
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
                self._sock.setblocking(False)
            self._sock.sendto(b"!", self.address)
        except OSError:
            pass

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None


class SocketWaker:
    """Receives wake-ups for one store; falls back to plain waiting when it cannot bind."""

    def __init__(self, address: str) -> None:
        self._sock: socket.socket | None = None
        if sys.platform.startswith("linux"):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            try:
                sock.bind(address)
            except OSError:
                sock.close()
            else:
                sock.setblocking(False)
                self._sock = sock
        self._address = address
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None
        self._waiting: asyncio.Future[bool] | None = None
        self._poked = False
        if self._sock is not None:
            _LISTENING[address] = self

    @property
    def listening(self) -> bool:
        return self._sock is not None

    def poke(self) -> bool:
        """Wake the waiter directly; only from the thread its loop runs in (others send
        a datagram). Returns whether it did: with no running loop here, it did not."""
        if self._thread != threading.get_ident() or self._loop is None:
            return False
        if not self._loop.is_running():
            return False
        self._wake_waiter()
        return True

    async def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` for a wake-up; return whether one came."""
        if self._sock is None:
            await asyncio.sleep(timeout)
            return False
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # watched from the first wait on until close()
            self._unwatch()
            self._loop, self._thread = loop, threading.get_ident()
            loop.add_reader(self._sock.fileno(), self._readable)
            self._readable()  # what came before the watching began
        if self._poked:
            self._poked = False
            return True
        waiting: asyncio.Future[bool] = loop.create_future()
        self._waiting = waiting
        try:
            async with asyncio.timeout(timeout):  # no task of its own, unlike wait_for
                return await waiting
        except TimeoutError:
            # A wake-up may have resolved the future as the timeout fired.
            return waiting.done() and not waiting.cancelled()
        finally:
            self._waiting = None

    def _readable(self) -> None:
        got = False
        while self._sock is not None:  # a burst: one wake-up covers it
            try:
                self._sock.recv(64)
            except BlockingIOError:
                break
            got = True
        if got:
            self._wake_waiter()

    def _wake_waiter(self) -> None:
        waiting = self._waiting
        if waiting is None or waiting.cancelled():
            # Nobody waits, or the wait's timeout canceled it in this very loop iteration:
            # the next wait returns at once.
            self._poked = True
        elif not waiting.done():
            waiting.set_result(True)

    def _unwatch(self) -> None:
        if self._loop is not None and self._sock is not None:
            with contextlib.suppress(RuntimeError):  # its loop is closed: nothing to undo
                self._loop.remove_reader(self._sock.fileno())
        self._loop = self._thread = None

    def close(self) -> None:
        """Stop the loop watching the socket, then close it (a loop left watching a closed
        descriptor could not watch the next socket given its number)."""
        if self._sock is not None:
            if _LISTENING.get(self._address) is self:
                del _LISTENING[self._address]
            self._unwatch()
            self._sock.close()
            self._sock = None
