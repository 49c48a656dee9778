"""The task-run tools in real agent turns: a router agent (scripted) starts, lists,
reads, waits for and cancels task runs that other agents really run.

Docstrings name the tRPC-Agent-Go behaviour checked (reference/taskrun.md §5.5) or the
deliberate deviation.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from taskrun_helpers import make_runtime, release, started, with_delegation

from toolang_core import (
    NewTurnRequest,
    SpawnRequest,
    TaskRunError,
    TaskRunStatus,
    ToolCall,
    ToolCallContext,
    TurnStatus,
)
from toolang_core.taskruns import tools as taskrun_tools
from toolang_core.testing.cast import Cast, last_output, last_result, position, user_text
from toolang_core.testing.delegation import outputs, results, run_turn
from toolang_core.testing.models import error, text, tool_call
from toolang_core.testing.runtimes import serving, wait_status


def run_id_from(request) -> str:
    return str(last_output(request)["id"])


RESEARCH = [tool_call("lookup_fact", {"topic": "tides"}), text("tides follow the moon")]


# -- declarations ----------------------------------------------------------------------
def test_the_tools_are_declared_with_their_parameters(tmp_path):
    """tRPC ToolDeclarations: names and required fields; start_task_run has
    timeout_seconds, mode and wait_timeout_seconds; wait has timeout_seconds; the
    transcript tool is always there (toolang always has the child thread)."""
    tools = make_runtime(tmp_path).host.components.tools
    declared = {
        name: tools[name].tool.parameters
        for name in (
            "start_task_run",
            "list_task_runs",
            "get_task_run",
            "cancel_task_run",
            "wait_task_run",
            "read_task_run_transcript",
        )
    }
    assert declared["start_task_run"]["required"] == ["task"]
    assert {"agent_name", "mode", "timeout_seconds", "wait_timeout_seconds"} <= set(
        declared["start_task_run"]["properties"]
    )
    assert "required" not in declared["list_task_runs"]
    for name in ("get_task_run", "cancel_task_run", "wait_task_run", "read_task_run_transcript"):
        assert declared[name]["required"] == ["id"]
    assert "timeout_seconds" in declared["wait_task_run"]["properties"]
    assert "limit" in declared["read_task_run_transcript"]["properties"]


def test_single_agent_mode_offers_no_delegation_tools(tmp_path):
    """With no agent source there is nobody to delegate to: the one general agent is not
    offered the delegation tools (nor are they reported unmatched)."""
    catalog = make_runtime(tmp_path, agents=[]).agents
    scope = catalog.scope(catalog.agent(None))
    assert {"lookup_fact", "hang"} <= scope
    assert not scope & {"start_task_run", "agent_spawn", "ask_agent", "transfer_to_agent"}
    assert "start_task_run" not in catalog.assignment.unmatched


# -- start, list, get, wait, cancel ----------------------------------------------------
def test_an_async_start_returns_the_queued_run_which_then_really_runs(tmp_path):
    """tRPC SpawnListGetCancelWait: async returns queued without waiting;
    timeout_seconds reaches the run; list, get and wait (→ completed) work. And, unlike
    Lango's agent_spawn, the run really runs: the researcher answers the task."""
    cast = Cast(
        assistant=[
            tool_call(
                "start_task_run",
                {"task": "how do tides work", "agent_name": "researcher", "timeout_seconds": 30},
            ),
            tool_call("list_task_runs"),
            lambda r: tool_call("get_task_run", {"id": last_output(r)["runs"][0]["id"]}),
            lambda r: tool_call("wait_task_run", {"id": run_id_from(r), "timeout_seconds": 10}),
            text("the research is in"),
        ],
        researcher=RESEARCH,
    )
    turn = run_turn(make_runtime(tmp_path, cast))
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "the research is in")
    spawned, listed, got, waited = outputs(cast)
    assert (spawned["status"], spawned["timeout_seconds"]) == ("queued", 30)
    assert [r["id"] for r in listed["runs"]] == [spawned["id"]]
    assert got["id"] == spawned["id"]
    assert (waited["status"], waited["result"]) == ("completed", "tides follow the moon")
    assert waited["owner"] == "owner"
    assert waited["parent_thread_id"] == "chat:t"
    assert waited["parent_turn_id"] == turn.id
    (child,) = cast.requests_of("researcher")[:1]
    assert child.messages[-1].content == "how do tides work"
    assert f"- thread: task:{spawned['id']} (source task)" in child.messages[0].content


