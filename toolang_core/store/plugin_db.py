"""SQLite databases for plugins' own tables, with the same guards as the store.

A plugin that needs real tables (indexes, aggregates, full-text search) declares them
as a ``sqlite_utils.Migrations`` set and opens its database here. Opening it applies
the set's pending migrations in one transaction, switches the file to WAL, and
refuses — without changing a byte — a file that is not a database, a file that has
tables but none of this set's migrations, and a file written by a newer version of
the plugin (a migration of the set that this code does not know). Read-only opens
never create or migrate.

The file lives wherever the plugin says; :meth:`toolang_core.Runtime.plugin_database`
puts it at ``<home>/plugins/<plugin>.db`` and keeps one connection per runtime.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from pathlib import Path

import structlog
from sqlite_utils import Database, Migrations

from toolang_core.errors import ConfigError
from toolang_core.sandbox.hidden_files import hide_from_tools
from toolang_core.store.errors import StoreCorrupt, StoreError, StoreMissing
from toolang_core.store.migrations import pending_migrations
from toolang_core.store.sqlite.checkpoint import WalCheckpointer, local_writers
from toolang_core.store.sqlite.connection import connect, use_wal
from toolang_core.store.sqlite.migrate import applied_and_tables, known_migrations, migrate_file

log = structlog.get_logger("toolang.store")

OPEN_TIMEOUT = 0.05
"""Seconds a :class:`PluginCheckpointer`'s thread may wait, once, to open the file."""


def open_plugin_database(
    path: Path,
    migrations: Migrations,
    *,
    read_only: bool = False,
    synchronous: str = "normal",
    busy_timeout: float = 10.0,
) -> Database:
    """Open (and create or migrate) the SQLite database of a plugin at ``path``.

    Transactions are explicit (autocommit mode): wrap writes in ``db.atomic()`` or
    ``with db.conn:`` where several statements must hold together.

    :raises StoreMissing: read-only and the file does not exist yet.
    :raises StoreCorrupt: the file is not a database, or belongs to something else.
    :raises StoreBusy: another connection kept it locked for ``busy_timeout`` seconds.
    :raises StoreError: SQLite may not open it where it is (permissions, disk).
    :raises StoreSchemaTooNew: the file has migrations of this set the code does not know.
    :raises StoreNeedsMigration: read-only and migrations are pending.
    """
    if read_only and not path.exists():
        raise StoreMissing(
            f"no database of {migrations.name!r} at {path} yet; it is created the first "
            "time the plugin writes (e.g. while `toolang run` serves)"
        )
    conn = connect(
        path,
        read_only=read_only,
        synchronous=synchronous,
        busy_timeout=busy_timeout,
        setting=f"the {migrations.name!r} plugin's database (its settings)",
    )
    try:
        _prepare(conn, path, migrations, migrate=not read_only)
        if not read_only:
            use_wal(conn, path, wait_seconds=busy_timeout)
    except BaseException:
        conn.close()
        raise
    # Every owner's data, wherever the plugin's settings put it: hidden from tools'
    # programs (a plugin that opens its file lazily names it when it is built).
    hide_from_tools(path, f"{path}-wal", f"{path}-shm")
    return Database(conn)


def _prepare(
    conn: sqlite3.Connection, path: Path, migrations: Migrations, *, migrate: bool
) -> None:
    migrate_file(
        conn, path, migrations, pending=lambda: _pending(conn, path, migrations), migrate=migrate
    )


def _pending(conn: sqlite3.Connection, path: Path, migrations: Migrations) -> list[str]:
    applied, tables = applied_and_tables(conn, path, migrations)
    pending = pending_migrations(
        known_migrations(migrations),
        applied,
        where=str(path),
        migration_set=migrations.name,
        upgrade=f"the plugin {migrations.name!r}",
    )
    if not applied and tables and "_sqlite_migrations" not in tables:
        raise StoreCorrupt(
            f"{path} is an SQLite database but not one of {migrations.name!r} (it has tables "
            f"{', '.join(sorted(tables)[:5])}); it was left untouched"
        )
    return pending


