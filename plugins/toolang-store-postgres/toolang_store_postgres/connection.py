"""The connections of one store object: a pool for queries, sessions of their own, and
how their failures read (a lost server is :class:`StoreUnavailable`, with the password
masked; deadlocks are retried)."""

from __future__ import annotations

import os
import random
import socket
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Final, TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.types.json import set_json_dumps
from psycopg_pool import ConnectionPool, PoolTimeout

from toolang_core.store import StoreError, StoreUnavailable
from toolang_core.store.backend import stored_json
from toolang_store_postgres.schema import Names
from toolang_store_postgres.settings import mask_secrets

T = TypeVar("T")
Conn = psycopg.Connection[Any]

RETRIED: Final = (pg_errors.DeadlockDetected, pg_errors.SerializationFailure)
"""Transactions here touch nothing outside the database, so these are simply re-run."""
ATTEMPTS: Final = 6
IDLE_IN_TRANSACTION: Final = "10s"


class Database:
    """A pool of ``pool_size`` connections to the store's server (autocommit; explicit
    transactions through :meth:`tx`), opened at once.

    :raises StoreUnavailable: when the server cannot be reached within
        ``connect_timeout`` (the message names the store, never its password).
    """

    def __init__(
        self,
        dsn: str,
        names: Names,
        *,
        location: str,
        read_only: bool,
        pool_size: int,
        connect_timeout: float,
    ) -> None:
        self.names = names
        self.location = location
        self._dsn = dsn
        self._timeout = connect_timeout
        options: dict[str, str | int] = {
            # Which process a session belongs to, for whoever reads pg_stat_activity.
            "application_name": f"toolang:{socket.gethostname()[:40]}:{os.getpid()}",
            "connect_timeout": max(1, round(connect_timeout)),
        }
        if read_only:  # keep the operator's own options (e.g. a statement_timeout)
            own = str(conninfo_to_dict(dsn).get("options") or "")
            options["options"] = f"{own} -c default_transaction_read_only=on".strip()
        self.conninfo = make_conninfo(dsn, **options)
        self._pool = ConnectionPool(
            self.conninfo,
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True},
            configure=_configure,
            open=False,
            name=f"toolang-{names.schema}",
        )
        try:
            self._pool.open(wait=True, timeout=connect_timeout)
        except PoolTimeout:
            self._pool.close()
            raise StoreUnavailable(
                f"cannot connect to {location} within {connect_timeout:g} s: "
                f"{self._why_not()}; check [plugins.store-postgres] dsn and that the server "
                "is up"
            ) from None

    def session(self, **extra: Any) -> Conn:
        """A connection of its own, outside the pool (listening, presence)."""
        return psycopg.connect(self.conninfo, autocommit=True, **extra)

    def _why_not(self) -> str:
        try:
            self.session().close()
        except psycopg.Error as exc:
            return mask_secrets(str(exc).strip().splitlines()[0], self._dsn)
        return "the pool timed out"

    def unavailable(self, exc: BaseException) -> StoreUnavailable:
        why = mask_secrets(str(exc).strip() or type(exc).__name__, self._dsn)
        return StoreUnavailable(f"{self.location}: {why}")

    @contextmanager
    def connection(self) -> Iterator[Conn]:
        """A pooled connection; failures of the server become store errors."""
        try:
            with self._pool.connection(timeout=self._timeout) as conn:
                yield conn
        except PoolTimeout as exc:
            raise self.unavailable(exc) from None
        except pg_errors.ReadOnlySqlTransaction:
            raise StoreError(f"{self.location} is open read-only") from None
        except psycopg.OperationalError as exc:
            if not lost_connection(exc):
                raise
            raise self.unavailable(exc) from None

    def tx(self, fn: Callable[[Conn], T], *, notify: str | None = None) -> T:
        """Run ``fn`` in one transaction (sending ``notify`` on the store's channel at
        commit), again after a deadlock or serialization failure — rare: lock orders are
        fixed, but a cancel cascade may meet a heartbeat."""
        for attempt in range(ATTEMPTS):
            try:
                with self.connection() as conn, conn.transaction():
                    result = fn(conn)
                    if notify is not None:
                        conn.execute("SELECT pg_notify(%s, %s)", (self.names.channel, notify))
                return result
            except RETRIED:
                if attempt == ATTEMPTS - 1:
                    raise
                time.sleep(random.uniform(0, 0.01 * 2**attempt))
        raise AssertionError("unreachable")

    def single(self, fn: Callable[[Conn], T]) -> T:
        """Run ``fn`` — one statement — on an autocommit connection (the statement is its
        own transaction: the same atomicity as :meth:`tx` without the BEGIN and COMMIT
        round trips), again after a deadlock or serialization failure."""
        for attempt in range(ATTEMPTS):
            try:
                with self.connection() as conn:
                    return fn(conn)
            except RETRIED:
                if attempt == ATTEMPTS - 1:
                    raise
                time.sleep(random.uniform(0, 0.01 * 2**attempt))
        raise AssertionError("unreachable")

    def one(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> Any:
        """The first row of ``sql`` (``{s}`` names the schema), in its own transaction."""
        with self.connection() as conn:
            return conn.execute(self.names(sql), params).fetchone()

    def all(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[Any]:
        with self.connection() as conn:
            return conn.execute(self.names(sql), params).fetchall()

    def rowcount(self, sql: str, params: Sequence[Any]) -> int:
        with self.connection() as conn:
            return conn.execute(self.names(sql), params).rowcount

    def close(self) -> None:
        self._pool.close()


def _configure(conn: Conn) -> None:
    # Transactions here last milliseconds. A session idle inside one is a runtime that
    # was paused mid-transaction (SIGSTOP, a VM freeze): end it so its locks do not hold
    # up every other node until it resumes.
    conn.execute(f"SET idle_in_transaction_session_timeout = '{IDLE_IN_TRANSACTION}'")
    set_json_dumps(json_text, conn)


def json_text(value: Any) -> str:
    """JSON as ``jsonb`` takes it, encoded as the SQLite store encodes it
    (:func:`toolang_core.store.backend.stored_json`): ``NaN`` and the infinities are
    refused here, with the ``ValueError`` the SQLite store raises for them (a tool's
    output of NaN fails its call, named), not by the server, which would fail the
    statement and its turn; a NUL character, which ``jsonb`` cannot hold, is written out
    as ``\\x00``, as on SQLite. Non-ASCII is kept as is, so a lone surrogate is refused
    on this side too: psycopg's encoding of the text raises ``UnicodeEncodeError`` (a
    ``ValueError``, as SQLite's store raises), rather than the server refusing it
    escaped."""
    return stored_json(value)


def lost_connection(exc: psycopg.Error) -> bool:
    """Whether ``exc`` means the server could not be reached or went away (as opposed
    to a statement failing: a deadlock, a lock timeout …)."""
    state = exc.sqlstate
    return state is None or state.startswith(("08", "53", "57P"))
