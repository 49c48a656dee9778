"""Wake-ups through ``LISTEN``/``NOTIFY``, and a runtime's presence as an advisory lock.

A notification is a hint, never the truth: a listener that reconnects may have missed
some, so it reports a wake-up after every reconnect and the runtime also polls. The
listening connection is a plain session (not from the pool, which may hand out another
session for each query) watched by the event loop's reader, so waiting costs no thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import psycopg
import structlog

from toolang_store_postgres import signals
from toolang_store_postgres.schema import Names

if TYPE_CHECKING:
    from toolang_core import TurnSignal

    Deliver = Callable[[str, Sequence[TurnSignal]], None]

log = structlog.get_logger("toolang.store.postgres")

KEEPALIVES = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
}
"""A partitioned listener notices within about 25 s (the polls cover the meantime)."""


class NotifyWaker:
    """``await wait(timeout)``: ``True`` when a notification on the store's channel (or a
    reconnect, which may have lost some) arrived within ``timeout`` seconds.

    With ``deliver`` (the runtime's turn signals), the same session also listens on the
    turn-signal channel and hands what arrives there to ``deliver``, without waking."""

    def __init__(
        self,
        connect: Callable[[], psycopg.Connection[Any]],
        names: Names,
        deliver: Deliver | None = None,
    ) -> None:
        self._connect = connect
        self._names = names
        self._deliver = deliver
        self._conn: psycopg.Connection[Any] | None = None
        self._retry_at = 0.0
        self._failures = 0

    async def _ensure(self) -> bool:
        """Connect and LISTEN if need be; ``True`` when this call (re)connected.

        Connecting runs in a thread: an unreachable server must not stall the turns
        running on this event loop for ``connect_timeout``.
        """
        if self._conn is not None and not self._conn.closed:
            return False
        if time.monotonic() < self._retry_at:
            raise ConnectionError("waiting before the next reconnect")
        try:
            conn = await asyncio.to_thread(self._listen)
        except psycopg.Error as exc:
            self._failures += 1
            self._retry_at = time.monotonic() + min(30.0, 0.5 * 2**self._failures)
            if self._failures == 1:
                log.warning("store.listen_failed", error=type(exc).__name__)
            raise ConnectionError(str(exc)) from None
        if self._failures:
            log.info("store.listen_restored")
        self._failures = 0
        self._conn = conn
        return True

    def _listen(self) -> psycopg.Connection[Any]:
        conn = self._connect()
        try:
            conn.execute(f'LISTEN "{self._names.channel}"')
            if self._deliver is not None:
                conn.execute(f'LISTEN "{self._names.signal_channel}"')
        except BaseException:
            conn.close()
            raise
        return conn

    async def wait(self, timeout: float) -> bool:
        try:
            if await self._ensure():
                return True  # notifications sent while we were away are lost: look now
        except ConnectionError:
            await asyncio.sleep(min(timeout, max(0.05, self._retry_at - time.monotonic())))
            return True
        conn = self._conn
        assert conn is not None
        if self._drain(conn):
            return True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        fd = conn.pgconn.socket
        # The socket may become readable with no notification (a server message, the
        # first half of a closing connection): keep waiting until the deadline.
        while (left := deadline - loop.time()) > 0:
            readable: asyncio.Future[None] = loop.create_future()
            loop.add_reader(fd, _resolve, readable)
            try:
                await asyncio.wait_for(readable, left)
            except TimeoutError:
                return False
            finally:
                loop.remove_reader(fd)
            if self._drain(conn):
                return True
        return False

    def _drain(self, conn: psycopg.Connection[Any]) -> bool:
        """Consume what the server sent; ``True`` if it held a notification. A broken
        connection is dropped (and counts as a wake-up: something may have been missed)."""
        pgconn = conn.pgconn
        try:
            pgconn.consume_input()
        except psycopg.OperationalError:
            self._drop()
            return True
        if pgconn.status != psycopg.pq.ConnStatus.OK:
            self._drop()
            return True
        got = False
        while (notify := pgconn.notifies()) is not None:
            if notify.relname.decode() == self._names.signal_channel:
                self._signals(notify.extra.decode())
            else:
                got = True
        return got

    def _signals(self, payload: str) -> None:
        decoded = signals.decode(payload)
        if decoded is None or self._deliver is None:
            return
        try:
            self._deliver(*decoded)
        except Exception as exc:  # a watcher's trouble never stops the wake-ups
            log.warning("store.turn_signal_failed", error=type(exc).__name__)

    def _drop(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
        self._conn = None

    def close(self) -> None:
        self._drop()


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class Presence:
    """A shared session advisory lock held by every runtime serving the schema: the
    server frees it when the runtime's connection ends, however the process died."""

    def __init__(self, connect: Callable[[], psycopg.Connection[Any]], names: Names) -> None:
        self._connect = connect
        self._names = names
        self._conn: psycopg.Connection[Any] | None = None
        self.wanted = False
        """Whether this process serves the store (and should hold the lock)."""

    def hold(self) -> None:
        """Take the lock, or take it again after its connection was lost."""
        self.wanted = True
        if self._conn is not None:
            try:
                self._conn.execute("SELECT 1")  # a dead session looks fine until used
                return
            except psycopg.Error:
                self._drop()
        conn = self._connect()
        conn.execute("SELECT pg_advisory_lock_shared(%s, 0)", (self._names.admin_key,))
        self._conn = conn

    def _drop(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
            self._conn = None

    def release(self) -> None:
        """Give the lock up before closing the session: the server frees a closed
        session's locks only once its backend has exited, a moment after ``close``
        returns, and ``runtime_running`` must not see a stopped runtime as running."""
        self.wanted = False
        if self._conn is not None:
            with contextlib.suppress(psycopg.Error):
                self._conn.execute(
                    "SELECT pg_advisory_unlock_shared(%s, 0)", (self._names.admin_key,)
                )
        self._drop()


RUNTIME_PRESENT_SQL = (
    "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted "
    "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
    "AND classid = %s::int4::oid AND objid = 0 AND objsubid = 2)"
)
"""Whether any session holds the presence lock (a read: ``pg_locks`` is open to all)."""