def test_an_empty_agent_name_runs_the_default_agent(tmp_path):
    """tRPC SpawnListGetCancelWait: the default agent name is used when none is given
    (toolang: [agents] default — here the router itself, on the child thread)."""
    steps = [tool_call("start_task_run", {"task": "say hi", "mode": "sync"}), text("said")]
    cast = Cast(assistant=lambda r: text("hi") if user_text(r) == "say hi" else steps[position(r)])
    run_turn(make_runtime(tmp_path, cast))
    (spawned,) = outputs(cast)
    assert (spawned["status"], spawned["result"]) == ("completed", "hi")
    assert "agent_name" not in spawned


def test_sync_mode_waits_for_the_result(tmp_path):
    """tRPC SyncModeWaits: sync returns the completed run with its result."""
    cast = Cast(
        assistant=[
            tool_call(
                "start_task_run", {"task": "tides", "agent_name": "researcher", "mode": "sync"}
            ),
            text("done"),
        ],
        researcher=RESEARCH,
    )
    run_turn(make_runtime(tmp_path, cast))
    (run,) = outputs(cast)
    assert (run["status"], run["result"], run["summary"]) == (
        "completed",
        "tides follow the moon",
        "tides follow the moon",
    )
    assert run["progress"]["tool_call_count"] == 1


def test_a_sync_wait_that_times_out_returns_the_latest_run_and_the_run_goes_on(tmp_path):
    """tRPC SyncWaitTimeoutReturnsLatestRun: the wait deadline returns the latest
    (non-terminal) run without an error; the child is not canceled."""
    cast = Cast(
        assistant=[
            tool_call(
                "start_task_run",
                {
                    "task": "wait for it",
                    "agent_name": "slowpoke",
                    "mode": "sync",
                    "wait_timeout_seconds": 0.2,
                },
            ),
            text("still going"),
        ],
        slowpoke=[tool_call("hang", {"label": "slow"}), text("finally")],
    )
    runtime = make_runtime(tmp_path, cast)

    async def scenario() -> Any:
        inbox = runtime.open_inbox()
        parent = inbox.submit(NewTurnRequest(source="chat", thread_id="chat:t", input="go")).id
        async with serving(runtime, sources=()):
            await wait_status(inbox, parent, {"completed"})
            (run,) = outputs(cast)
            assert run["status"] == "running"
            assert run["wait_timed_out"] is True
            release(runtime, "slow")
            done = await runtime.task_runs.wait(run["id"], owner="owner", timeout=10)
        inbox.store.close()
        return done

    done = asyncio.run(scenario())
    assert (done.status, done.result) == (TaskRunStatus.COMPLETED, "finally")


def test_wait_task_run_returns_the_current_run_when_its_timeout_passes(tmp_path):
    """Deviation: tRPC's wait_task_run returns the deadline error; toolang's returns
    the current run (wait_timed_out), like a sync start does."""
    cast = Cast(
        assistant=[
            tool_call("start_task_run", {"task": "x", "agent_name": "slowpoke"}),
            lambda r: tool_call("wait_task_run", {"id": run_id_from(r), "timeout_seconds": 0.1}),
            lambda r: tool_call("cancel_task_run", {"id": run_id_from(r)}),
            text("gave up"),
        ],
        slowpoke=[tool_call("hang", {"label": "never"}), text("unreachable")],
    )
    run_turn(make_runtime(tmp_path, cast))
    _, waited, canceled = outputs(cast)
    assert (waited["status"], waited["wait_timed_out"]) == ("running", True)
    assert canceled["status"] in ("canceling", "canceled")


