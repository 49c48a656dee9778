"""On a PostgreSQL store the librarian reads what the real KnowledgeSaver and
LearningObserver keep there (it read their empty SQLite files before): a fact kept and
failures seen on node A are found by node B's librarian, its own tables are shared too,
and no plugin keeps a file in either node's home."""

from __future__ import annotations

import asyncio
import shutil

import toolang_hook_knowledge_saver
import toolang_hook_learning_observer
import toolang_store_postgres
import toolang_tools_librarian
import toolang_tools_operator
from toolang_core import NewTurnRequest, Runtime, TurnStatus
from toolang_core.testing.models import ScriptedModel, text, tool_call
from toolang_core.testing.pytest_plugin import ToolangHome

FACT = "Runbook: the staging database listens on port 6543, restarted on Sundays at 03:00."


def test_node_bs_librarian_finds_what_node_a_kept_and_saw_fail(tmp_path, toolang_pg_config):
    workspace = tmp_path / "ws"
    (workspace / "owners" / "alice").mkdir(parents=True)
    (workspace / "owners" / "alice" / "runbook.txt").write_text(FACT)

    def node(name: str, steps: list) -> Runtime:
        home = ToolangHome(tmp_path / f"node-{name}")
        (home.path / ".toolang").mkdir(parents=True, exist_ok=True)
        key = tmp_path / "node-a" / ".toolang" / "approval.key"
        if name != "a" and key.exists():  # every node of a store shares its approval key
            shutil.copy(key, home.path / ".toolang" / "approval.key")
        home.write_config(
            f'{toolang_pg_config}\n[models]\ndefault = "scripted"\n'
            f'[plugins.tools-operator]\nworkspace = "{workspace}"\n'
            "[plugins.hook-knowledge-saver]\nflush_seconds = 0\n"
            "[plugins.hook-learning-observer]\nflush_seconds = 0\n"
        )
        env = {"HOME": str(home.path)}
        plugins = {
            "store-postgres": toolang_store_postgres,
            "tools-operator": toolang_tools_operator,
            "tools-librarian": toolang_tools_librarian,
            "hook-knowledge-saver": toolang_hook_knowledge_saver,
            "hook-learning-observer": toolang_hook_learning_observer,
            "scripted": ScriptedModel(steps).plugin(),
        }
        return Runtime.with_plugins(home.load(env), plugins.items(), env=env)

    def turn(runtime: Runtime, words: str) -> list:
        inbox = runtime.open_inbox()
        turn_id = inbox.submit(
            NewTurnRequest(source="chat", thread_id="cli:ops", input=words, owner="alice")
        ).id
        asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
        assert inbox.get(turn_id).status is TurnStatus.COMPLETED
        return [
            s.data["result"]["output"] for s in inbox.store.steps(turn_id) if "result" in s.data
        ]

    a = node(
        "a",
        [
            tool_call("fs_read", {"path": "runbook.txt"}),
            tool_call("fs_read", {"path": "missing.txt"}),
            tool_call("save_knowledge", {"content": "Deploys freeze on Fridays.", "topic": "ops"}),
            text("read what I could"),
        ],
    )
    turn(a, "read the runbook")
    b = node(
        "b",
        [
            tool_call("search_knowledge", {"query": "staging database port"}),
            tool_call("search_knowledge", {"query": "deploys freeze"}),
            tool_call("learning_failures", {}),
            text("port 6543; fs_read failed on missing.txt"),
        ],
    )
    found, saved, failures = turn(b, "what do we know?")
    assert found[0]["source"] == "kept"
    assert "port 6543" in found[0]["content"]
    assert [(h["source"], h["topic"]) for h in saved] == [("saved", "ops")]
    assert [(f["tool"], f["error"].split(":")[0]) for f in failures] == [
        ("fs_read", "FileNotFoundError")
    ]
    for runtime in (a, b):
        assert not list((runtime.config.home / "plugins").glob("*.db"))
        runtime.close_plugin_databases()
