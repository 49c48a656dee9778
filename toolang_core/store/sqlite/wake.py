"""Wake-ups for the runtime that owns an SQLite store.

A process that commits a submission or a cancellation sends one datagram to a Linux
abstract-namespace Unix socket named after the store file; the runtime listening there
wakes at once instead of at its next poll. Nothing is on disk and a lost datagram only
costs latency: the runtime also polls. Elsewhere (no abstract namespace) it only polls.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import socket
import sys
from pathlib import Path


def wake_address(path: Path) -> str:
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:32]
    return f"\0toolang-wake-{digest}"


class WakeSender:
    """Nudges the runtime listening on one store's address; never raises."""

    def __init__(self, address: str) -> None:
        self.address = address
        self._sock: socket.socket | None = None
        self._linux = sys.platform.startswith("linux")

    def send(self) -> None:  # once per submission: kept to the bare syscall
        if not self._linux:
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

    @property
    def listening(self) -> bool:
        return self._sock is not None

    async def wait(self, timeout: float) -> bool:
        if self._sock is None:
            await asyncio.sleep(timeout)
            return False
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):  # no task of its own, unlike wait_for
                await loop.sock_recv(self._sock, 64)
        except TimeoutError:
            return False
        while True:  # drain a burst so one wake-up covers it
            try:
                self._sock.recv(64)
            except BlockingIOError:
                return True

    def close(self) -> None:
        """Close the socket; called from its event loop, it also stops the loop watching it
        (a receive still pending there would leave the loop watching a closed descriptor)."""
        if self._sock is not None:
            with contextlib.suppress(RuntimeError):  # RuntimeError: no loop running here
                asyncio.get_running_loop().remove_reader(self._sock.fileno())
            self._sock.close()
            self._sock = None