def test_cancel_task_run_stops_a_run(tmp_path):
    """tRPC SpawnListGetCancelWait (cancel gives canceled) and CancelAndWait: the run
    ends canceled, with an empty error and the summary "canceled"."""
    cast = Cast(
        assistant=[
            tool_call("start_task_run", {"task": "x", "agent_name": "slowpoke"}),
            lambda r: tool_call("cancel_task_run", {"id": run_id_from(r)}),
            lambda r: tool_call("wait_task_run", {"id": run_id_from(r), "timeout_seconds": 10}),
            text("stopped it"),
        ],
        slowpoke=[tool_call("hang", {"label": "never"}), text("unreachable")],
    )
    run_turn(make_runtime(tmp_path, cast))
    _, canceled, waited = outputs(cast)
    assert canceled["status"] in ("canceling", "canceled")
    assert (waited["status"], waited["summary"], waited.get("error")) == (
        "canceled",
        "canceled",
        None,
    )


def test_a_run_that_outlives_its_timeout_fails_with_outcome_timeout(tmp_path):
    """tRPC TimeoutWithoutEventErrorDoesNotComplete: a run past its timeout ends failed
    (outcome timeout), not completed and not canceled."""
    cast = Cast(
        assistant=[
            tool_call(
                "start_task_run",
                {"task": "x", "agent_name": "slowpoke", "timeout_seconds": 0.2, "mode": "sync"},
            ),
            text("it timed out"),
        ],
        slowpoke=[tool_call("hang", {"label": "never"}), text("unreachable")],
    )
    run_turn(make_runtime(tmp_path, cast))
    (run,) = outputs(cast)
    assert (run["status"], run["outcome"]) == ("failed", "timeout")
    assert "timed out after 0.2 s" in run["error"]


def test_a_failing_child_agent_fails_the_run_with_its_error(tmp_path):
    """tRPC FailureAndRestartNormalization (runner.Run returning an error gives failed
    with that text) and result_test (an error event sets the error)."""
    cast = Cast(
        assistant=[
            tool_call("start_task_run", {"task": "x", "agent_name": "researcher", "mode": "sync"}),
            text("it failed"),
        ],
        researcher=[error("quota exceeded")],
    )
    run_turn(make_runtime(tmp_path, cast))
    (run,) = outputs(cast)
    assert (run["status"], run["outcome"]) == ("failed", "model_error")
    assert "quota exceeded" in run["error"]


# -- errors of the tools ---------------------------------------------------------------
def test_an_unsupported_mode_is_refused_before_anything_is_created(tmp_path):
    """tRPC RequireContextAndController: a bad mode gives `unsupported mode "<m>"`."""
    cast = Cast(assistant=[tool_call("start_task_run", {"task": "x", "mode": "later"}), text("no")])
    runtime = make_runtime(tmp_path, cast)
    run_turn(runtime)
    (refused,) = results(cast)
    assert refused["error"] == 'TaskRunError: taskrun: unsupported mode "later"'
    store = runtime.open_store()
    assert [t.source for t in store.list_turns()] == ["chat"]
    store.close()


def test_a_blank_run_id_and_a_missing_run_are_errors(tmp_path):
    """tRPC RequireContextAndController: get with a blank id gives "empty run id";
    cancel of a missing run gives NotFound."""
    cast = Cast(
        assistant=[
            tool_call("get_task_run", {"id": "  "}),
            tool_call("cancel_task_run", {"id": "ghost"}),
            text("ok"),
        ]
    )
    run_turn(make_runtime(tmp_path, cast))
    assert outputs(cast) == [
        "TaskRunError: taskrun: empty run id",
        "TaskRunNotFound: taskrun: run not found",
    ]


