"""The PostgreSQL store's checked-in schema snapshot is what its migrations build."""

from __future__ import annotations

import psycopg

from toolang_core.store.backend import stale_snapshot
from toolang_store_postgres.snapshot import REFRESH, SNAPSHOT, render_schema


def test_the_checked_in_snapshot_is_what_the_migrations_build(toolang_pg_dsn):
    problem = stale_snapshot(SNAPSHOT, render_schema(toolang_pg_dsn), REFRESH)
    assert problem is None, problem


def test_rendering_names_every_part_and_leaves_no_schema_behind(toolang_pg_dsn):
    text = render_schema(toolang_pg_dsn)
    for part in (
        "CREATE TABLE turn_requests (",
        "CREATE UNIQUE INDEX turn_one_active_per_thread ON toolang.turn_requests",
        "CREATE OR REPLACE FUNCTION toolang.claim(",
        "CREATE TRIGGER turn_queued AFTER INSERT ON toolang.turn_requests",
    ):
        assert part in text
    assert "m002_threads_have_owners" in text.splitlines()[3]
    with psycopg.connect(toolang_pg_dsn) as conn:
        left = conn.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'toolang_snapshot_%'"
        ).fetchall()
    assert left == []
