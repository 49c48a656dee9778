"""Chores added at run time (``cron_add``) are store records: on a PostgreSQL store a
chore added on one node is listed, loaded by the chore source and removed on another
(two runtimes, two homes, one server)."""

from __future__ import annotations

import shutil

import toolang_source_chore
import toolang_store_postgres
import toolang_tools_automator
from toolang_core import Runtime
from toolang_core.testing.models import text, tool_call
from toolang_core.testing.pytest_plugin import ToolangHome
from toolang_core.testing.runtimes import run_turn, tool_results
from toolang_source_chore.chores import ChoreBoard
from toolang_source_chore.settings import ChoreSettings

STANDUP = {
    "name": "standup",
    "schedule_type": "cron",
    "schedule": "0 9 * * 1-5",
    "prompt": "Summarise yesterday.",
}


def test_a_chore_added_on_one_node_is_every_nodes_chore(
    tmp_path, toolang_pg_config, toolang_scripted_model
):
    def turn(name: str, *steps, owner: str = "alice") -> tuple[Runtime, list]:
        home = ToolangHome(tmp_path / f"node-{name}")
        (home.path / ".toolang").mkdir(parents=True, exist_ok=True)
        key = tmp_path / "node-a" / ".toolang" / "approval.key"
        if name != "a" and key.exists():  # every node of a store shares its approval key
            shutil.copy(key, home.path / ".toolang" / "approval.key")
        home.write_config(f'{toolang_pg_config}\n[models]\ndefault = "scripted"\n')
        env = {"HOME": str(home.path)}
        plugins = {
            "store-postgres": toolang_store_postgres,
            "tools-automator": toolang_tools_automator,
            "source-chore": toolang_source_chore,
            "scripted": toolang_scripted_model([*steps, text("done")]).plugin(),
        }
        runtime = Runtime.with_plugins(home.load(env), plugins.items(), env=env)
        turn_id = run_turn(runtime, owner=owner)
        return runtime, [r["output"] if r["ok"] else r for r in tool_results(runtime, turn_id)]

    _, (added,) = turn("a", tool_call("cron_add", STANDUP))
    chore_id = added["id"]
    b, (listed,) = turn("b", tool_call("cron_list", {}))
    assert [(c["id"], c["name"]) for c in listed] == [(chore_id, "standup")]

    # Node B's chore source loads it next to its configured chores (at its next read:
    # at most poll_seconds later; at once on the node that added it).
    store = b.open_store()
    try:
        board = ChoreBoard(ChoreSettings(), b.config.base_dir, store)
        board.reload()
        assert [c.key for c in board.chores] == [chore_id]
    finally:
        store.close()

    _, (theirs,) = turn("b", tool_call("cron_list", {}), owner="bob")
    assert theirs == []
    _, (paused,) = turn("b", tool_call("cron_pause", {"id": chore_id}))
    assert paused["paused"] is True
    _, (seen_on_a,) = turn("a", tool_call("cron_list", {}))
    assert [c["paused"] for c in seen_on_a] == [True]
    _, (removed,) = turn("b", tool_call("cron_remove", {"id": chore_id}))
    assert removed == {"id": chore_id, "removed": True}
    _, (gone,) = turn("a", tool_call("cron_list", {}))
    assert gone == []