def test_the_tools_need_a_runtime_and_a_turn(tmp_path):
    """tRPC RequireContextAndController ("controller unavailable", "current session
    context is unavailable" — toolang: the current turn)."""
    with pytest.raises(TaskRunError, match="taskrun: controller unavailable"):
        taskrun_tools.list_task_runs(context=None)

    not_serving = make_runtime(tmp_path)  # a real runtime, never served: no controller
    context = ToolCallContext(
        call=ToolCall("c", "list_task_runs"),
        turn_id="t",
        thread_id="chat:1",
        run_id="r",
        agent="a",
        runtime=not_serving,
    )
    with pytest.raises(TaskRunError, match="taskrun: controller unavailable"):
        taskrun_tools.list_task_runs(context=context)


def test_the_tools_need_the_turn_their_call_belongs_to(tmp_path):
    runtime = make_runtime(tmp_path)

    async def scenario() -> None:
        async with serving(runtime, sources=()):
            context = ToolCallContext(
                call=ToolCall("c", "get_task_run"),
                turn_id="t",
                thread_id="chat:1",
                run_id="r",
                agent="a",
                runtime=runtime,
            )
            with pytest.raises(TaskRunError, match="current turn context is unavailable"):
                taskrun_tools.get_task_run(id="x", context=context)

    asyncio.run(scenario())


def test_another_owner_gets_not_found_from_every_tool(tmp_path):
    """tRPC RejectCrossOwnerAccess: another user in the same thread gets NotFound from
    get, cancel and wait (toolang: and from the transcript; the list leaves it out)."""
    calls = [
        tool_call("get_task_run", {"id": "job-1"}),
        tool_call("cancel_task_run", {"id": "job-1"}),
        tool_call("wait_task_run", {"id": "job-1", "timeout_seconds": 0.1}),
        tool_call("read_task_run_transcript", {"id": "job-1"}),
        tool_call("list_task_runs"),
        text("nothing of mine"),
    ]
    cast = Cast(assistant=calls, slowpoke=[tool_call("hang", {"label": "alice's"})])
    runtime = make_runtime(tmp_path, cast)

    async def scenario() -> None:
        inbox = runtime.open_inbox()
        async with serving(runtime, sources=()):
            await runtime.task_runs.spawn(
                SpawnRequest(
                    owner="alice",
                    parent_thread_id="chat:t",
                    task="x",
                    agent_name="slowpoke",
                    id="job-1",
                )
            )
            bob = inbox.submit(
                NewTurnRequest(source="chat", thread_id="chat:t", input="go", owner="bob")
            ).id
            await wait_status(inbox, bob, {"completed"})
            run = runtime.task_runs.get("job-1", owner="alice")
            assert run.status in (TaskRunStatus.QUEUED, TaskRunStatus.RUNNING)  # untouched
            await runtime.task_runs.cancel("job-1", owner="alice")
        inbox.store.close()

    asyncio.run(scenario())
    *refusals, listed = outputs(cast)
    assert refusals == ["TaskRunNotFound: taskrun: run not found"] * 4
    assert listed == {"runs": []}


# -- limits ----------------------------------------------------------------------------
def inner_status(result: dict[str, Any]) -> str:
    return str(result["output"]["status"]) if result["ok"] else str(result["error"])


def nested_cast() -> Cast:
    return Cast(
        assistant=[
            tool_call(
                "start_task_run", {"task": "nest", "agent_name": "automator", "mode": "sync"}
            ),
            text("done"),
        ],
        automator=[
            tool_call(
                "start_task_run", {"task": "deeper", "agent_name": "researcher", "mode": "sync"}
            ),
            lambda r: text(f"inner: {inner_status(last_result(r))}"),
        ],
        researcher=RESEARCH,
    )


def test_a_nested_spawn_is_refused_by_default(tmp_path):
    """tRPC RejectNestedSpawnByDefault: inside a task run, start_task_run fails with
    "nested task runs are not supported"."""
    cast = nested_cast()
    run_turn(make_runtime(tmp_path, cast))
    (outer,) = outputs(cast)
    assert outer["result"] == "inner: TaskRunError: taskrun: nested task runs are not supported"
    assert cast.requests_of("researcher") == []


