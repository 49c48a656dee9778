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
    "ontologist": [
        "ontology_define_type", "ontology_add_entity", "ontology_assert_fact", "ontology_query",
        "ontology_conflicts", "ontology_resolve", "ontology_ingest",
    ],
    "navigator": [
        "browser_open", "browser_observe", "browser_click", "browser_type", "browser_extract",
        "browser_screenshot", "browser_close",
    ],
    "vault": [
        "secrets_set", "secrets_get", "secrets_list", "secrets_delete", "crypto_hash",
        "crypto_encrypt", "crypto_decrypt", "crypto_sign", "crypto_verify",
    ],
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


def test_a_chore_added_at_run_time_fires_on_its_schedule_from_when_it_was_added(
    toolang_runtime,
):
    """A runtime serving its chore source (which reads its chores only once an hour on
    its own): an agent adds an `every 2 seconds` chore, and the chore's turn requests
    follow the schedule from the add — checked on the occurrences they record, not on
    when they ran, so a busy machine cannot fail it."""
    every = 2.0

    def answer(request):
        said = [m for m in request.messages if m.role == "user"][-1].content
        if said != "tick every two seconds":
            return text("chore ran")
        if request.messages[-1].role == "tool":
            return text("scheduled")
        return tool_call(
            "cron_add",
            {"name": "tick", "schedule_type": "every", "schedule": "2 seconds", "prompt": "Tick."},
        )

    runtime = toolang_runtime(
        '[models]\ndefault = "scripted"\n[runtime]\npoll_seconds = 0.05\n'
        "[plugins.source-chore]\npoll_seconds = 3600\n",
        plugins={
            "source-chore": toolang_source_chore,
            "tools-automator": toolang_tools_automator,
            "scripted": ScriptedModel(answer).plugin(),
        },
    )
    firings = 4

    async def scenario() -> tuple[dict, list]:
        stop = asyncio.Event()
        serving = asyncio.create_task(runtime.serve(stop, sources=["chore"]))
        try:
            await until(lambda: runtime.admitting)
            store = runtime.store
            said = runtime.inbox.submit(
                NewTurnRequest(
                    source="chat", thread_id="cli:a", input="tick every two seconds", owner="al"
                )
            )
            await until(lambda: store.get(said.id).status.is_terminal)
            (record,) = store.list_records("chore")
            thread = f"chore:{record.key}"
            await until(
                lambda: len(store.list_turns(TurnFilter(thread_id=thread))) >= firings,
                what=f"{firings} chore turns",
            )
            return dict(record.data), store.list_turns(TurnFilter(thread_id=thread))
        finally:
            stop.set()
            await serving

    async def until(predicate, timeout=120.0, what="the condition"):
        deadline = asyncio.get_running_loop().time() + timeout
        while not (found := predicate()):
            assert asyncio.get_running_loop().time() < deadline, f"never: {what}"
            await asyncio.sleep(0.02)
        return found

    chore, turns = asyncio.run(scenario())
    start = chore["start"]
    fired = sorted(turns, key=lambda t: t.seq)
    occurrences = [t.meta["chore"]["occurrence"] for t in fired]
    previous = [t.meta["chore"]["previous"] for t in fired]
    # Counted from the add: the first turn's previous occurrence is the add itself.
    assert previous[0] == start
    # Every firing is an occurrence of the schedule (start + k * 2 s, k >= 1), each a
    # later one than the last, handed over once (missed ones, on a stalled machine,
    # come due as one — the chain of previous occurrences says so), never early.
    steps = [round((o - start) / every) for o in occurrences]
    assert all(abs(o - (start + k * every)) < 1e-6 for o, k in zip(occurrences, steps, strict=True))
    assert steps[0] >= 1 and steps == sorted(set(steps))
    assert previous[1:] == occurrences[:-1]
    assert all(t.created_at >= o for t, o in zip(fired, occurrences, strict=True))
    assert {(t.owner, t.input) for t in fired} == {("al", "Tick.")}
