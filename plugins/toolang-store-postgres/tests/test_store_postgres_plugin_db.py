"""Plugins' databases as PostgreSQL schemas pass the plugin-database conformance suite,
and a runtime on the PostgreSQL store keeps plugins' tables there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

import toolang_store_postgres
from toolang_core import PluginMigrations, StoreSchemaTooNew
from toolang_core.testing.plugin_db_conformance import PluginDatabaseConformance, things
from toolang_store_postgres.plugin_tables import (
    PostgresPluginDatabases,
    plugin_schema,
    to_pyformat,
)


class TestPostgresPluginDatabases(PluginDatabaseConformance):
    @pytest.fixture
    def toolang_plugin_databases_factory(self, toolang_pg_dsn, toolang_pg_schema):
        return lambda: PostgresPluginDatabases(toolang_pg_dsn, store_schema=toolang_pg_schema)


def test_placeholders_become_psycopg_s_outside_quotes_and_comments():
    assert to_pyformat("SELECT ? WHERE a LIKE '50%?' -- why?\nAND b = ?") == (
        "SELECT %s WHERE a LIKE '50%%?' -- why?\nAND b = %s"
    )
    assert to_pyformat("SELECT 'it''s ?', \"odd?name\", ? % 2") == (
        "SELECT 'it''s ?', \"odd?name\", %s %% 2"
    )


def test_each_plugin_gets_a_schema_named_after_the_store_schema_and_the_plugin():
    assert plugin_schema("toolang", "hook-knowledge-saver") == "toolang__hook_knowledge_saver"
    odd = plugin_schema("toolang", "Vendor.Plugin")
    assert odd.startswith("toolang__vendor_plugin_") and odd != plugin_schema(
        "toolang", "vendor.plugin"
    )
    long = plugin_schema("s" * 40, "p" * 100)
    assert len(long) <= 63


def config_text(dsn: str, schema: str) -> str:
    return (
        f'[store]\nbackend = "postgres"\n\n[plugins.store-postgres]\ndsn = "{dsn}"\n'
        f'schema = "{schema}"\n'
    )


def test_a_postgres_runtime_keeps_plugin_tables_in_the_plugins_schema(
    toolang_runtime, toolang_pg_dsn, toolang_pg_schema
):
    runtime = toolang_runtime(
        config_text(toolang_pg_dsn, toolang_pg_schema),
        plugins={"store-postgres": toolang_store_postgres},
    )
    db = runtime.plugin_database("conformance-plugin", things())
    assert db.dialect.name == "postgres"
    db.execute("INSERT INTO things (name, at) VALUES (?, ?)", ["shared", 1.5])
    runtime.close_plugin_databases()
    schema = f"{toolang_pg_schema}__conformance_plugin"
    with psycopg.connect(toolang_pg_dsn) as conn:
        rows = conn.execute(f'SELECT name FROM "{schema}".things').fetchall()
    assert rows == [("shared",)]
    assert not (runtime.config.home / "plugins" / "conformance-plugin.db").exists()


def test_a_newer_plugin_schema_is_refused_naming_plugin_and_migrations(
    toolang_pg_dsn, toolang_pg_schema
):
    offer = PostgresPluginDatabases(toolang_pg_dsn, store_schema=toolang_pg_schema)
    offer.open("conformance-plugin", things("m002_colour")).close()
    older = PluginMigrations("conformance-plugin")
    older(name="m001_things")(lambda db: None)
    with pytest.raises(StoreSchemaTooNew) as refused:
        offer.open("conformance-plugin", older)
    message = str(refused.value)
    assert "plugin 'conformance-plugin'" in message
    assert "m002_colour" in message and "'m001_things'" in message


def test_two_processes_opening_one_plugin_database_together_migrate_it_once(
    toolang_pg_dsn, toolang_pg_schema
):
    script = Path(__file__).with_name("plugin_db_race.py")
    processes = [
        subprocess.Popen(
            [sys.executable, str(script), toolang_pg_dsn, toolang_pg_schema],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    for process in processes:
        assert process.stdout.readline().strip() == "ready"
    for process in processes:  # both start opening at once
        process.stdin.write("go\n")
        process.stdin.flush()
    outputs = [process.communicate(timeout=120) for process in processes]
    for process, (out, err) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, err
        assert out.strip() == "opened 1"
    with psycopg.connect(toolang_pg_dsn) as conn:
        applied = conn.execute(
            f'SELECT pid, saw_waiter FROM "{toolang_pg_schema}__race_plugin".applied'
        ).fetchall()
        ledger = conn.execute(
            f'SELECT name FROM "{toolang_pg_schema}__race_plugin".toolang_migrations'
        ).fetchall()
    assert len(applied) == 1  # migrated once ...
    assert applied[0][0] in {p.pid for p in processes}
    assert applied[0][1] is True  # ... while the other process waited for it
    assert ledger == [("m001_applied",)]


def test_a_nul_in_a_text_is_written_out_and_texts_still_fill_typed_columns(
    toolang_pg_dsn, toolang_pg_schema
):
    """PostgreSQL's ``text`` cannot hold a NUL: psycopg refused the statement (a
    learning-observer or knowledge-saver batch holding a tool's binary output was
    lost). It is written out as ``\\x00``, as every store keeps text; a text given for
    a ``jsonb``, ``timestamptz`` or ``bigint`` column is still read as one."""
    migrations = PluginMigrations("nul-plugin")

    @migrations(name="m001_rows")
    def _(db):
        db.execute("CREATE TABLE rows (name TEXT NOT NULL, doc jsonb, at timestamptz, n bigint)")

    offer = PostgresPluginDatabases(toolang_pg_dsn, store_schema=toolang_pg_schema)
    db = offer.open("nul-plugin", migrations)
    try:
        db.execute(
            "INSERT INTO rows (name, doc, at, n) VALUES (?, ?, ?, ?)",
            ["PK\x00\x00", '{"a": 1}', "2026-01-02T03:04:05+00:00", "42"],
        )
        db.executemany("INSERT INTO rows (name) VALUES (?)", [["b\x00"], ["plain"]])
        rows = db.execute("SELECT name, doc, n FROM rows ORDER BY name").fetchall()
        assert rows == [
            ("PK\\x00\\x00", {"a": 1}, 42),
            ("b\\x00", None, None),
            ("plain", None, None),
        ]
        assert db.execute("SELECT count(*) FROM rows WHERE at IS NOT NULL").fetchone() == (1,)
    finally:
        db.close()


def test_a_plugins_statements_are_planned_for_their_values(toolang_pg_dsn, toolang_pg_schema):
    """psycopg prepares a statement a session runs five times, and PostgreSQL may then
    plan it once for any values: a plugin's sessions plan each run for its values
    (``plan_cache_mode``), in a transaction or not, with the DSN's own options kept."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    own = str(conninfo_to_dict(toolang_pg_dsn).get("options") or "")
    dsn = make_conninfo(toolang_pg_dsn, options=f"{own} -c statement_timeout=12345".strip())
    migrations = PluginMigrations("plans-plugin")

    @migrations(name="m001_none")
    def _(db):
        db.execute("CREATE TABLE nothing (n bigint)")

    db = PostgresPluginDatabases(dsn, store_schema=toolang_pg_schema).open(
        "plans-plugin", migrations
    )
    try:
        for _ in range(7):  # past psycopg's prepare threshold
            assert db.execute("SHOW plan_cache_mode").fetchone() == ("force_custom_plan",)
        with db.transaction():
            assert db.execute("SHOW plan_cache_mode").fetchone() == ("force_custom_plan",)
        assert db.execute("SHOW statement_timeout").fetchone() == ("12345ms",)
    finally:
        db.close()
