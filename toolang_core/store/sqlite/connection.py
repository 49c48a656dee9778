"""Open the SQLite store: pragmas, corruption and schema-version guards, migrations."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Final
from urllib.parse import quote

from sqlite_utils import Database

from toolang_core.errors import ConfigError
from toolang_core.store.errors import StoreBusy, StoreCorrupt, StoreError, StoreMissing
from toolang_core.store.migrations import pending_migrations
from toolang_core.store.sqlite.damage import damaged, is_busy
from toolang_core.store.sqlite.guard import take_orphaned_log
from toolang_core.store.sqlite.lock import RuntimeLock
from toolang_core.store.sqlite.migrate import applied_and_tables, migrate_file
from toolang_core.store.sqlite.schema import MIGRATION_SET, known_names, migrations

SYNCHRONOUS = ("off", "normal", "full", "extra")


def connect(
    path: Path,
    *,
    read_only: bool,
    synchronous: str,
    busy_timeout: float,
    setting: str = "[store] path",
) -> sqlite3.Connection:
    """Open ``path`` in autocommit mode (transactions are explicit) and check it is a
    database. ``setting``: where the file's place is configured, for the errors.

    :raises StoreMissing: read-only and the file does not exist.
    :raises StoreCorrupt: the file is not an SQLite database or is damaged.
    :raises StoreBusy: another connection kept it locked for ``busy_timeout`` seconds.
    :raises StoreError: SQLite may not open it (permissions, a missing disk, …).
    """
    if read_only:
        if not path.exists():
            raise StoreMissing(f"no execution store at {path} yet; `toolang run` creates it")
        target, uri = f"file:{quote(str(path))}?mode=ro", True
    else:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # a user's path, not a bug: say which and why
            raise ConfigError(
                [
                    f"cannot create the directory {path.parent} for {path.name} "
                    f"({exc.strerror or exc}); point `home` or [store] path at a directory "
                    "you can write"
                ]
            ) from None
        take_orphaned_log(path, RuntimeLock(path).holder_pid())
        target, uri = str(path), False
    try:
        conn = sqlite3.connect(
            target, uri=uri, timeout=busy_timeout, isolation_level=None, check_same_thread=False
        )
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        conn.execute(f"PRAGMA synchronous = {synchronous}")
    except sqlite3.DatabaseError as exc:
        raise not_opened(path, exc, busy_timeout, setting=setting) from None
    return conn


ENVIRONMENT: Final = frozenset(
    {
        sqlite3.SQLITE_CANTOPEN,
        sqlite3.SQLITE_PERM,
        sqlite3.SQLITE_READONLY,
        sqlite3.SQLITE_IOERR,
        sqlite3.SQLITE_FULL,
        sqlite3.SQLITE_NOLFS,
        sqlite3.SQLITE_NOMEM,
        sqlite3.SQLITE_AUTH,
    }
)
"""SQLite's result codes for a file it may not open or write where it is (permissions,
a directory in its place, a disk missing or full): nothing about its content."""


def not_opened(
    path: Path, exc: sqlite3.DatabaseError, waited: float, *, setting: str = "[store] path"
) -> StoreError:
    """Why SQLite could not open ``path``, and what to do: a file another connection
    keeps locked is busy (try again); one SQLite may not open or write where it is is
    the operator's to fix (permissions, disk); anything else about the file itself —
    not a database, damaged, a format SQLite does not know — is damaged (restore it)."""
    if is_busy(exc):
        waiting = f"; waited {waited:g} s" if waited > 0 else ""
        return StoreBusy(
            f"{path} is locked by another connection ({exc}{waiting}); nothing was "
            "changed — try again once it lets go (a program holding the file in a "
            "transaction, such as an sqlite3 shell, or a runtime recovering it after a crash)"
        )
    if getattr(exc, "sqlite_errorcode", 0) & 0xFF in ENVIRONMENT:
        return StoreError(
            f"cannot open {path} ({exc}); nothing was changed — check that this user may "
            "read and write the file and its directory, and that the disk is there and "
            "not full"
        )
    return damaged(path, str(exc), setting=setting)


def use_wal(conn: sqlite3.Connection, path: Path, *, wait_seconds: float = 10.0) -> None:
    """Switch a toolang store to WAL (persistent; done only once the file is known ours).

    Switching needs the file to itself for a moment, and SQLite does not wait for that:
    when several processes open a new store at once, all but one find it locked. They
    try again until ``wait_seconds`` have passed, and stop as soon as one of them has
    switched it.

    :raises StoreBusy: the file stayed locked for ``wait_seconds``.
    :raises StoreCorrupt: the switch failed for another reason.
    """
    deadline = time.monotonic() + wait_seconds
    pause = 0.001
    while True:
        try:
            if _journal_mode(conn, "PRAGMA journal_mode") == "wal":
                return
            if _journal_mode(conn, "PRAGMA journal_mode = WAL") == "wal":
                return
            problem = "SQLite kept the old journal mode"
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise StoreCorrupt(f"{path}: cannot switch to WAL mode ({exc})") from None
            problem = str(exc)
        except sqlite3.DatabaseError as exc:
            raise StoreCorrupt(f"{path}: cannot switch to WAL mode ({exc})") from None
        if time.monotonic() >= deadline:
            raise StoreBusy(
                f"{path}: could not switch the new store to WAL mode for {wait_seconds:g} s "
                f"({problem}); another process keeps it locked — try again"
            )
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _journal_mode(conn: sqlite3.Connection, sql: str) -> str:
    row = conn.execute(sql).fetchall()
    return str(row[0][0]).lower() if row else ""


def prepare_schema(conn: sqlite3.Connection, path: Path, *, migrate: bool) -> None:
    """Refuse a newer or foreign schema; apply pending migrations when ``migrate``.

    Migrating runs inside one ``BEGIN IMMEDIATE`` transaction (sqlite-utils nests each
    step in a savepoint), so processes opening a new file at the same moment wait for
    each other instead of failing, and the last one finds nothing left to do.

    :raises StoreSchemaTooNew: the store has migrations this toolang does not know.
    :raises StoreNeedsMigration: read-only and migrations are pending.
    :raises StoreCorrupt: the database holds tables but is not a toolang store, or fails
        while being read.
    """
    migrate_file(conn, path, migrations, pending=lambda: _pending(conn, path), migrate=migrate)


def _pending(conn: sqlite3.Connection, path: Path) -> list[str]:
    applied, tables = applied_and_tables(conn, path, migrations)
    pending = pending_migrations(
        known_names(), applied, where=str(path), migration_set=MIGRATION_SET, upgrade="toolang-core"
    )
    if not applied and tables and not _only_migration_sets(Database(conn), tables):
        raise StoreCorrupt(
            f"{path} is an SQLite database but not a toolang store (it has tables "
            f"{', '.join(sorted(tables)[:5])}); it was left untouched"
        )
    return pending


def _only_migration_sets(db: Database, tables: list[str]) -> bool:
    """Whether a file without the store's migrations is still safe to make a store of.

    Plugins may keep their tables in the store's file (``open_plugin_database`` on the
    store path), possibly before the store first opens it: such a file records those
    tables' migration sets in ``_sqlite_migrations``. A file with tables and no record
    of any set belongs to some other application and is never taken over.
    """
    if "_sqlite_migrations" not in tables:
        return False
    if tables == ["_sqlite_migrations"]:
        return True
    recorded: int = db.execute("SELECT count(*) FROM _sqlite_migrations").fetchone()[0]
    return recorded > 0
