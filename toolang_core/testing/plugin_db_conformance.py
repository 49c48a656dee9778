"""The plugin-database conformance suite: what ``PluginDatabases`` promise, as tests.

A backend that offers plugins' databases (``toolang_register_plugin_databases``)
subclasses :class:`PluginDatabaseConformance` and provides one fixture,
``toolang_plugin_databases_factory``: a callable that builds a new
:class:`~toolang_core.PluginDatabases` over one fresh backing place for the test (every
call the same place, as another process or node would see it)::

    class TestMyBackend(PluginDatabaseConformance):
        @pytest.fixture
        def toolang_plugin_databases_factory(self, tmp_path):
            return lambda: MyPluginDatabases(tmp_path)

It checks the migration guard (applied once, later migrations applied on the next
open, a newer database refused untouched, a failed migration rolled back whole,
read-only opens never creating or migrating), another plugin's read-only view
(``open_other``), the SQL every backend speaks (``?``
placeholders, ``dialect.id_column`` with ``RETURNING``, ``dialect.float_type``,
``rowcount``, ``executemany``), transactions (commit, rollback, nesting, threads) and
that two plugins' tables never meet.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from toolang_core.store.errors import (
    StoreCorrupt,
    StoreMissing,
    StoreNeedsMigration,
    StoreSchemaTooNew,
)
from toolang_core.store.plugin_tables import PluginDatabase, PluginDatabases, PluginMigrations

PLUGIN = "conformance-plugin"
T0 = 1_800_000_000.123456


def things(*extra: str, fail: str | None = None) -> PluginMigrations:
    """The suite's set: ``m001_things`` (a table and a row counting its own runs), then
    the ``extra`` migrations (each adds a column), the one named ``fail`` raising."""
    migrations = PluginMigrations(PLUGIN)

    @migrations(name="m001_things")
    def _(db: PluginDatabase) -> None:
        db.execute(
            f"CREATE TABLE things (id {db.dialect.id_column}, name TEXT NOT NULL, "
            f"at {db.dialect.float_type} NOT NULL, n INTEGER NOT NULL DEFAULT 0)"
        )
        db.execute("CREATE TABLE runs (migration TEXT NOT NULL)")
        db.execute("INSERT INTO runs (migration) VALUES (?)", ["m001_things"])

    for name in extra:

        def add(db: PluginDatabase, name: str = name) -> None:
            db.execute(f"ALTER TABLE things ADD COLUMN {name} TEXT")
            db.execute("INSERT INTO runs (migration) VALUES (?)", [name])
            if name == fail:
                db.execute("SELECT * FROM no_such_table_at_all")

        migrations(name=name)(add)
    return migrations


class PluginDatabaseConformance:
    """Subclass and provide ``toolang_plugin_databases_factory`` (module docstring)."""

    @pytest.fixture
    def offer(
        self, toolang_plugin_databases_factory: Callable[[], PluginDatabases]
    ) -> Iterator[Callable[[], PluginDatabases]]:
        made: list[PluginDatabases] = []
        opened: list[PluginDatabase] = []

        def make() -> PluginDatabases:
            offer = toolang_plugin_databases_factory()
            made.append(offer)
            return _Tracking(offer, opened)

        yield make
        for db in opened:
            db.close()
        for offer in made:
            offer.close()

    @pytest.fixture
    def db(self, offer: Callable[[], PluginDatabases]) -> PluginDatabase:
        return offer().open(PLUGIN, things())

    # -- the migration guard -------------------------------------------------------

    def test_opening_applies_the_migrations_once(self, offer: Any) -> None:
        offer().open(PLUGIN, things())
        again = offer().open(PLUGIN, things())
        assert again.execute("SELECT migration FROM runs").fetchall() == [("m001_things",)]
        assert again.plugin == PLUGIN

    def test_a_later_migration_is_applied_on_the_next_open(self, offer: Any) -> None:
        offer().open(PLUGIN, things())
        db = offer().open(PLUGIN, things("m002_colour"))
        db.execute("INSERT INTO things (name, at, m002_colour) VALUES (?, ?, ?)", ["a", T0, "red"])
        assert db.execute("SELECT migration FROM runs ORDER BY migration").fetchall() == [
            ("m001_things",),
            ("m002_colour",),
        ]

    def test_a_database_written_by_a_newer_plugin_is_refused_untouched(self, offer: Any) -> None:
        offer().open(PLUGIN, things("m002_colour"))
        with pytest.raises(StoreSchemaTooNew) as refused:
            offer().open(PLUGIN, things())
        message = str(refused.value)
        assert PLUGIN in message
        assert "m002_colour" in message  # what it has
        assert "m001_things" in message  # what this code knows
        db = offer().open(PLUGIN, things("m002_colour"))
        assert len(db.execute("SELECT migration FROM runs").fetchall()) == 2

    def test_a_failing_migration_is_rolled_back_whole_and_named(self, offer: Any) -> None:
        offer().open(PLUGIN, things())
        with pytest.raises(StoreCorrupt, match="m003_broken"):
            offer().open(PLUGIN, things("m002_colour", "m003_broken", fail="m003_broken"))
        db = offer().open(PLUGIN, things("m002_colour"))  # m002 was rolled back with m003
        assert db.execute("SELECT migration FROM runs ORDER BY migration").fetchall() == [
            ("m001_things",),
            ("m002_colour",),
        ]

    def test_a_read_only_open_of_a_missing_database_is_store_missing(self, offer: Any) -> None:
        with pytest.raises(StoreMissing):
            offer().open(PLUGIN, things(), read_only=True)
        with pytest.raises(StoreMissing):  # and it created nothing
            offer().open(PLUGIN, things(), read_only=True)

    def test_a_read_only_open_never_migrates(self, offer: Any) -> None:
        offer().open(PLUGIN, things())
        with pytest.raises(StoreNeedsMigration, match="m002_colour"):
            offer().open(PLUGIN, things("m002_colour"), read_only=True)
        reader = offer().open(PLUGIN, things(), read_only=True)
        assert reader.read_only
        assert reader.execute("SELECT count(*) FROM runs").fetchone() == (1,)

    def test_a_read_only_database_refuses_writes(self, offer: Any) -> None:
        offer().open(PLUGIN, things())
        reader = offer().open(PLUGIN, things(), read_only=True)
        with pytest.raises(Exception):  # noqa: B017,PT011 — each backend has its own error
            reader.execute("INSERT INTO things (name, at) VALUES (?, ?)", ["x", T0])

    def test_another_plugin_reads_the_owners_tables_read_only(self, offer: Any) -> None:
        with pytest.raises(StoreMissing, match=PLUGIN):
            offer().open_other(PLUGIN)  # the owner has not created them yet
        owner = offer().open(PLUGIN, things())
        owner.execute("INSERT INTO things (name, at) VALUES (?, ?)", ["kept", T0])
        reader = offer().open_other(PLUGIN)  # another node's runtime, another plugin
        assert reader.read_only
        assert reader.plugin == PLUGIN
        assert reader.execute("SELECT name, at FROM things").fetchall() == [("kept", T0)]
        owner.execute("INSERT INTO things (name, at) VALUES (?, ?)", ["later", T0])
        assert reader.execute("SELECT count(*) FROM things").fetchone() == (2,)
        with pytest.raises(Exception, match=r"(?i)read"):  # each backend has its own error
            reader.execute("DELETE FROM things")
        assert owner.execute("SELECT count(*) FROM things").fetchone() == (2,)
        # A newer owner is no obstacle: the reader relies on the documented tables only.
        offer().open(PLUGIN, things("m002_colour"))
        assert offer().open_other(PLUGIN).execute("SELECT count(*) FROM things").fetchone() == (2,)

    def test_two_plugins_tables_are_apart(self, offer: Any) -> None:
        one = offer().open(PLUGIN, things())
        other = offer().open("conformance-other", things())
        one.execute("INSERT INTO things (name, at) VALUES (?, ?)", ["mine", T0])
        assert other.execute("SELECT count(*) FROM things").fetchone() == (0,)
        assert other.plugin == "conformance-other"

    # -- the SQL every backend speaks ----------------------------------------------

    def test_ids_count_up_and_come_back_from_returning(self, db: PluginDatabase) -> None:
        ids = [
            db.execute(
                "INSERT INTO things (name, at) VALUES (?, ?) RETURNING id", [f"t{i}", T0]
            ).fetchone()[0]
            for i in range(3)
        ]
        assert ids == sorted(ids)
        assert len(set(ids)) == 3

    def test_values_come_back_as_written(self, db: PluginDatabase) -> None:
        text = '50% off? it\'s "quoted" -- not a comment'
        db.execute("INSERT INTO things (name, at, n) VALUES (?, ?, ?)", [text, T0, 2**30])
        assert db.execute(
            "SELECT name, at, n FROM things WHERE name LIKE '%off?%' AND n > ?", [0]
        ).fetchall() == [(text, T0, 2**30)]

    def test_rowcount_counts_changed_rows(self, db: PluginDatabase) -> None:
        db.executemany(
            "INSERT INTO things (name, at) VALUES (?, ?)", [(f"t{i}", T0 + i) for i in range(5)]
        )
        assert db.execute("UPDATE things SET n = n + 1 WHERE at >= ?", [T0 + 3]).rowcount == 2
        assert db.execute("DELETE FROM things WHERE n = ?", [0]).rowcount == 3
        assert [row[0] for row in db.execute("SELECT name FROM things ORDER BY id")] == [
            "t3",
            "t4",
        ]

    def test_dialect_names_the_backend(self, db: PluginDatabase) -> None:
        assert db.dialect.name
        assert db.where

    # -- transactions --------------------------------------------------------------

    def test_a_transaction_commits_together(self, offer: Any, db: PluginDatabase) -> None:
        with db.transaction():
            db.execute("INSERT INTO things (name, at) VALUES (?, ?)", ["a", T0])
            db.execute("INSERT INTO things (name, at) VALUES (?, ?)", ["b", T0])
        other = offer().open(PLUGIN, things())
        assert other.execute("SELECT count(*) FROM things").fetchone() == (2,)

    def test_a_raising_transaction_leaves_nothing(self, db: PluginDatabase) -> None:
        with pytest.raises(KeyError):
            _insert_then_raise(db, "a")
        assert db.execute("SELECT count(*) FROM things").fetchone() == (0,)

    def test_an_inner_block_rolls_back_alone(self, db: PluginDatabase) -> None:
        with db.transaction():
            db.execute("INSERT INTO things (name, at) VALUES (?, ?)", ["outer", T0])
            with pytest.raises(KeyError):
                _insert_then_raise(db, "inner")
        assert db.execute("SELECT name FROM things").fetchall() == [("outer",)]

    def test_threads_share_one_database(self, db: PluginDatabase) -> None:
        def work(thread: int) -> None:
            for _ in range(20):
                with db.transaction():
                    db.execute("INSERT INTO things (name, at) VALUES (?, ?)", [f"{thread}", T0])
                    db.execute("UPDATE things SET n = n + 1 WHERE name = ?", [f"{thread}"])
            done.append(thread)

        done: list[int] = []
        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(done) == [0, 1, 2, 3]
        assert db.execute("SELECT count(*), sum(n) FROM things").fetchone()[0] == 80


def _insert_then_raise(db: PluginDatabase, name: str) -> None:
    with db.transaction():
        db.execute("INSERT INTO things (name, at) VALUES (?, ?)", [name, T0])
        raise KeyError(name)


class _Tracking:
    """A backend's offer that remembers what it opened, so the suite closes it."""

    def __init__(self, offer: PluginDatabases, opened: list[PluginDatabase]) -> None:
        self._offer = offer
        self._opened = opened

    def open(
        self, plugin_name: str, migrations: PluginMigrations, *, read_only: bool = False
    ) -> PluginDatabase:
        db = self._offer.open(plugin_name, migrations, read_only=read_only)
        self._opened.append(db)
        return db

    def open_other(self, plugin_name: str) -> PluginDatabase:
        db = self._offer.open_other(plugin_name)
        self._opened.append(db)
        return db

    def close(self) -> None:
        self._offer.close()