def test_nested_spawns_can_be_enabled_within_the_depth_limit(tmp_path):
    """tRPC RejectNestedSpawnByDefault (WithNestedSpawns(true) allows it) — and unlike
    tRPC, a depth limit still holds (Lango's RecursionGuard, enforced in code)."""
    cast = nested_cast()
    run_turn(make_runtime(tmp_path, cast, delegation=with_delegation(nested_spawns=True)))
    (outer,) = outputs(cast)
    assert outer["result"] == "inner: completed"
    shallow = nested_cast()
    run_turn(
        make_runtime(
            tmp_path / "shallow",
            shallow,
            delegation=with_delegation(nested_spawns=True, max_spawn_depth=1),
        )
    )
    (refused,) = outputs(shallow)
    assert refused["result"].startswith("inner: TaskRunError: taskrun: spawn depth limit reached")


def test_one_turn_may_start_only_its_share_of_runs(tmp_path):
    """Unlike tRPC (fan-out left to the application): [delegation] max_spawns_per_turn."""
    cast = Cast(
        assistant=[
            *(tool_call("start_task_run", {"task": t, "agent_name": "researcher"}) for t in "xyz"),
            text("enough"),
        ],
        researcher=[text("ok")],
    )
    run_turn(make_runtime(tmp_path, cast, delegation=with_delegation(max_spawns_per_turn=2)))
    first, second, third = outputs(cast)
    assert (first["status"], second["status"]) == ("queued", "queued")
    assert third.startswith("TaskRunError: taskrun: fan-out limit reached")


def test_an_unknown_agent_is_refused_at_spawn(tmp_path):
    """Deviation: tRPC accepts any agent name and the run fails later; toolang refuses
    an unknown or disabled agent before anything is stored."""
    cast = Cast(
        assistant=[tool_call("start_task_run", {"task": "x", "agent_name": "ghost"}), text("no")]
    )
    runtime = make_runtime(tmp_path, cast)
    run_turn(runtime)
    (refused,) = outputs(cast)
    assert refused.startswith("TaskRunError: taskrun: agent 'ghost' is unknown (agents: ")
    store = runtime.open_store()
    assert [t.source for t in store.list_turns()] == ["chat"]
    store.close()


def test_the_task_groups_budget_queues_runs_beyond_it(tmp_path):
    """Unlike tRPC (every spawn starts at once): runs wait queued while the task group
    is at its max_running; the scheduler admits them, oldest first, as slots free up."""
    cast = Cast(
        assistant=[
            *(tool_call("start_task_run", {"task": t, "agent_name": "slowpoke"}) for t in "abc"),
            text("started three"),
        ],
        slowpoke=[lambda r: tool_call("hang", {"label": user_text(r)}), text("done")],
    )
    runtime = make_runtime(tmp_path, cast, task_max_running=1)

    async def scenario() -> list[tuple[int, int]]:
        loads = []
        inbox = runtime.open_inbox()
        parent = inbox.submit(NewTurnRequest(source="chat", thread_id="chat:t", input="go")).id
        async with serving(runtime, sources=()):
            await wait_status(inbox, parent, {"completed"})
            for label, spawned in zip("abc", outputs(cast), strict=True):
                await started(runtime, label)
                loads.append(runtime.store.group_load()["task"])
                release(runtime, label)
                await runtime.task_runs.wait(spawned["id"], owner="owner", timeout=10)
        inbox.store.close()
        return loads

    assert asyncio.run(scenario()) == [(1, 2), (1, 1), (1, 0)]


