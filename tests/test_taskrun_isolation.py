"""Child isolation: a task run's own turns never enter the parent thread's history;
one short note — its summary, or a compact failure note — is merged in instead, in its
place in time, and the full transcript stays readable through the tool."""

from __future__ import annotations

from taskrun_helpers import make_runtime
from test_taskrun_tools import run_turn

from toolang_core import TurnFilter
from toolang_core.config.model import AgentsConfig
from toolang_core.testing.cast import Cast, last_output
from toolang_core.testing.models import error, text, tool_call

RESEARCH = [tool_call("lookup_fact", {"topic": "tides"}), text("tides follow the moon")]


def spawn_then_answer(agent: str = "researcher", mode: str = "sync") -> list:
    return [
        tool_call("start_task_run", {"task": "research tides", "agent_name": agent, "mode": mode}),
        text("I asked a researcher"),
    ]


def second_prompt(cast: Cast) -> list[tuple[str, str]]:
    request = cast.requests_of("assistant")[-1]
    return [(m.role, m.content) for m in request.messages[1:]]


def test_a_childs_turns_never_enter_the_parent_threads_history(tmp_path):
    cast = Cast(assistant=spawn_then_answer(), researcher=RESEARCH)
    runtime = make_runtime(tmp_path, cast)
    first = run_turn(runtime, "what about tides?")
    run_id = last_output(cast.requests_of("assistant")[1])["id"]
    cast.scripts["assistant"] = [text("as I said")]
    run_turn(runtime, "and now?")
    assert second_prompt(cast) == [
        ("user", "what about tides?"),
        ("assistant", "I asked a researcher"),
        ("assistant", f"[task run {run_id} · researcher · completed] tides follow the moon"),
        ("user", "and now?"),
    ]
    store = runtime.open_store()
    parent_turns = store.list_turns(TurnFilter(thread_id="chat:t"))
    assert {t.source for t in parent_turns} == {"chat"}
    assert first.id in {t.id for t in parent_turns}
    child = store.list_turns(TurnFilter(thread_id=f"task:{run_id}"))
    assert [t.id for t in child] == [run_id]
    store.close()


def test_a_failed_run_leaves_a_compact_failure_note(tmp_path):
    cast = Cast(assistant=spawn_then_answer(), researcher=[error("quota exceeded " * 40)])
    runtime = make_runtime(tmp_path, cast)
    run_turn(runtime, "what about tides?")
    run_id = last_output(cast.requests_of("assistant")[1])["id"]
    cast.scripts["assistant"] = [text("it failed")]
    run_turn(runtime, "and now?")
    role, note = second_prompt(cast)[2]
    assert role == "assistant"
    assert note.startswith(
        f"[task run {run_id} · researcher · failed (model_error)] model 'scripted' failed:"
    )
    assert len(note) < 320  # the summary is cut to 240 characters; no raw child history


def test_a_canceled_run_leaves_a_note_that_it_was_stopped(tmp_path):
    cast = Cast(
        assistant=[
            tool_call("start_task_run", {"task": "x", "agent_name": "slowpoke"}),
            lambda r: tool_call("cancel_task_run", {"id": last_output(r)["id"]}),
            lambda r: tool_call("wait_task_run", {"id": last_output(r)["id"]}),
            text("stopped"),
        ],
        slowpoke=[tool_call("hang", {"label": "never"})],
    )
    runtime = make_runtime(tmp_path, cast)
    run_turn(runtime, "start and stop")
    run_id = last_output(cast.requests_of("assistant")[1])["id"]
    cast.scripts["assistant"] = [text("ok")]
    run_turn(runtime, "and now?")
    assert second_prompt(cast)[2] == (
        "assistant",
        f"[task run {run_id} · slowpoke · canceled] it was stopped before it finished",
    )


def test_notes_older_than_the_history_window_are_left_out(tmp_path):
    cast = Cast(assistant=spawn_then_answer(), researcher=RESEARCH)
    runtime = make_runtime(tmp_path, cast, agents_config=AgentsConfig(history_turns=1))
    run_turn(runtime, "what about tides?")
    cast.scripts["assistant"] = [text("hello")]
    run_turn(runtime, "hi")
    run_turn(runtime, "and now?")
    assert second_prompt(cast) == [("user", "hi"), ("assistant", "hello"), ("user", "and now?")]
