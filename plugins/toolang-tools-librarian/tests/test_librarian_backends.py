"""The librarian on both store backends: on SQLite as two runtimes of one home, on
PostgreSQL as two nodes (two homes, one server). Whatever one runtime saved, indexed,
or another plugin kept, the other runtime's tools find — read through the
plugin-database API, the other plugins' tables read only."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import toolang_store_postgres
import toolang_tools_librarian as plugin
from toolang_core import PluginDatabase, PluginMigrations, Runtime
from toolang_core.testing.models import text, tool_call
from toolang_core.testing.pytest_plugin import ToolangHome
from toolang_core.testing.runtimes import run_turn, tool_results

# The KnowledgeSaver's and LearningObserver's documented tables, declared as those
# plugins declare them (their sets' names, their columns): they are not installed here.
KNOWLEDGE = PluginMigrations("hook-knowledge-saver")
OUTCOMES = PluginMigrations("hook-learning-observer")


@KNOWLEDGE()
def m001_knowledge(db: PluginDatabase) -> None:
    db.execute(
        f"CREATE TABLE knowledge (id {db.dialect.id_column}, agent TEXT NOT NULL, "
        "tool TEXT NOT NULL, params TEXT NOT NULL, content TEXT NOT NULL, "
        "content_chars INTEGER NOT NULL, content_hash TEXT NOT NULL, thread_id TEXT NOT NULL, "
        f"turn_id TEXT NOT NULL, call_id TEXT NOT NULL, created_at {db.dialect.float_type} "
        f"NOT NULL, last_seen_at {db.dialect.float_type} NOT NULL, "
        "times_seen INTEGER NOT NULL DEFAULT 1)"
    )


@OUTCOMES()
def m001_tool_outcomes(db: PluginDatabase) -> None:
    real = db.dialect.float_type
    db.execute(
        f"CREATE TABLE tool_outcomes (id {db.dialect.id_column}, at {real} NOT NULL, "
        "agent TEXT NOT NULL, tool TEXT NOT NULL, ok INTEGER NOT NULL, error_type TEXT, "
        f"error TEXT, duration_ms {real} NOT NULL, turn_id TEXT NOT NULL, "
        "thread_id TEXT NOT NULL, call_id TEXT NOT NULL)"
    )


@pytest.fixture(params=["sqlite", "postgres"])
def nodes(request, tmp_path, toolang_scripted_model):
    """``node(name, steps, owner=…)``: one turn on runtime ``name`` ("a" or "b") whose
    model plays ``steps``; returns ``(runtime, turn id, tool results)``."""
    postgres = request.param == "postgres"
    store = request.getfixturevalue("toolang_pg_config") if postgres else ""
    docs = tmp_path / "docs"
    (docs / "guide").mkdir(parents=True)
    (docs / "guide" / "deploy.md").write_text(
        "# Deploy\n\nRun make release.\n\n## Rollback\n\nTo roll back, run make rollback\n"
    )
    opened: list[Runtime] = []

    def node(name, steps, *, owner="alice"):
        home = ToolangHome(tmp_path / (f"node-{name}" if postgres else "home"))
        home.path.mkdir(exist_ok=True)
        key = tmp_path / "node-a" / ".toolang" / "approval.key"
        if postgres and name != "a" and key.exists():  # every node of a store has its key
            (home.path / ".toolang").mkdir(exist_ok=True)
            shutil.copy(key, home.path / ".toolang" / "approval.key")
        home.write_config(
            f'{store}\n[models]\ndefault = "scripted"\n'
            f'[plugins.tools-librarian]\nrag_root = "{docs}"\nchunk_lines = 4\n'
        )
        env = {"HOME": str(home.path)}
        model = toolang_scripted_model([*steps, text("done")])
        plugins = {"tools-librarian": plugin, "scripted": model.plugin()}
        if postgres:
            plugins["store-postgres"] = toolang_store_postgres
        runtime = Runtime.with_plugins(home.load(env), plugins.items(), env=env)
        opened.append(runtime)
        turn_id = run_turn(runtime, owner=owner)
        return runtime, turn_id, tool_results(runtime, turn_id)

    node.postgres = postgres
    yield node
    for runtime in opened:
        runtime.close_plugin_databases()


def test_what_one_runtime_keeps_the_other_runtimes_tools_find(nodes):
    # Before the other plugins have created their tables, search and statistics are empty.
    a, alice_turn, results = nodes(
        "a",
        [
            tool_call("search_knowledge", {"query": "staging"}),
            tool_call("learning_stats", {}),
            tool_call("save_knowledge", {"content": "Invoices close on the 3rd.", "topic": "bill"}),
            tool_call("rag_index", {"directory": "guide", "index": "guide"}),
        ],
    )
    empty, no_stats, saved, indexed = (r["output"] for r in results)
    assert (empty, no_stats, saved["saved"]) == ([], [], True)
    assert (indexed["files"], indexed["chunks"]) == (1, 2)
    own = a.plugin_database(plugin.NAME, plugin_migrations())
    assert own.dialect.name == ("postgres" if nodes.postgres else "sqlite")
    if nodes.postgres:  # nothing of the librarian's in node A's home
        assert not (Path(a.config.home) / "plugins" / "tools-librarian.db").exists()

    # The KnowledgeSaver and the LearningObserver keep rows on node A.
    kept = a.plugin_database("hook-knowledge-saver", KNOWLEDGE)
    kept.execute(
        "INSERT INTO knowledge (agent, tool, params, content, content_chars, content_hash, "
        "thread_id, turn_id, call_id, created_at, last_seen_at) "
        "VALUES ('operator', 'fs_read', '{}', ?, 10, 'h', 't', ?, 'c', 1, 1)",
        ["The staging database listens on port 6543.", alice_turn],
    )
    observed = a.plugin_database("hook-learning-observer", OUTCOMES)
    observed.executemany(
        "INSERT INTO tool_outcomes (at, agent, tool, ok, error_type, error, duration_ms, "
        "turn_id, thread_id, call_id) VALUES (?, 'operator', ?, ?, ?, ?, 5.0, ?, 't', 'c')",
        [
            (1.0, "fs_write", 0, "PermissionError", "denied: out.txt", alice_turn),
            (2.0, "fs_write", 1, None, None, alice_turn),
        ],
    )

    # Node B's tools see all of it.
    _, _, results = nodes(
        "b",
        [
            tool_call("search_knowledge", {"query": "staging invoices"}),
            tool_call("learning_failures", {}),
            tool_call("rag_query", {"query": "how do I roll back", "index": "guide"}),
            tool_call("save_knowledge", {"content": "Invoices close on the 3rd.", "topic": "bill"}),
        ],
    )
    search, failures, rollback, again = (r["output"] for r in results)
    assert sorted((h["source"], h["content"]) for h in search) == [
        ("kept", "The staging database listens on port 6543."),
        ("saved", "Invoices close on the 3rd."),
    ]
    assert [f["error"] for f in failures] == ["PermissionError: denied: out.txt"]
    assert (rollback[0]["path"], rollback[0]["line"]) == ("guide/deploy.md", 5)
    assert rollback[0]["score"] >= 0  # higher is better on both backends
    assert again == {"id": saved["id"], "saved": False, "reason": "already saved"}

    # Another owner on node B sees none of alice's.
    _, _, results = nodes(
        "b",
        [
            tool_call("search_knowledge", {"query": "staging invoices"}),
            tool_call("rag_query", {"query": "roll back", "index": "guide"}),
        ],
        owner="bob",
    )
    assert results[0]["output"] == []
    assert results[1]["ok"] is False
    assert "no index 'guide'" in results[1]["error"]

    # The other plugins' tables are read only to the librarian.
    reader = a.read_plugin_database("hook-knowledge-saver")
    assert reader is not None
    assert reader.read_only
    with pytest.raises(Exception, match=r"(?i)read"):  # each backend has its own error
        reader.execute("DELETE FROM knowledge")
    assert kept.execute("SELECT count(*) FROM knowledge").fetchone() == (1,)


def plugin_migrations() -> PluginMigrations:
    from toolang_tools_librarian.schema import MIGRATIONS

    return MIGRATIONS
