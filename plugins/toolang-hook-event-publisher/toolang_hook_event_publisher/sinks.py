"""Sinks: where event records go. A sink opens a session for one background worker and
hands it a ``send(batch)`` coroutine function; ``send`` raises :class:`DeliveryError`
when it gives up.

The webhook sink lives in :mod:`.webhook` so that httpx is imported only by a runtime
that configures one.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from toolang_core import hide_from_tools
from toolang_hook_event_publisher.records import record_line

if TYPE_CHECKING:
    from contextlib import AbstractAsyncContextManager

    from toolang_hook_event_publisher.settings import SinkSettings

Record = dict[str, Any]
Send = Callable[[list[Record]], Awaitable[None]]


class DeliveryError(Exception):
    """A sink gave up on a batch; ``delivered`` of its records did get through first."""

    def __init__(self, message: str, delivered: int = 0) -> None:
        super().__init__(message)
        self.delivered = delivered


class Sink(Protocol):
    """A destination for event records."""

    batch_size: int
    """How many queued records one ``send`` may take."""

    def session(self) -> AbstractAsyncContextManager[Send]:
        """Open what delivery needs (a file, an HTTP client) for one worker's life."""
        ...


class JsonlWriter:
    """Appends records to a file as JSON lines, safely shared with other processes.

    The file is opened ``O_APPEND`` and each line goes out in one ``write``, so lines
    from several processes never interleave. When the path stops naming the open file
    (logrotate moved it away), the next write opens a new file at the path.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        hide_from_tools(path)  # every owner's events: not for tools' programs to read
        self._fd: int | None = None
        self._identity: tuple[int, int] | None = None

    def write(self, records: list[Record]) -> None:
        """Append ``records``; :raises DeliveryError: naming the file and the cause."""
        written = 0
        try:
            fd = self._open()
            for record in records:
                line = record_line(record)
                count = os.write(fd, line)
                if count != len(line):
                    os.write(fd, b"\n")  # end the fragment: the next line stays whole
                    raise OSError(f"short write ({count} of {len(line)} bytes; is the disk full?)")
                written += 1
        except OSError as exc:
            self.close()
            raise DeliveryError(f"cannot append to {self.path}: {exc}", written) from None

    def _open(self) -> int:
        if self._fd is not None and self._moved():
            self.close()
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
            self._fd = os.open(self.path, flags, 0o600)  # events may describe private work
            stat = os.fstat(self._fd)
            self._identity = (stat.st_dev, stat.st_ino)
        return self._fd

    def _moved(self) -> bool:
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            return True
        return (stat.st_dev, stat.st_ino) != self._identity

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class JsonlSink:
    """``{type = "jsonl", path = "..."}``: one JSON object per line in a file."""

    batch_size = 200

    def __init__(self, path: Path) -> None:
        self.path = path

    @asynccontextmanager
    async def session(self) -> AsyncIterator[Send]:
        writer = JsonlWriter(self.path)

        async def send(batch: list[Record]) -> None:
            # File I/O off the event loop: a slow disk must not stall the turns.
            await asyncio.to_thread(writer.write, batch)

        try:
            yield send
        finally:
            writer.close()


class StdoutSink:
    """``{type = "stdout"}``: the same JSON lines on standard output."""

    batch_size = 200

    @asynccontextmanager
    async def session(self) -> AsyncIterator[Send]:
        async def send(batch: list[Record]) -> None:
            await asyncio.to_thread(_print_lines, batch)

        yield send


def _print_lines(batch: list[Record]) -> None:
    out = sys.stdout  # looked up each time: it may have been replaced (tests, redirection)
    out.write(b"".join(record_line(record) for record in batch).decode())
    out.flush()


def build_sink(settings: SinkSettings, label: str) -> Sink:
    """The sink ``settings`` describe (settings are already validated)."""
    if settings.type == "jsonl":
        assert settings.path is not None
        return JsonlSink(settings.path)
    if settings.type == "stdout":
        return StdoutSink()
    from toolang_hook_event_publisher.webhook import WebhookSink

    return WebhookSink(settings, label)