def test_a_waiting_parent_lends_its_slot_to_its_runs(tmp_path):
    """With one slot in all ([scheduler] max_running = 1) a parent waiting for its run
    would block it forever; waiting lends the slot, so the run runs and the wait ends."""
    cast = Cast(
        assistant=[
            tool_call(
                "start_task_run", {"task": "tides", "agent_name": "researcher", "mode": "sync"}
            ),
            text("got it"),
        ],
        researcher=RESEARCH,
    )
    turn = run_turn(make_runtime(tmp_path, cast, max_running=1))
    (run,) = outputs(cast)
    assert (turn.status, run["status"]) == (TurnStatus.COMPLETED, "completed")


def test_a_one_shot_runtime_also_runs_the_runs_its_turn_spawned(tmp_path):
    """`toolang chat` without `toolang run` serves only its own request: the runs that
    request spawns are admitted too (else a sync start would wait for nothing)."""
    cast = Cast(
        assistant=[
            tool_call(
                "start_task_run", {"task": "tides", "agent_name": "researcher", "mode": "sync"}
            ),
            text("got it"),
        ],
        researcher=RESEARCH,
    )
    runtime = make_runtime(tmp_path, cast)
    inbox = runtime.open_inbox()
    other = inbox.submit(NewTurnRequest(source="chat", thread_id="chat:other", input="later")).id
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="chat:t", input="go")).id
    asyncio.run(runtime.serve(asyncio.Event(), sources=(), only=[turn_id], until_idle=True))
    assert inbox.get(turn_id).status is TurnStatus.COMPLETED
    assert outputs(cast)[0]["status"] == "completed"
    assert inbox.get(other).status is TurnStatus.QUEUED  # still only what it was asked
    inbox.store.close()


def test_cancelling_the_parent_turn_while_it_waits_cancels_it_and_its_runs(tmp_path):
    """tRPC SyncWaitDeadlineErrors (a canceled parent context ends the sync wait) and
    ParentCancelWithoutEventErrorCancelsRun (cancelling the parent ends the run
    canceled, empty error, summary "canceled") — the parent here is the turn that
    spawned the run: cancellation cascades along `parent`."""
    cast = Cast(
        assistant=[
            tool_call("start_task_run", {"task": "x", "agent_name": "slowpoke", "mode": "sync"}),
            text("unreachable"),
        ],
        slowpoke=[tool_call("hang", {"label": "child"}), text("unreachable")],
    )
    runtime = make_runtime(tmp_path, cast)

    async def scenario() -> Any:
        inbox = runtime.open_inbox()
        parent = inbox.submit(NewTurnRequest(source="chat", thread_id="chat:t", input="go")).id
        async with serving(runtime, sources=()):
            await started(runtime, "child")
            (run,) = runtime.task_runs.list()
            inbox.cancel(parent, reason="the user changed their mind")
            stopped = await wait_status(inbox, parent, {"canceled"})
            run = await runtime.task_runs.wait(run.id, owner="owner", timeout=10)
        inbox.store.close()
        return stopped, run

    stopped, run = asyncio.run(scenario())
    assert (stopped.status, stopped.error) == (TurnStatus.CANCELED, "the user changed their mind")
    assert (run.status, run.error, run.summary) == (TaskRunStatus.CANCELED, "", "canceled")


def test_the_transcript_tool_reads_the_childs_events(tmp_path):
    """tRPC TranscriptToolReadsChildSessionEvents, through the tool (the last
    ``limit`` events), scoped to the calling thread."""
    cast = Cast(
        assistant=[
            tool_call(
                "start_task_run", {"task": "tides", "agent_name": "researcher", "mode": "sync"}
            ),
            lambda r: tool_call("read_task_run_transcript", {"id": run_id_from(r), "limit": 3}),
            text("read it"),
        ],
        researcher=RESEARCH,
    )
    run_turn(make_runtime(tmp_path, cast))
    _, transcript = outputs(cast)
    assert transcript["status"] == "completed"
    shown = [
        (e["role"], e.get("tool_calls") or e.get("tool_name") or e.get("content"))
        for e in transcript["events"]
    ]
    assert shown == [
        ("assistant", ["lookup_fact"]),
        ("tool", "lookup_fact"),
        ("assistant", "tides follow the moon"),
    ]
