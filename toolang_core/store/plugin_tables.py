"""Plugins' own tables on the store's backend: the contract.

A plugin declares its tables once, as an ordered set of named migrations
(:class:`PluginMigrations`), and asks its runtime for its database::

    MIGRATIONS = PluginMigrations("hook-knowledge-saver")

    @MIGRATIONS()
    def m001_knowledge(db: PluginDatabase) -> None:
        db.execute(f"CREATE TABLE knowledge (id {db.dialect.id_column}, ...)")

    db = runtime.plugin_database("hook-knowledge-saver", MIGRATIONS)

The runtime opens it on the backend the execution store uses: an SQLite file
(``<home>/plugins/<plugin>.db``) by default, or whatever the store's plugin offers
through ``toolang_register_plugin_databases`` (toolang-store-postgres: a PostgreSQL
schema per plugin on the store's server). Either way opening it applies the set's
pending migrations under the guarded procedure every schema of toolang uses
(:func:`toolang_core.store.backend.migrate_guarded`): a database written by a newer
version of the plugin is refused untouched, read-only opens never migrate, processes
opening it together migrate once.

SQL is written with ``?`` placeholders on every backend. What differs between
backends (full-text search, aggregates, upserts on old SQLite) is the plugin's to keep
behind small per-backend modules chosen by ``db.dialect.name``.

**Reading another plugin's tables.** Plugins never import each other; a plugin whose
README documents some of its tables makes them a public, read-only contract. Another
plugin reads them with ``runtime.read_plugin_database(owner_plugin)``: the owner's
database on the same backend, read only (never created, never migrated; ``None`` until
the owner has created it). Its tables are what the owner documents, nothing more.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Final, Protocol, TypeVar

import attrs

MIGRATION_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}")


@attrs.frozen
class Dialect:
    """What differs in the SQL of one backend, for migrations written once.

    ``name`` chooses a plugin's per-backend module (``"sqlite"``; ``"postgres"`` from
    toolang-store-postgres); the other fields are column types to splice into
    ``CREATE TABLE``.
    """

    name: str
    id_column: str
    """An auto-numbered 64-bit integer primary key (``INSERT … RETURNING id`` reads it)."""
    float_type: str
    """A 64-bit float (a unix time, a duration)."""
    bytes_type: str


SQLITE: Final = Dialect(
    name="sqlite", id_column="INTEGER PRIMARY KEY", float_type="REAL", bytes_type="BLOB"
)


class Rows(Protocol):
    """What :meth:`PluginDatabase.execute` returns: the statement's rows (tuples) and
    how many rows it changed."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class PluginDatabase(Protocol):
    """One plugin's tables on one backend (``runtime.plugin_database``).

    Safe to share between threads. A statement outside :meth:`transaction` commits on
    its own.
    """

    @property
    def plugin(self) -> str:
        """Whose database this is (the file or schema is named after it)."""
        ...

    @property
    def dialect(self) -> Dialect:
        """The backend's SQL: pick per-backend SQL by ``dialect.name``."""
        ...

    @property
    def where(self) -> str:
        """The database for messages (a path, or a server with its password masked)."""
        ...

    @property
    def read_only(self) -> bool: ...

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Rows:
        """Run one statement with ``?`` placeholders; its rows are read at once on a
        server backend (keep result sets small: ``LIMIT``)."""
        ...

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run one statement once per parameter row."""
        ...

    def transaction(self) -> AbstractContextManager[None]:
        """A block whose statements commit together (in this thread), or roll back
        together when it raises. Blocks nest."""
        ...

    def close(self) -> None:
        """Release the connection(s); the runtime opens it again on next use."""
        ...


Migration = Callable[[PluginDatabase], None]
M = TypeVar("M", bound=Migration)


class PluginMigrations:
    """A plugin's tables, as an ordered set of named migrations (append, never edit).

    ``name`` names the set in each database's ledger (use the plugin's name). Use an
    instance as a decorator factory, like ``sqlite_utils.Migrations``::

        @MIGRATIONS()
        def m001_things(db: PluginDatabase) -> None: ...

    A migration gets the database inside the transaction that records it; it writes
    its DDL for ``db.dialect`` (one function for every backend).
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._steps: list[tuple[str, Migration]] = []

    def __call__(self, *, name: str | None = None) -> Callable[[M], M]:
        def add(fn: M) -> M:
            step = name or fn.__name__
            if not MIGRATION_NAME.fullmatch(step):
                raise ValueError(
                    f"migration {step!r} of set {self.name!r}: expected a name of letters, "
                    "digits and '_' (e.g. m001_tables)"
                )
            if step in self.names:
                raise ValueError(f"migration {step!r} is already registered in set {self.name!r}")
            self._steps.append((step, fn))
            return fn

        return add

    @property
    def names(self) -> list[str]:
        """Every migration's name, in order."""
        return [step for step, _ in self._steps]

    @property
    def steps(self) -> list[tuple[str, Migration]]:
        """``(name, migration)`` in order."""
        return list(self._steps)

    def step(self, name: str) -> Migration:
        """The migration called ``name``.

        :raises KeyError: the set has none of that name.
        """
        return dict(self._steps)[name]

    def __repr__(self) -> str:
        return f"PluginMigrations({self.name!r}, {self.names})"


class PluginDatabases(Protocol):
    """What a store backend offers plugins (``toolang_register_plugin_databases``):
    their databases, for one runtime. Built once per runtime, closed with it."""

    def open(
        self, plugin_name: str, migrations: PluginMigrations, *, read_only: bool = False
    ) -> PluginDatabase:
        """``plugin_name``'s database, its pending ``migrations`` applied (never when
        ``read_only``).

        :raises StoreMissing: read-only and it does not exist yet.
        :raises StoreSchemaTooNew: it has migrations of the set this code does not know.
        :raises StoreNeedsMigration: read-only and migrations are pending.
        :raises StoreCorrupt: it belongs to something else, or a migration failed.
        :raises StoreUnavailable: its server cannot be reached.
        """
        ...

    def open_other(self, plugin_name: str) -> PluginDatabase:
        """``plugin_name``'s database as it is, read only, for another plugin reading the
        tables ``plugin_name`` documents: no migration is applied or checked (the reader
        does not know the owner's set), and nothing can be written through it.

        :raises StoreMissing: the owner has not created its database yet.
        :raises StoreCorrupt: it is not a database.
        :raises StoreBusy: another connection keeps its file locked.
        :raises StoreUnavailable: its server cannot be reached.
        """
        ...

    def close(self) -> None:
        """Release what the offer holds (each database is closed by the runtime)."""
        ...


PluginDatabasesFactory = Callable[[Any], PluginDatabases]
"""What ``toolang_register_plugin_databases`` registers: ``factory(context)`` with the
store plugin's :class:`~toolang_core.PluginContext` (its settings)."""
