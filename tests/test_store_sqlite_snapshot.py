"""The SQLite store's checked-in schema snapshot is what its migrations build."""

from __future__ import annotations

from toolang_core.store.snapshot import snapshot_main, stale_snapshot
from toolang_core.store.sqlite.snapshot import REFRESH, SNAPSHOT, render_schema


def test_the_checked_in_snapshot_is_what_the_migrations_build():
    problem = stale_snapshot(SNAPSHOT, render_schema(), REFRESH)
    assert problem is None, problem


def test_the_snapshot_holds_every_table_index_and_trigger_and_names_the_migrations():
    text = render_schema()
    for name in ("turn_requests", "turn_steps", "threads", "turn_one_active_per_thread"):
        assert name in text
    assert "CREATE TRIGGER turn_queued" in text
    assert "m007_threads_have_owners" in text.splitlines()[3]


def test_a_stale_snapshot_is_reported_as_a_diff_with_the_command_to_refresh_it(tmp_path):
    path = tmp_path / "schema.sql"
    path.write_text(render_schema().replace("turn_parent", "turn_mother"))
    problem = stale_snapshot(path, render_schema(), REFRESH)
    assert problem is not None
    assert REFRESH in problem
    assert "-CREATE INDEX turn_mother ON turn_requests (parent)" in problem
    assert "+CREATE INDEX turn_parent ON turn_requests (parent)" in problem


def test_the_command_writes_then_checks_a_snapshot(tmp_path, capsys):
    path = tmp_path / "schema.sql"
    assert snapshot_main([], render=render_schema, path=path, refresh=REFRESH) == 1
    assert "is stale" in capsys.readouterr().err
    assert snapshot_main(["--write"], render=render_schema, path=path, refresh=REFRESH) == 0
    assert path.read_text() == render_schema()
    assert snapshot_main([], render=render_schema, path=path, refresh=REFRESH) == 0
