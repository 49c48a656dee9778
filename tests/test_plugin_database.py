"""Plugins' own SQLite databases: migrations, and the same guards as the store."""

from __future__ import annotations

import sqlite3

import pytest
from sqlite_utils import Migrations

from toolang_core import (
    StoreCorrupt,
    StoreMissing,
    StoreNeedsMigration,
    StoreSchemaTooNew,
    open_plugin_database,
)
from toolang_core.config import ToolangConfig
from toolang_core.runtime import Runtime


def migrations_v1() -> Migrations:
    m = Migrations("demo-plugin")

    @m()
    def m001_notes(db):
        db["notes"].create({"id": int, "text": str}, pk="id")

    return m


def migrations_v2() -> Migrations:
    m = migrations_v1()

    @m()
    def m002_index(db):
        db["notes"].create_index(["text"])

    return m


def test_first_open_creates_the_tables_in_wal_mode(tmp_path):
    db = open_plugin_database(tmp_path / "p.db", migrations_v1())
    assert "notes" in db.table_names()
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_newer_version_applies_only_its_new_migrations(tmp_path):
    path = tmp_path / "p.db"
    db = open_plugin_database(path, migrations_v1())
    db["notes"].insert({"id": 1, "text": "kept"})
    db.conn.close()
    db = open_plugin_database(path, migrations_v2())
    assert [r["text"] for r in db["notes"].rows] == ["kept"]
    assert db["notes"].indexes


def test_a_file_written_by_a_newer_version_is_refused_untouched(tmp_path):
    path = tmp_path / "p.db"
    open_plugin_database(path, migrations_v2()).conn.close()
    before = path.read_bytes()
    with pytest.raises(StoreSchemaTooNew, match=r"m002_index.*upgrade the plugin"):
        open_plugin_database(path, migrations_v1())
    assert path.read_bytes() == before


def test_a_failing_migration_is_named_and_rolled_back_with_the_ones_before_it(tmp_path):
    path = tmp_path / "p.db"
    open_plugin_database(path, migrations_v1()).conn.close()
    m = migrations_v2()

    @m()
    def m003_broken(db):
        db.execute("CREATE TABLE tags (name)")
        db.execute("INSERT INTO no_such_table VALUES (1)")

    with pytest.raises(StoreCorrupt, match=r"migration 'm003_broken' of set 'demo-plugin'"):
        open_plugin_database(path, m)
    db = open_plugin_database(path, migrations_v1())
    assert "tags" not in db.table_names()
    assert not db["notes"].indexes  # m002_index, applied in the same transaction, too


def test_a_file_that_is_not_a_database_is_reported_and_kept(tmp_path):
    path = tmp_path / "p.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreCorrupt, match="left untouched"):
        open_plugin_database(path, migrations_v1())
    assert path.read_bytes() == b"this is not sqlite" * 100


def test_a_foreign_database_is_not_taken_over(tmp_path):
    path = tmp_path / "p.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE mine (x)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreCorrupt, match=r"not one of 'demo-plugin'.*mine"):
        open_plugin_database(path, migrations_v1())


def test_read_only_opens_never_create_or_migrate(tmp_path):
    path = tmp_path / "p.db"
    with pytest.raises(StoreMissing, match="demo-plugin"):
        open_plugin_database(path, migrations_v1(), read_only=True)
    assert not path.exists()
    open_plugin_database(path, migrations_v1()).conn.close()
    with pytest.raises(StoreNeedsMigration, match=r"older schema.*m002_index"):
        open_plugin_database(path, migrations_v2(), read_only=True)
    empty = tmp_path / "empty.db"
    empty.touch()
    with pytest.raises(StoreNeedsMigration, match="no 'demo-plugin' schema yet"):
        open_plugin_database(empty, migrations_v1(), read_only=True)


def test_the_runtime_keeps_one_database_per_plugin_under_home(tmp_path):
    runtime = Runtime.with_plugins(ToolangConfig(base_dir=tmp_path, home=tmp_path / "h"), env={})
    db = runtime.plugin_database("demo", migrations_v1())
    assert runtime.plugin_database("demo", migrations_v1()) is db
    assert (tmp_path / "h" / "plugins" / "demo.db").exists()
    with pytest.raises(ValueError, match="cannot name a database file"):
        runtime.plugin_database("../escape", migrations_v1())
    runtime.close_plugin_databases()


def test_every_factory_context_offers_the_runtimes_plugin_databases(tmp_path):
    """A component without a runtime (a model provider, an agent source) opens its
    tables on the store's backend through its context's ``plugin_databases`` service."""
    from toolang_core import PluginMigrations

    runtime = Runtime.with_plugins(ToolangConfig(base_dir=tmp_path, home=tmp_path / "h"), env={})
    tables = PluginMigrations("demo")

    @tables()
    def m001_notes(db):
        db.execute("CREATE TABLE notes (text TEXT NOT NULL)")

    offer = runtime.plugin_context("demo").service("plugin_databases")
    db = offer.open("demo", tables)
    try:
        db.execute("INSERT INTO notes (text) VALUES (?)", ["kept"])
    finally:
        db.close()
    assert runtime.plugin_database("demo", tables).execute("SELECT text FROM notes").fetchall() == [
        ("kept",)
    ]
    # a factory handed an offer of its own (the memory plugin's) keeps it
    assert (
        runtime.plugin_context("demo", plugin_databases=offer).service("plugin_databases") is offer
    )
    runtime.close_plugin_databases()
