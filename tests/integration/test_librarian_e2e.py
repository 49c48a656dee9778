"""The librarian closes the loop with the real KnowledgeSaver and LearningObserver: a
later turn finds a fact the KnowledgeSaver kept from an earlier tool result and reports
the tool that keeps failing, from the LearningObserver's data — all through the chain."""

from __future__ import annotations

import asyncio

import toolang_hook_knowledge_saver
import toolang_hook_learning_observer
import toolang_tools_librarian
import toolang_tools_operator
from toolang_core import NewTurnRequest, TurnStatus
from toolang_core.testing.cli import run_toolang
from toolang_core.testing.models import ScriptedModel, text, tool_call

FACT = (
    "Runbook: the staging database listens on port 6543 and is restarted every Sunday at "
    "03:00 UTC by the ops team."
)


def test_the_librarian_finds_kept_knowledge_and_the_failing_tool(toolang_runtime, tmp_path):
    workspace = tmp_path / "ws"
    (workspace / "owners" / "alice").mkdir(parents=True)  # alice's turns work there
    (workspace / "owners" / "alice" / "runbook.txt").write_text(FACT)
    model = ScriptedModel(
        [
            tool_call("fs_read", {"path": "runbook.txt"}),
            tool_call("fs_read", {"path": "missing.txt"}),
            tool_call("fs_read", {"path": "missing.txt"}),
            text("read what I could"),
            # a later turn
            tool_call("search_knowledge", {"query": "which port does staging database use"}),
            tool_call("learning_failures", {}),
            tool_call("learning_stats", {"tool": "fs_read"}),
            text("port 6543; fs_read keeps failing on missing.txt"),
        ]
    )
    runtime = toolang_runtime(
        '[models]\ndefault = "scripted"\n'
        f'[plugins.tools-operator]\nworkspace = "{workspace}"\n'
        "[plugins.hook-knowledge-saver]\nflush_seconds = 0\n"
        "[plugins.hook-learning-observer]\nflush_seconds = 0\n",
        plugins={
            "tools-operator": toolang_tools_operator,
            "tools-librarian": toolang_tools_librarian,
            "hook-knowledge-saver": toolang_hook_knowledge_saver,
            "hook-learning-observer": toolang_hook_learning_observer,
            "scripted": model.plugin(),
        },
    )
    inbox = runtime.open_inbox()

    def turn(words: str) -> str:
        turn_id = inbox.submit(
            NewTurnRequest(source="chat", thread_id="cli:ops", input=words, owner="alice")
        ).id
        asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
        assert inbox.get(turn_id).status is TurnStatus.COMPLETED
        return turn_id

    turn("read the runbook")
    later = turn("what do we know about staging, and what keeps failing?")
    found, failures, stats = (
        s.data["result"]["output"] for s in inbox.store.steps(later) if "result" in s.data
    )
    assert found[0]["source"] == "kept" and found[0]["tool"] == "fs_read"
    assert "port 6543" in found[0]["content"]
    assert [(f["tool"], f["error"].split(":")[0]) for f in failures] == [
        ("fs_read", "FileNotFoundError"),
        ("fs_read", "FileNotFoundError"),
    ]
    assert [(s["tool"], s["calls"], s["failures"]) for s in stats] == [("fs_read", 3, 2)]
    # The calls show in the trace like any tool call, chain stages included.
    trace = run_toolang("turns", "trace", later, cwd=runtime.config.base_dir)
    assert trace.returncode == 0, trace.stderr
    for call in ('search_knowledge({"query"', "learning_failures({})", "learning_stats({"):
        (line,) = [line for line in trace.stdout.splitlines() if line.strip().startswith(call)]
        assert "→ ok" in line
