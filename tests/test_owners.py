"""Owners end to end: a thread belongs to the owner of its first request, a task run's
``task:<id>`` thread to the run's owner, and memory to an owner and an agent. Another
owner is refused with a clear error — never silently served — and nothing of one
owner's reaches another's prompt (checked in the stored steps and prompt traces)."""

from __future__ import annotations

import json

import pytest
from taskrun_helpers import make_runtime as make_taskrun_runtime
from test_memory_runtime import make as make_memory_runtime
from test_taskrun_isolation import RESEARCH, spawn_then_answer
from test_taskrun_tools import run_turn

from toolang_core import NewTurnRequest, SubmitRejected, TurnFilter, TurnStatus
from toolang_core.runtime.after_turn import PROMPT_TRACE_KIND
from toolang_core.testing.cast import Cast, last_output
from toolang_core.testing.list_memory import ListMemory, Shelf
from toolang_core.testing.models import ScriptedModel, text
from toolang_core.testing.runtimes import serve_until_idle


def submit(runtime, thread: str, owner: str | None, text_in: str = "hello", source="chat"):
    inbox = runtime.open_inbox()
    try:
        return inbox.submit(
            NewTurnRequest(source=source, thread_id=thread, input=text_in, owner=owner)
        )
    finally:
        inbox.store.close()


serve = serve_until_idle


def stored_text(runtime, turn_id: str) -> str:
    """Everything stored about a turn: the request, its steps and its prompt trace."""
    store = runtime.open_store()
    try:
        turn = store.get(turn_id)
        steps = [{"kind": s.kind, "data": s.data, "error": s.error} for s in store.steps(turn_id)]
        trace = store.get_record(PROMPT_TRACE_KIND, turn_id)
    finally:
        store.close()
    return json.dumps(
        {
            "input": turn.input,
            "output": turn.output,
            "steps": steps,
            "trace": dict(trace.data) if trace else None,
        }
    )


# -- chat threads ---------------------------------------------------------------------


@pytest.mark.parametrize("intruder", ["bob", None], ids=["another-owner", "the-operator"])
def test_a_request_of_another_owner_into_a_thread_is_refused_with_a_clear_error(tmp_path, intruder):
    model = ScriptedModel([text("noted")])
    runtime = make_memory_runtime(tmp_path, model)
    first = submit(runtime, "chat:ada", "ada", "my locker code is 5531")
    with pytest.raises(SubmitRejected) as refused:
        submit(runtime, "chat:ada", intruder, "what did ada say?")
    assert refused.value.reason == "wrong_owner"
    message = str(refused.value)
    assert "'chat:ada' belongs to another owner" in message
    assert (repr(intruder) if intruder else "the operator (no owner)") in message
    assert "ada'" not in message.replace("'chat:ada'", "")  # the owner is not disclosed
    serve(runtime)
    store = runtime.open_store()
    try:
        (only,) = store.list_turns(TurnFilter(thread_id="chat:ada"))
    finally:
        store.close()
    assert only.id == first.id and only.status is TurnStatus.COMPLETED
    assert len(model.calls) == 1  # the refused request never reached a model


def test_the_owner_may_go_on_in_their_thread(tmp_path):
    runtime = make_memory_runtime(tmp_path, ScriptedModel([text("one"), text("two")]))
    submit(runtime, "chat:ada", "ada")
    assert submit(runtime, "chat:ada", "ada").status == "queued"
    serve(runtime)


def test_an_operator_thread_refuses_an_owner_too(tmp_path):
    runtime = make_memory_runtime(tmp_path, ScriptedModel([]))
    submit(runtime, "cli:default", None)
    with pytest.raises(SubmitRejected, match="belongs to another owner"):
        submit(runtime, "cli:default", "ada")


def test_a_refused_owner_gets_nothing_of_the_thread_in_their_own_prompt(tmp_path):
    model = ScriptedModel([text("noted"), text("hello bob")])
    runtime = make_memory_runtime(tmp_path, model)
    submit(runtime, "chat:ada", "ada", "my locker code is 5531")
    serve(runtime)
    with pytest.raises(SubmitRejected):
        submit(runtime, "chat:ada", "bob", "tell me the locker code")
    bobs = submit(runtime, "chat:bob", "bob", "tell me the locker code").id
    serve(runtime)
    assert "5531" not in json.dumps([m.content for m in model.calls[1].messages])
    assert "5531" not in stored_text(runtime, bobs)


# -- task:<id> threads -------------------------------------------------------------------


@pytest.mark.parametrize("intruder", ["bob", None], ids=["another-owner", "the-operator"])
def test_a_request_of_another_owner_into_a_task_run_thread_is_refused(tmp_path, intruder):
    cast = Cast(assistant=spawn_then_answer(), researcher=RESEARCH)
    runtime = make_taskrun_runtime(tmp_path, cast)
    run_turn(runtime, "what about tides?", owner="ada")
    run_id = last_output(cast.requests_of("assistant")[1])["id"]
    requests_before = len(cast.requests)
    with pytest.raises(SubmitRejected) as refused:
        submit(runtime, f"task:{run_id}", intruder, "show me the transcript", source="task")
    assert refused.value.reason == "wrong_owner"
    assert f"'task:{run_id}' belongs to another owner" in str(refused.value)
    serve(runtime)
    assert len(cast.requests) == requests_before  # no turn ran on the run's transcript
    store = runtime.open_store()
    try:
        on_thread = store.list_turns(TurnFilter(thread_id=f"task:{run_id}"))
    finally:
        store.close()
    assert [t.id for t in on_thread] == [run_id]


# -- memory ---------------------------------------------------------------------------


def test_one_owners_memory_never_reaches_another_owners_prompt(tmp_path):
    shelf = Shelf()
    model = ScriptedModel([text("I will remember it"), text("I do not know"), text("4711")])
    runtime = make_memory_runtime(tmp_path, model, lambda: ListMemory(shelf))
    submit(runtime, "chat:ada-1", "ada", "my bank pin for quillfeather is 4711")
    serve(runtime)
    bobs = submit(runtime, "chat:bob", "bob", "what is my quillfeather bank pin?").id
    serve(runtime)
    adas = submit(runtime, "chat:ada-2", "ada", "what is my quillfeather bank pin?").id
    serve(runtime)

    assert "4711" not in json.dumps([m.content for m in model.calls[1].messages])
    assert "4711" not in stored_text(runtime, bobs)
    # The same agent, asked by its owner: recalled (memory works; it is only scoped).
    assert "4711" in json.dumps([m.content for m in model.calls[2].messages])
    assert "4711" in stored_text(runtime, adas)
    assert {row.owner for row in shelf.rows if "4711" in row.text} == {"ada"}


def test_memory_tools_work_on_the_calling_owners_memory(tmp_path):
    from toolang_core.testing.models import tool_call

    shelf = Shelf()
    model = ScriptedModel(
        [
            tool_call("memory_agent_save", {"key": "pin", "content": "quillfeather pin 4711"}),
            text("saved"),
            tool_call("memory_agent_recall", {"query": "quillfeather pin"}),
            text("nothing"),
        ]
    )
    runtime = make_memory_runtime(tmp_path, model, lambda: ListMemory(shelf), save_turns=())
    submit(runtime, "chat:ada", "ada", "remember my pin")
    serve(runtime)
    bobs = submit(runtime, "chat:bob", "bob", "what pin do I have?").id
    serve(runtime)
    assert [(row.owner, row.key) for row in shelf.rows] == [("ada", "pin")]
    recall_result = model.calls[3].messages[-1].content
    assert "4711" not in recall_result
    assert "4711" not in stored_text(runtime, bobs)
