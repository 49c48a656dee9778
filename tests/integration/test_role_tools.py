"""The roles' own tools, end to end with every plugin installed: each new tool is owned
by its role in `toolang agents tools` (zero unmatched), and the automator's chores fire
through the chore source under a fake clock, pause and resume, and show in
`toolang chores list`."""

from __future__ import annotations

import asyncio
import json

import pytest

import toolang_source_chore
import toolang_tools_automator
from toolang_core import Inbox, NewTurnRequest, TurnFilter, TurnStatus
from toolang_core.testing.cli import run_toolang
from toolang_core.testing.models import ScriptedModel, text, tool_call
from toolang_source_chore.chores import ChoreBoard
from toolang_source_chore.settings import ChoreSettings

ROLES = {
    "automator": [
        "cron_add", "cron_list", "cron_pause", "cron_resume", "cron_remove",
        "bg_submit", "bg_status", "bg_result", "bg_cancel",
        "workflow_save", "workflow_run", "workflow_status", "workflow_cancel",
    ],
    "librarian": [
        "search_knowledge", "save_knowledge", "save_learning", "learning_stats",
        "learning_failures", "rag_index", "rag_query",
    ],
    "chronicler": ["observe_record", "observe_list", "reflect_create", "reflect_list"],
}  # fmt: skip


def test_agents_tools_shows_each_new_tool_owned_by_its_role_and_none_unmatched(tmp_path):
    (tmp_path / "toolang.toml").write_text('[memory]\nplugin = "sqlite"\n')
    result = run_toolang("agents", "tools", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    owners = {tool: row["agent"] for tool, row in shown["tools"].items()}
    for role, tools in ROLES.items():
        assert {t: owners.get(t) for t in tools} == dict.fromkeys(tools, role)
    assert shown["unmatched"] == []
    text_out = run_toolang("agents", "tools", cwd=tmp_path).stdout
    assert "unmatched: none" in text_out


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def chores(toolang_runtime):
    """A runtime with the chore source and the automator; ``said(text)`` runs a chat turn
    whose model plays ``scripts[text]``; chore turns are answered ``chore ran``."""
    scripts: dict[str, list] = {}

    def answer(request):
        users = [m for m in request.messages if m.role == "user"]
        said = users[-1].content
        if said not in scripts:
            return text("chore ran")
        index = sum(1 for m in request.messages if m.role == "assistant")
        return scripts[said][index]

    model = ScriptedModel(answer)
    runtime = toolang_runtime(
        '[models]\ndefault = "scripted"\n',
        plugins={
            "source-chore": toolang_source_chore,
            "tools-automator": toolang_tools_automator,
            "scripted": model.plugin(),
        },
    )

    def said(words: str, script: list) -> list:
        scripts[words] = script
        inbox = runtime.open_inbox()
        turn_id = inbox.submit(
            NewTurnRequest(source="chat", thread_id=f"cli:{words}", input=words, owner="alice")
        ).id
        asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
        assert inbox.get(turn_id).status is TurnStatus.COMPLETED
        return [
            s.data["result"]["output"] for s in inbox.store.steps(turn_id) if "result" in s.data
        ]

    return runtime, said


def test_a_chore_added_by_the_automator_fires_pauses_and_resumes_under_a_fake_clock(chores):
    runtime, said = chores
    (added,) = said(
        "every minute",
        [
            tool_call(
                "cron_add",
                {
                    "name": "tick",
                    "schedule_type": "every",
                    "schedule": "60 seconds",
                    "prompt": "Check the queue.",
                },
            ),
            text("scheduled"),
        ],
    )
    chore_id = added["id"]
    store = runtime.open_store()
    clock = Clock(runtime.clock())
    board = ChoreBoard(ChoreSettings(), runtime.config.base_dir, store, clock=clock)
    inbox = Inbox(store, runtime.policy, clock=clock)

    def fire(seconds: float) -> list[str]:
        clock.now += seconds
        board.reload()
        fired = board.submit_due(inbox)
        asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
        return fired

    assert fire(0) == []  # first seen: fires at its next occurrence
    assert fire(60) == [chore_id]
    (turn,) = store.list_turns(TurnFilter(thread_id=f"chore:{chore_id}"))
    assert (turn.source, turn.owner, turn.input, turn.status, turn.output) == (
        "chore",
        "alice",
        "Check the queue.",
        TurnStatus.COMPLETED,
        "chore ran",
    )
    said("pause it", [tool_call("cron_pause", {"id": chore_id}), text("paused")])
    assert fire(60) == []
    said("resume it", [tool_call("cron_resume", {"id": chore_id}), text("resumed")])
    assert fire(60) == [chore_id]
    assert len(store.list_turns(TurnFilter(thread_id=f"chore:{chore_id}"))) == 2

    listed = run_toolang("chores", "list", cwd=runtime.config.base_dir)
    assert listed.returncode == 0, listed.stderr
    assert chore_id in listed.stdout and "store (by alice)" in listed.stdout
