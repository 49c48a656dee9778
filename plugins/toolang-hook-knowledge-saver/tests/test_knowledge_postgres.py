"""On a PostgreSQL store the kept knowledge lives in PostgreSQL: every node keeps into
and reads from the same table (the plugin's schema beside the store's)."""

from __future__ import annotations

import json

import psycopg
import pytest
from knowledge_helpers import LONG, make_runtime, save, serve

import toolang_hook_knowledge_saver as plugin
import toolang_store_postgres
from toolang_core import Runtime, ToolResult
from toolang_core.testing.models import text, tool_call
from toolang_core.testing.pytest_plugin import ToolangHome
from toolang_core.testing.runtimes import plugin_runtime
from toolang_hook_knowledge_saver.schema import MIGRATIONS
from toolang_hook_knowledge_saver.store import list_knowledge

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
        runtime, plugin.NAME, plugin, plugins=PG, config=toolang_pg_config
    )


def test_a_turn_on_one_node_keeps_knowledge_every_node_reads(  # noqa: PLR0917
    toolang_runtime, toolang_scripted_model, toolang_pg_config, toolang_pg_schema,
    toolang_pg_dsn, node_b,
):  # fmt: skip
    model = toolang_scripted_model(
        [tool_call("read_doc", {"name": "runbook"}, call_id="c1"), text("read it")]
    )
    a = make_runtime(
        toolang_runtime, "flush_seconds = 3600", model=model, config=toolang_pg_config, plugins=PG
    )
    (turn_id,) = serve(a, "read the runbook")  # written at shutdown
    assert not (a.config.home / "plugins" / f"{plugin.NAME}.db").exists()
    with psycopg.connect(toolang_pg_dsn) as conn:
        rows = conn.execute(
            "SELECT agent, tool, turn_id, times_seen "
            f'FROM "{toolang_pg_schema}__hook_knowledge_saver".knowledge'
        ).fetchall()
    assert rows == [("assistant", "read_doc", turn_id, 1)]

    b = node_b()
    reader = b.plugin_database(plugin.NAME, MIGRATIONS, read_only=True)
    (entry,) = list_knowledge(reader, agent=None, limit=5)
    assert (entry.content, entry.turn_id) == (f"runbook: {LONG}", turn_id)

    # The same result seen on the other node is the same entry, seen twice.
    save(b, "read_doc", ToolResult(ok=True, output=f"runbook: {LONG}"), params={"name": "runbook"})
    (entry,) = list_knowledge(a.plugin_database(plugin.NAME, MIGRATIONS), agent=None, limit=5)
    assert entry.times_seen == 2


def test_toolang_knowledge_list_reads_postgresql(
    toolang_runtime, toolang_cli, toolang_home, toolang_pg_config
):
    runtime = make_runtime(toolang_runtime, config=toolang_pg_config, plugins=PG)
    save(runtime, "read_doc", ToolResult(ok=True, output=f"kept {LONG}"))
    done = toolang_cli(
        "knowledge", "list", "--json",
        env={"TOOLANG_LOAD_PLUGINS": "hook-knowledge-saver,store-postgres"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert [e["content"] for e in json.loads(done.stdout)] == [f"kept {LONG}"]
