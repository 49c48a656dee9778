"""On a PostgreSQL store tool outcomes live in PostgreSQL: what one node recorded, every
node counts (statistics, prompt notes, pruning), through the PostgreSQL SQL of
``sql_postgres``."""

from __future__ import annotations

import json

import pytest
from learning_helpers import Tools, db_path, make_runtime, observe, serve

import toolang_hook_learning_observer as plugin
import toolang_store_postgres
from toolang_core import Runtime
from toolang_core.testing.models import text, tool_call
from toolang_core.testing.pytest_plugin import ToolangHome
from toolang_core.testing.runtimes import plugin_runtime
from toolang_hook_learning_observer.schema import MIGRATIONS
from toolang_hook_learning_observer.stats import StatsFilter, tool_stats

PG = {"store-postgres": toolang_store_postgres}


@pytest.fixture
def node_b(tmp_path, toolang_pg_config):
    """A second runtime with its own home (another machine) on the same store."""
    home = ToolangHome(tmp_path / "node-b")
    home.path.mkdir()
    env = {"HOME": str(home.path)}

    def runtime(config, *, plugins):
        home.write_config(config)
        return Runtime.with_plugins(home.load(env), plugins.items(), env=env)

    return lambda: plugin_runtime(
        runtime, plugin.NAME, plugin, plugins={"tools": Tools(), **PG}, config=toolang_pg_config
    )


def test_outcomes_of_one_node_make_the_notes_and_stats_of_another(
    toolang_runtime, toolang_scripted_model, toolang_pg_config, node_b
):
    paths = ["locked/1", "ok/2", "locked/3", "ok/4", "locked/5"]
    model = toolang_scripted_model(
        [*(tool_call("flaky_write", {"path": p}) for p in paths), text("tried")]
    )
    a = make_runtime(toolang_runtime, model=model, config=toolang_pg_config, plugins=PG)
    serve(a, "write five files")
    assert not db_path(a).exists()

    b = node_b()
    assert plugin.recorder_of(b).note("assistant") == (
        "Recent tool failures: flaky_write failed 3 of its last 5 calls (most recently just "
        "now: PermissionError: [Errno 13] Permission denied: 'locked/5')."
    )
    (stats,) = tool_stats(b.plugin_database(plugin.NAME, MIGRATIONS), StatsFilter())
    assert (stats.agent, stats.tool, stats.calls, stats.failures) == (
        "assistant",
        "flaky_write",
        5,
        3,
    )
    assert stats.last_error == "PermissionError: [Errno 13] Permission denied: 'locked/5'"


def test_outcomes_older_than_keep_days_are_pruned_in_postgresql(toolang_runtime, toolang_pg_config):
    runtime = make_runtime(toolang_runtime, "keep_days = 1", config=toolang_pg_config, plugins=PG)
    recorder = plugin.recorder_of(runtime)
    db = recorder.database()
    with db.transaction():
        db.execute(
            "INSERT INTO tool_outcomes (at, agent, tool, ok, duration_ms, turn_id, thread_id, "
            "call_id) VALUES (?, 'a', 'old', 1, 1.0, 't', 'th', 'c')",
            [runtime.clock() - 3 * 86_400],
        )
    assert recorder.prune() == 1
    observe(runtime, "echo")
    recorder.writer.flush()
    assert [r[0] for r in db.execute("SELECT tool FROM tool_outcomes")] == ["echo"]


def test_toolang_learning_stats_reads_postgresql(toolang_runtime, toolang_cli, toolang_pg_config):
    runtime = make_runtime(toolang_runtime, config=toolang_pg_config, plugins=PG)
    observe(runtime, "echo")
    observe(runtime, "flaky_write", ok=False)
    plugin.recorder_of(runtime).writer.flush()
    done = toolang_cli(
        "learning", "stats", "--json",
        env={"TOOLANG_LOAD_PLUGINS": "hook-learning-observer,store-postgres"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert [(s["tool"], s["calls"], s["failures"]) for s in json.loads(done.stdout)] == [
        ("echo", 1, 0),
        ("flaky_write", 1, 1),
    ]
