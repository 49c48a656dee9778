"""Forking a thread at a turn and replaying a turn against another model: a real runtime
over a real SQLite store, scripted models (``toolang_core.history``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from toolang_core import Tool, hookimpl
from toolang_core.config import ToolangConfig
from toolang_core.config.model import AgentsConfig, ModelsConfig, RuntimeConfig
from toolang_core.history import (
    fork_thread,
    plan_replay,
    replay_report,
    replay_turn,
    submit_replay,
)
from toolang_core.models.types import ModelRequest
from toolang_core.runtime import Runtime
from toolang_core.runtime.oneshot import await_turn
from toolang_core.store.errors import NotThreadOwner, TurnNotFound
from toolang_core.store.forks import visible_turns
from toolang_core.store.types import NewTurnRequest, TurnFilter, TurnStatus
from toolang_core.testing.models import ScriptedModel, Step, text, tool_call
from toolang_core.testing.runtimes import serve_until_idle

THREAD = "cli:work"
looked_up: list[str] = []


def lookup(q: str) -> str:
    """Look something up (counts each real run).

    :param q: what
    """
    looked_up.append(q)
    return f"found {q}"


def touch(path: str) -> str:
    """Create a file: the side effect a replay must not have.

    :param path: where
    """
    Path(path).write_text("touched")
    return "touched"


class Tools:
    @staticmethod
    @hookimpl
    def toolang_register_tools(register):
        register(Tool.from_function(lookup, blocking=False))
        register(Tool.from_function(touch, blocking=False))


@pytest.fixture(autouse=True)
def _reset():
    looked_up.clear()


def echo(request: ModelRequest) -> Step:
    """Answers each message with what it was asked."""
    return text(f"answer to {request.messages[-1].content}")


def make(tmp_path: Path, context_tokens: int | None = None, **models: ScriptedModel) -> Runtime:
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.05, shutdown_grace_seconds=0),
        models=ModelsConfig(default="scripted"),
        agents=AgentsConfig(context_tokens=context_tokens),
    )
    plugins = [(name, model.plugin(name)) for name, model in models.items()]
    return Runtime.with_plugins(config, [*plugins, ("tools", Tools())], env={})


def submit_all(runtime: Runtime, *inputs: str, owner: str | None = "ada") -> list[str]:
    inbox = runtime.open_inbox()
    try:
        return [
            inbox.submit(NewTurnRequest(source="chat", thread_id=THREAD, input=t, owner=owner)).id
            for t in inputs
        ]
    finally:
        inbox.store.close()


def snapshot(runtime: Runtime, thread: str) -> list[object]:
    store = runtime.open_store()
    try:
        turns = store.list_turns(TurnFilter(thread_id=thread))
        return [(t, store.steps(t.id)) for t in turns]
    finally:
        store.close()


# -- fork ---------------------------------------------------------------------------------


@pytest.mark.parametrize("budget", [None, 50_000], ids=["turns", "token-budget"])
def test_a_fork_at_turn_3_of_6_has_turns_1_2_and_the_edited_3_answered(tmp_path, budget):
    model = ScriptedModel(echo)
    runtime = make(tmp_path, budget, scripted=model)
    ids = submit_all(runtime, *(f"q{i}" for i in range(1, 7)))
    serve_until_idle(runtime)
    before = snapshot(runtime, THREAD)

    inbox = runtime.open_inbox()
    forked = fork_thread(inbox, THREAD, "3", owner="ada", edit_input="q3 edited")
    serve_until_idle(runtime)

    assert forked.at_turn == ids[2] and forked.inherited == tuple(ids[:2])
    history = visible_turns(inbox.store, forked.thread_id)
    assert [t.id for t in history] == [ids[0], ids[1], forked.turn_id]
    new = history[-1]
    assert (new.thread_id, new.owner, new.status) == (forked.thread_id, "ada", TurnStatus.COMPLETED)
    assert (new.input, new.output) == ("q3 edited", "answer to q3 edited")
    said = [m.content for m in model.calls[-1].messages if m.role != "system"]
    assert said == ["q1", "answer to q1", "q2", "answer to q2", "q3 edited"]
    assert snapshot(runtime, THREAD) == before  # the original is untouched

    # the forked thread goes on: its next turn sees the inherited history too
    inbox.submit(NewTurnRequest(source="chat", thread_id=forked.thread_id, input="q4", owner="ada"))
    serve_until_idle(runtime)
    said = [m.content for m in model.calls[-1].messages if m.role != "system"]
    assert said == [
        "q1",
        "answer to q1",
        "q2",
        "answer to q2",
        "q3 edited",
        "answer to q3 edited",
        "q4",
    ]
    inbox.store.close()


def test_a_fork_can_take_another_model_and_the_turn_id(tmp_path):
    runtime = make(tmp_path, scripted=ScriptedModel(echo), other=ScriptedModel([text("other")]))
    ids = submit_all(runtime, "q1", "q2")
    serve_until_idle(runtime)
    inbox = runtime.open_inbox()
    forked = fork_thread(inbox, THREAD, ids[1], owner="ada", model="other")
    serve_until_idle(runtime)
    new = inbox.get(forked.turn_id)
    assert (new.input, new.output) == ("q2", "other")
    inbox.store.close()


def test_a_fork_at_a_turn_the_thread_does_not_have_is_refused(tmp_path):
    runtime = make(tmp_path, scripted=ScriptedModel(echo))
    submit_all(runtime, "q1")
    serve_until_idle(runtime)
    inbox = runtime.open_inbox()
    with pytest.raises(TurnNotFound, match="has turns 1 to 1"):
        fork_thread(inbox, THREAD, "2", owner="ada")
    with pytest.raises(TurnNotFound, match="no such turn"):
        fork_thread(inbox, THREAD, "nope", owner="ada")
    inbox.store.close()


# -- replay -------------------------------------------------------------------------------


def test_a_replay_reuses_recorded_results_stops_an_unrecorded_call_and_leaves_no_trace(
    tmp_path,
):
    marker = tmp_path / "touched"
    recorded = ScriptedModel([tool_call("lookup", {"q": "x"}), text("x is found")])
    other = ScriptedModel(
        [
            tool_call("lookup", {"q": "x"}),
            tool_call("touch", {"path": str(marker)}),
            text("done differently"),
        ]
    )
    runtime = make(tmp_path, scripted=recorded, other=other)
    (turn_id,) = submit_all(runtime, "find x")
    serve_until_idle(runtime)
    assert looked_up == ["x"]
    before = snapshot(runtime, THREAD)

    inbox = runtime.open_inbox()
    report = asyncio.run(replay_turn(runtime, inbox, turn_id, owner="ada", model="other"))

    assert (report.status, report.output) == ("completed", "done differently")
    assert report.original_output == "x is found"
    assert [(c.name, c.answer) for c in report.calls] == [
        ("lookup", "recorded"),
        ("touch", "stopped"),
    ]
    assert looked_up == ["x"]  # answered from the record, not run again
    assert not marker.exists()  # stopped: never run
    told = [m.content for m in other.calls[1].messages if m.role == "tool"]
    assert '"output": "found x"' in told[0]
    assert "not run: this is a replay" in report.stopped[0].error
    assert snapshot(runtime, THREAD) == before  # no trace in the original thread
    assert inbox.get(report.replay_turn_id).thread_id.startswith("replay:")
    inbox.store.close()


def test_a_replay_runs_a_tool_it_was_allowed(tmp_path):
    marker = tmp_path / "touched"
    runtime = make(
        tmp_path,
        scripted=ScriptedModel([text("nothing")]),
        other=ScriptedModel([tool_call("touch", {"path": str(marker)}), text("touched")]),
    )
    (turn_id,) = submit_all(runtime, "go")
    serve_until_idle(runtime)
    inbox = runtime.open_inbox()
    report = asyncio.run(
        replay_turn(runtime, inbox, turn_id, owner="ada", model="other", allow_tools=["touch"])
    )
    assert [(c.name, c.answer) for c in report.calls] == [("touch", "ran")]
    assert marker.exists()
    inbox.store.close()


def test_a_plan_replays_in_another_home_without_the_history(tmp_path):
    """What an evaluation does: read the record in one store, replay it in its own."""
    recorded = ScriptedModel([tool_call("lookup", {"q": "x"}), text("x is found")])
    source = make(tmp_path / "a", scripted=recorded)
    (turn_id,) = submit_all(source, "find x")
    serve_until_idle(source)
    store = source.open_store()
    plan = plan_replay(store, turn_id, owner="ada", model="other")
    store.close()

    other = ScriptedModel([tool_call("lookup", {"q": "x"}), text("same")])
    isolated = make(tmp_path / "b", scripted=ScriptedModel([]), other=other)
    inbox = isolated.open_inbox()
    replay_id = submit_replay(inbox, plan, history=False)
    asyncio.run(await_turn(isolated, inbox, replay_id))
    report = replay_report(inbox.store, plan, replay_id)
    assert (report.status, report.output) == ("completed", "same")
    assert [(c.name, c.answer) for c in report.calls] == [("lookup", "recorded")]
    assert looked_up == ["x"]  # only the recorded run
    inbox.store.close()


# -- owners -------------------------------------------------------------------------------


def test_one_owner_cannot_fork_or_replay_another_owners_turns(tmp_path):
    runtime = make(tmp_path, scripted=ScriptedModel(echo))
    (turn_id,) = submit_all(runtime, "q1")
    serve_until_idle(runtime)
    before = snapshot(runtime, THREAD)
    inbox = runtime.open_inbox()
    for owner in ("bob", None):  # another owner, and the operator
        with pytest.raises(NotThreadOwner):
            fork_thread(inbox, THREAD, "1", owner=owner)
        with pytest.raises(NotThreadOwner):
            plan_replay(inbox.store, turn_id, owner=owner, model="scripted")
    assert len(inbox.store.list_threads()) == 1  # no new thread
    assert snapshot(runtime, THREAD) == before
    inbox.store.close()