class PluginCheckpointer:
    """Copies a plugin database's write-ahead log into its file in a daemon thread, as
    the runtime does for the store (``toolang_core.store.sqlite.checkpoint``), so the
    plugin's commits only append to the log. Without it, SQLite's auto-checkpoint copies
    the log inside whichever commit pushes it past 1,000 pages: that commit takes
    milliseconds (the copy and, with ``synchronous = normal``, two fsyncs).

    The plugin hands :meth:`join` every connection of this process that writes the file
    (it takes a larger auto-checkpoint size, a safety net while the thread runs) and
    holds :attr:`lock` around each write transaction: the thread holds it for the last,
    short copy before the log starts over from its beginning. :meth:`start` once, on
    the first write; :meth:`close` before closing the connections. Durability is
    unchanged: a commit is in the log either way.
    """

    def __init__(
        self, path: Path, *, synchronous: str = "normal", busy_interval: float = 0.1
    ) -> None:
        """``busy_interval``: seconds between the thread's looks while the log grows
        (the store's thread too looks every 0.1 s; a page written over and over — an
        index, a counter — is copied back once for many commits, as SQLite's own
        checkpoints would). The pauses grow to ten of them, at most 0.5 s, while the
        log grows little; the plugin's writes do not wake the thread as the store's do
        (``toolang_core.store.sqlite.checkpoint``)."""
        self.path = path
        self._synchronous = synchronous
        self._busy_interval = busy_interval
        self._writers = local_writers(path)
        self._connections: list[sqlite3.Connection] = []
        self._pages: int | None = None
        # Reentrant: close() may run as a finalizer in a thread that holds either.
        self._guard = threading.RLock()  # the connections and their size
        self._life = threading.RLock()  # start, stop and close, one at a time
        self._thread: WalCheckpointer | None = None
        self._closed = False
        self._writers.join(self)  # sets the size of the moment: the plugin's own

    @property
    def lock(self) -> threading.RLock:
        """This process's writers of the file share it (the store's, when the plugin's
        tables are in the store's file): hold it around each write transaction."""
        return self._writers.lock

    @property
    def running(self) -> bool:
        return self._thread is not None

    def join(self, conn: sqlite3.Connection) -> None:
        """``conn`` writes the file: it takes the auto-checkpoint size of the moment
        (the safety net while the thread runs, SQLite's default otherwise). After
        :meth:`close`, nothing is done."""
        with self._guard:
            if self._closed:
                return
            self._connections.append(conn)
            if self._pages is not None:
                conn.execute(f"PRAGMA wal_autocheckpoint = {int(self._pages)}")

    def set_autocheckpoint(self, pages: int) -> None:
        """Called by the file's writers' registry when a checkpointer starts or stops."""
        with self._guard:
            self._pages = pages
            for conn in self._connections:
                with contextlib.suppress(sqlite3.Error):  # closed meanwhile
                    conn.execute(f"PRAGMA wal_autocheckpoint = {int(pages)}")

    def start(self) -> bool:
        """Start the thread (once; later calls do nothing; after :meth:`close`, never).
        A file the thread cannot open is logged (``plugin_db.checkpointer_failed``) and
        left to SQLite's own checkpoints: the plugin's writes go on, and it may call
        again later. Returns whether the thread runs."""
        with self._life:
            if self._closed:
                return False
            if self._thread is not None:
                return True
            try:
                thread = WalCheckpointer(
                    self.path,
                    synchronous=self._synchronous,
                    busy_interval=self._busy_interval,
                    open_timeout=OPEN_TIMEOUT,  # a writer of another thread, for a moment
                )
            except (sqlite3.Error, StoreError, ConfigError) as exc:
                log.warning("plugin_db.checkpointer_failed", path=str(self.path), error=str(exc))
                return False
            thread.start()
            self._thread = thread
            return True

    def stop(self) -> None:
        """Stop the thread (waits for a checkpoint under way) and close its connection;
        the writers go back to SQLite's auto-checkpoint. :meth:`start` may start it again."""
        with self._life:
            self._stop()

    def close(self) -> None:
        """:meth:`stop` for good, before the plugin closes its connections: the
        connections are forgotten (nothing sets their size any more) and this object
        leaves the file's writers."""
        with self._life:
            self._closed = True
            self._stop()
        with self._guard:
            self._connections = []
        self._writers.leave(self)

    def _stop(self) -> None:
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.stop()
        with self._guard:
            self._connections = [c for c in self._connections if _open(c)]


def _open(conn: sqlite3.Connection) -> bool:
    try:
        conn.total_changes  # noqa: B018 - raises once the connection is closed
    except sqlite3.ProgrammingError:
        return False
    return True
