"""The task-run controller, driven over a real SQLite store without a serving runtime.

The turn of each run is started and ended by hand through the store (claim, steps,
finish), so every state is reached deterministically. Where a test checks a behaviour
tRPC-Agent-Go's own tests check, its docstring names that test (reference/taskrun.md
§5); the others check where toolang deliberately differs.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from taskrun_helpers import Plane, make_runtime

from toolang_core import (
    TRACE_CONTEXT_META,
    SpawnRequest,
    TaskRunController,
    TaskRunError,
    TaskRunExists,
    TaskRunFilter,
    TaskRunNotFound,
    TaskRunStatus,
    TurnStatus,
)
from toolang_core.taskruns.merge import notes_of
from toolang_core.taskruns.transcript import normalise_limit
from toolang_core.taskruns.types import clip, is_terminal


@pytest.fixture
def plane(tmp_path):
    runtime = make_runtime(tmp_path)
    store = runtime.open_store()
    yield Plane(TaskRunController(store, runtime))
    store.close()


def answer(text: str, calls: tuple[str, ...] = (), usage: dict[str, int] | None = None) -> dict:
    return {
        "response": {
            "text": text,
            "tool_calls": [{"id": f"c-{n}", "name": n, "params": {}} for n in calls],
            "usage": usage or {},
        }
    }


# -- statuses and values ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("status", "terminal"),
    [
        ("completed", True),
        ("failed", True),
        ("canceled", True),
        ("queued", False),
        ("running", False),
        ("finalizing", False),
        ("canceling", False),
        ("nonsense", False),
    ],
)
def test_only_completed_failed_and_canceled_are_terminal(status, terminal):
    """tRPC types_test IsTerminal: true for completed, failed, canceled; false for the
    rest and for an unknown string."""
    assert is_terminal(status) is terminal


def test_clip_trims_and_cuts_by_characters():
    """tRPC store_test summarizeText: " trimmed " → "trimmed"; ("abcd", 2) → "ab";
    ("abc", 8) → "abc"; counted in characters (runes), not bytes."""
    assert clip(" trimmed ", 240) == "trimmed"
    assert clip("abcd", 2) == "ab"
    assert clip("abc", 8) == "abc"
    assert clip("ééé", 2) == "éé"


# -- spawn -----------------------------------------------------------------------------
def test_spawn_returns_a_queued_run_without_a_child_thread(plane):
    """tRPC SpawnCompletesRun (first half): Spawn returns queued; the queued view has no
    child session id yet (toolang: child_thread_id). Deviation from tRPC
    ScopesAndErrors (Spawn before Start gives ErrNotStarted): ingress is durable, so a
    run spawned while no runtime serves the store waits queued for one."""
    run = asyncio.run(
        plane.controller.spawn(SpawnRequest(owner="ada", parent_thread_id="chat:1", task="x"))
    )
    assert run.status is TaskRunStatus.QUEUED
    assert run.child_thread_id is None
    assert "child_thread_id" not in run.to_json()


def test_a_task_run_is_a_turn_request_of_source_task_on_its_child_thread(plane):
    """One execution model: the run is a turn request (its id is the run id) of source
    task on thread task:<id>, with owner, parent turn and thread, agent, the task as
    input, the timeout and the metadata — nothing else is needed to run it."""
    run_id = plane.spawn(
        "  summarise the notes  ",
        agent_name="writer",
        parent_turn_id="turn-1",
        timeout_seconds=30,
        metadata={"ticket": "T-1"},
        allowed_tools=("draft_text",),
        spawn_depth=1,
    )
    turn = plane.store.get(run_id)
    assert (turn.source, turn.thread_id, turn.thread_group) == ("task", f"task:{run_id}", "task")
    assert (turn.owner, turn.parent, turn.agent) == ("ada", "turn-1", "writer")
    assert (turn.input, turn.timeout_seconds, turn.status) == (
        "summarise the notes",
        30,
        TurnStatus.QUEUED,
    )
    assert turn.meta["taskrun"]["parent_thread_id"] == "chat:1"
    assert turn.meta["taskrun"]["metadata"] == {"ticket": "T-1"}
    assert (turn.meta["allowed_tools"], turn.meta["spawn_depth"]) == (["draft_text"], 1)


def test_a_w3c_trace_context_in_the_metadata_is_the_runs_trace_context(plane):
    """Work handed over from another process (A2A) carries the caller's traceparent in
    its metadata: the run's turn request keeps it where a tracer looks for it."""
    parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    traced = plane.store.get(plane.spawn("a", metadata={"traceparent": parent}))
    assert traced.meta[TRACE_CONTEXT_META] == {"traceparent": parent}
    malformed = plane.store.get(plane.spawn("b", metadata={"traceparent": "00-nope-01"}))
    assert TRACE_CONTEXT_META not in malformed.meta


@pytest.mark.parametrize(
    ("request_fields", "message"),
    [
        ({"owner": " ", "parent_thread_id": "", "task": ""}, "taskrun: empty owner"),
        ({"owner": "ada", "parent_thread_id": " ", "task": ""}, "taskrun: empty parent thread id"),
        ({"owner": "ada", "parent_thread_id": "chat:1", "task": "  "}, "taskrun: empty task"),
    ],
)
def test_spawn_checks_owner_then_parent_thread_then_task(plane, request_fields, message):
    """tRPC ScopesAndErrors: the three validation messages, in that order."""
    with pytest.raises(TaskRunError, match=message):
        asyncio.run(plane.controller.spawn(SpawnRequest(**request_fields)))
    assert plane.store.list_turns() == []


def test_spawning_an_id_twice_is_refused(plane):
    """tRPC ScopesAndErrors: a duplicate id gives ErrRunAlreadyExists."""
    plane.spawn(id="job-1")
    with pytest.raises(TaskRunExists, match="taskrun: run already exists"):
        plane.spawn(id="job-1")
    assert len(plane.store.list_turns()) == 1


def test_the_controllers_clock_sets_the_creation_time(plane):
    """tRPC OptionsNilAndContextBranches: WithClock drives CreatedAt."""
    plane.controller.clock = lambda: 1_800_000_000.0
    run = plane.get(plane.spawn())
    assert run.created_at == 1_800_000_000.0


def test_a_full_task_queue_refuses_the_spawn_and_leaves_nothing(tmp_path):
    """Unlike tRPC (no queue at all): the task group's max_queued bounds waiting runs;
    its overflow rule refuses a spawn with a clear error and nothing is stored."""
    runtime = make_runtime(tmp_path, task_max_queued=1)
    store = runtime.open_store()
    plane = Plane(TaskRunController(store, runtime))
    plane.spawn(id="first")
    with pytest.raises(TaskRunError, match="taskrun: not queued: group 'task' already has 1"):
        plane.spawn(id="second")
    assert store.get("second") is None
    assert [r.key for r in store.list_records("toolang.taskrun.open")] == ["first"]
    store.close()


# -- get and list ----------------------------------------------------------------------
def test_list_filters_by_owner_and_parent_thread_newest_first(plane):
    """tRPC ScopesAndErrors: list by owner gives 2, by owner and parent gives 1."""
    first = plane.spawn(parent_thread_id="chat:1")
    second = plane.spawn(parent_thread_id="chat:2")
    plane.spawn(owner="bob", parent_thread_id="chat:1")
    by_owner = plane.controller.list(TaskRunFilter(owner="ada"))
    assert [r.id for r in by_owner] == [second, first]
    scoped = plane.controller.list(TaskRunFilter(owner="ada", parent_thread_id="chat:1"))
    assert [r.id for r in scoped] == [first]
    assert len(plane.controller.list()) == 3  # the operator sees every owner's


def test_list_filters_by_status(plane):
    """tRPC OptionsNilAndContextBranches: a status filter works."""
    queued = plane.spawn()
    running = plane.spawn()
    plane.start(running)
    found = plane.controller.list(TaskRunFilter(status=TaskRunStatus.RUNNING))
    assert [r.id for r in found] == [running]
    assert [r.id for r in plane.controller.list(TaskRunFilter(status=TaskRunStatus.QUEUED))] == [
        queued
    ]


def test_get_and_cancel_of_an_unknown_run_are_not_found(plane):
    """tRPC ScopesAndErrors: Get and Cancel of a missing id give ErrRunNotFound."""
    with pytest.raises(TaskRunNotFound, match="taskrun: run not found"):
        plane.get("ghost")
    with pytest.raises(TaskRunNotFound):
        asyncio.run(plane.controller.cancel("ghost", owner="ada"))


def test_an_ordinary_turn_is_not_a_task_run(plane):
    """Only task runs are visible through the controller, never other turns by id."""
    from toolang_core import NewTurnRequest

    turn_id = (
        plane.controller.runtime.open_inbox()
        .submit(
            NewTurnRequest(source="task", thread_id="task:some-ref", input="a task", owner="ada")
        )
        .id
    )
    with pytest.raises(TaskRunNotFound):
        plane.get(turn_id)


def test_another_owner_gets_not_found_from_get_wait_cancel_and_transcript(plane):
    """tRPC RejectCrossOwnerAccess, enforced in the controller (tRPC only checks in the
    tools): another owner's run is indistinguishable from a missing one."""
    run_id = plane.spawn()
    plane.start(run_id)
    for attempt in (
        lambda: plane.get(run_id, owner="bob"),
        lambda: asyncio.run(plane.controller.wait(run_id, owner="bob", timeout=0)),
        lambda: asyncio.run(plane.controller.cancel(run_id, owner="bob")),
        lambda: plane.controller.read_transcript(run_id, owner="bob"),
    ):
        with pytest.raises(TaskRunNotFound, match="taskrun: run not found"):
            attempt()
    assert plane.get(run_id).status is TaskRunStatus.RUNNING  # untouched


# -- running, progress and the terminal classification ---------------------------------
def test_a_started_run_is_running_with_its_child_thread(plane):
    run_id = plane.spawn()
    plane.start(run_id)
    run = plane.get(run_id)
    assert (run.status, run.child_thread_id, run.attempt) == (
        TaskRunStatus.RUNNING,
        f"task:{run_id}",
        1,
    )
    assert run.started_at is not None and run.finished_at is None


def test_progress_is_none_before_the_first_event(plane):
    """tRPC ProgressAccumulatorHandlesSparseEvents: the snapshot is nil before any event."""
    run_id = plane.spawn()
    plane.start(run_id)
    plane.step(run_id, "prompt_build", {})
    assert plane.get(run_id).progress is None


def test_progress_counts_events_tool_calls_results_and_tokens(plane):
    """tRPC RecordsRunProgress: a tool call with usage 2/1/3, its result, a final answer
    with usage 4/3/7 → 3 events, 1 call, 1 result, tokens 6/4/10, last event time."""
    run_id = plane.spawn()
    plane.start(run_id)
    usage = {"prompt_tokens": 2, "completion_tokens": 1, "total_tokens": 3}
    plane.step(run_id, "model_call", answer("", ("lookup_fact",), usage))
    plane.step(run_id, "tool_call", {"call": {"id": "c-1", "name": "lookup_fact"}})
    plane.step(
        run_id,
        "model_call",
        answer("done", usage={"prompt_tokens": 4, "completion_tokens": 3, "total_tokens": 7}),
    )
    plane.end(run_id, output="done")
    run = plane.finalize(run_id)
    progress = run.progress
    assert (progress.event_count, progress.tool_call_count, progress.tool_result_count) == (
        3,
        1,
        1,
    )
    assert (progress.prompt_tokens, progress.completion_tokens, progress.total_tokens) == (6, 4, 10)
    last = plane.store.steps(run_id)[-1].finished_at
    assert progress.last_event_at == last
    assert (run.result, run.summary) == ("done", "done")


@pytest.mark.parametrize(
    ("cancel_first", "ending", "expected"),
    [
        (
            False,
            {"status": TurnStatus.COMPLETED, "output": " the answer "},
            ("completed", "", "the answer"),
        ),
        (
            False,
            {"status": TurnStatus.FAILED, "error": "boom", "outcome": "error"},
            ("failed", "boom", "boom"),
        ),
        (
            False,
            {"status": TurnStatus.FAILED, "error": "timed out after 1 s", "outcome": "timeout"},
            ("failed", "timed out after 1 s", "timed out after 1 s"),
        ),
        (
            True,
            {"status": TurnStatus.CANCELED, "outcome": "canceled", "error": "asked"},
            ("canceled", "", "canceled"),
        ),
        (
            True,
            {"status": TurnStatus.FAILED, "error": "worker canceled request", "outcome": "error"},
            ("failed", "worker canceled request", "worker canceled request"),
        ),
        (
            True,
            {
                "status": TurnStatus.FAILED,
                "error": "failed to cancel tool lease",
                "outcome": "error",
            },
            ("failed", "failed to cancel tool lease", "failed to cancel tool lease"),
        ),
        (True, {"status": TurnStatus.COMPLETED, "output": "made it"}, ("completed", "", "made it")),
    ],
    ids=[
        "completed",
        "failed",
        "timeout-is-failed",
        "canceled",
        "canceling-then-worker-canceled-text-is-failed",
        "canceling-then-lease-error-is-failed",
        "canceling-then-completed-keeps-the-answer",
    ],
)
def test_the_terminal_classification(plane, cancel_first, ending, expected):
    """tRPC FinishedRunView… (tests 24-26) and TimeoutWithoutEventErrorDoesNotComplete:
    a timeout ends failed; only a real cancellation ends canceled (an error whose text
    merely mentions "cancel" is a failure). Deviation: a run whose turn completed before
    the cancel reached it keeps its answer and ends completed (tRPC: canceled)."""
    run_id = plane.spawn()
    plane.start(run_id)
    if cancel_first:
        asyncio.run(plane.controller.cancel(run_id, owner="ada"))
    plane.end(run_id, **ending)
    run = plane.finalize(run_id)
    assert (run.status.value, run.error, run.summary) == expected
    if ending.get("outcome") == "timeout":
        assert run.outcome == "timeout"


def test_summary_and_result_are_cut_to_240_and_4000_characters(plane):
    run_id = plane.spawn()
    plane.start(run_id)
    plane.end(run_id, output="x" * 5000)
    run = plane.finalize(run_id)
    assert (len(run.summary), len(run.result)) == (240, 4000)


def test_the_result_is_the_last_answer_and_is_kept_when_the_run_fails(plane):
    """tRPC result_test ("a later full message replaces the text") and the Run doc
    ("Result … kept even on canceled/failed")."""
    run_id = plane.spawn()
    plane.start(run_id)
    plane.step(run_id, "model_call", answer("first thoughts", ("lookup_fact",)))
    plane.step(run_id, "model_call", answer("better thoughts", ("lookup_fact",)))
    plane.end(run_id, status=TurnStatus.FAILED, error="max steps", outcome="max_steps")
    run = plane.finalize(run_id)
    assert (run.status, run.result, run.outcome) == (
        TaskRunStatus.FAILED,
        "better thoughts",
        "max_steps",
    )


# -- cancel ----------------------------------------------------------------------------
def test_cancel_of_a_running_run_is_canceling_until_its_turn_stops(plane):
    """tRPC CancelAndWait and CancelWaitsForRunningChildExit: cancel gives changed and
    canceling (finished_at unset); a wait does not return meanwhile; once the turn has
    stopped the run is canceled with finished_at set."""
    run_id = plane.spawn()
    plane.start(run_id)
    run, changed = asyncio.run(plane.controller.cancel(run_id, owner="ada"))
    assert (changed, run.status, run.summary, run.finished_at) == (
        True,
        TaskRunStatus.CANCELING,
        "canceling",
        None,
    )
    waited = asyncio.run(plane.controller.wait(run_id, owner="ada", timeout=0.05))
    assert waited.status is TaskRunStatus.CANCELING
    plane.end(run_id, status=TurnStatus.CANCELED, outcome="canceled")
    plane.finalize(run_id)
    done = asyncio.run(plane.controller.wait(run_id, owner="ada", timeout=60))
    assert (done.status, done.error) == (TaskRunStatus.CANCELED, "")
    assert done.finished_at is not None


def test_cancel_of_a_queued_run_cancels_it_at_once(plane):
    """tRPC FinalizerRunsForQueuedCancel (status part): changed and canceled at once,
    never canceling."""
    run_id = plane.spawn()
    run, changed = asyncio.run(plane.controller.cancel(run_id, owner="ada"))
    assert (changed, run.status, run.summary) == (True, TaskRunStatus.CANCELED, "canceled")
    assert plane.store.get(run_id).status is TurnStatus.CANCELED


def test_cancel_of_a_finished_or_canceling_run_changes_nothing(plane):
    """tRPC ScopesAndErrors (after Wait(completed), Cancel gives changed=false) and
    CancelAfterChildReplyDoesNotOverrideExitStatus; a second cancel of a canceling run
    changes nothing either."""
    done = plane.spawn()
    plane.start(done)
    plane.end(done, output="ok")
    plane.finalize(done)
    run, changed = asyncio.run(plane.controller.cancel(done, owner="ada"))
    assert (changed, run.status) == (False, TaskRunStatus.COMPLETED)
    busy = plane.spawn()
    plane.start(busy)
    asyncio.run(plane.controller.cancel(busy, owner="ada"))
    run, changed = asyncio.run(plane.controller.cancel(busy, owner="ada"))
    assert (changed, run.status) == (False, TaskRunStatus.CANCELING)


def test_cancelling_a_run_cancels_the_runs_it_spawned(plane):
    """Cancellation cascades: a run's children (spawned with it as parent turn) too."""
    parent = plane.spawn()
    plane.start(parent)
    child = plane.spawn(parent_turn_id=parent, parent_thread_id=f"task:{parent}")
    asyncio.run(plane.controller.cancel(parent, owner="ada"))
    assert plane.get(child).status is TaskRunStatus.CANCELED


# -- wait ------------------------------------------------------------------------------
def test_wait_returns_the_current_view_when_its_timeout_passes(plane):
    """Deviation: tRPC's wait_task_run fails on timeout while a sync spawn returns the
    latest view; toolang's wait always returns the current view, and the run goes on."""
    run_id = plane.spawn()
    run = asyncio.run(plane.controller.wait(run_id, owner="ada", timeout=0.05))
    assert run.status is TaskRunStatus.QUEUED
    assert plane.store.get(run_id).status is TurnStatus.QUEUED


def test_cancelling_a_waiter_leaves_the_run_alone(plane):
    """tRPC WaitHonorsContext: a waiter whose context is cancelled stops waiting (here:
    its asyncio task is cancelled); the run is not affected."""
    run_id = plane.spawn()

    async def scenario() -> None:
        waiter = asyncio.create_task(plane.controller.wait(run_id, owner="ada"))
        await asyncio.sleep(0.02)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter

    asyncio.run(scenario())
    assert plane.get(run_id).status is TaskRunStatus.QUEUED


def test_a_waiter_on_another_connection_sees_the_result(plane, tmp_path):
    """Persistence in the store: a controller over another connection (another process,
    the CLI) waits for and reads the same run."""
    run_id = plane.spawn()
    other_store = plane.controller.runtime.open_store()
    other = TaskRunController(other_store, plane.controller.runtime)

    async def scenario() -> Any:
        waiter = asyncio.create_task(other.wait(run_id, owner="ada", timeout=10))
        plane.start(run_id)
        plane.end(run_id, output="seen elsewhere")
        await plane.controller.finalize(run_id)
        return await waiter

    run = asyncio.run(scenario())
    assert (run.status, run.result) == (TaskRunStatus.COMPLETED, "seen elsewhere")
    other_store.close()


# -- transcript ------------------------------------------------------------------------
def test_the_transcript_maps_the_task_answers_and_tool_calls(plane):
    """tRPC TranscriptToolReadsChildSessionEvents and the event helpers: content, the
    tool call names, the tool result, an error and the final content are mapped."""
    run_id = plane.spawn("find facts", agent_name="researcher")
    plane.start(run_id)
    plane.step(run_id, "prompt_build", {})
    plane.step(run_id, "model_call", answer("looking", ("lookup_fact",)))
    plane.step(
        run_id,
        "tool_call",
        {
            "call": {"id": "c-1", "name": "lookup_fact"},
            "result": {"ok": True, "output": "fact about x"},
        },
    )
    plane.step(
        run_id,
        "tool_call",
        {
            "call": {"id": "c-2", "name": "lookup_source"},
            "result": {"ok": False, "error": "no source"},
        },
        status="failed",
    )
    plane.step(run_id, "model_call", answer("x is true"))
    events = plane.controller.read_transcript(run_id, owner="ada").to_json()["events"]
    shown = [
        (e["role"], e.get("content"), e.get("tool_name"), e.get("tool_calls"), e.get("error"))
        for e in events
    ]
    assert shown == [
        ("user", "find facts", None, None, None),
        ("assistant", "looking", None, ["lookup_fact"], None),
        ("tool", "fact about x", "lookup_fact", None, None),
        ("tool", None, "lookup_source", None, "no source"),
        ("assistant", "x is true", None, None, None),
    ]
    assert all(e["author"] == "researcher" for e in events[1:])


def test_the_transcript_keeps_the_last_events_within_the_cap(plane):
    """tRPC TranscriptToolTrimsNormalizedEventLimit: 202 events with limit 201 give the
    last 200, the first being answer-001."""
    run_id = plane.spawn()
    plane.start(run_id)
    for number in range(1, 202):  # with the task itself: 202 events
        plane.step(run_id, "model_call", answer(f"answer-{number:03d}"))
    events = plane.controller.read_transcript(run_id, owner="ada", limit=201).events
    assert len(events) == 200
    assert events[0].content == "answer-002"
    assert events[-1].content == "answer-201"
    default = plane.controller.read_transcript(run_id, owner="ada").events
    assert (len(default), default[0].content) == (40, "answer-162")


@pytest.mark.parametrize(("given", "used"), [(0, 40), (None, 40), (-1, 40), (3, 3), (201, 200)])
def test_transcript_limits_default_to_40_and_stop_at_200(given, used):
    """tRPC NormalizeTranscriptLimit: 0 → 40, 3 → 3, 201 → 200."""
    assert normalise_limit(given) == used


def test_the_transcript_of_another_thread_or_of_a_queued_run_is_refused(plane):
    """tRPC TranscriptToolRequiresSessionServiceAndParentSession: another parent
    session gives NotFound; an empty child id gives "child session id unavailable"."""
    run_id = plane.spawn(parent_thread_id="chat:1")
    with pytest.raises(TaskRunError, match="child thread id unavailable"):
        plane.controller.read_transcript(run_id, owner="ada")
    plane.start(run_id)
    with pytest.raises(TaskRunNotFound):
        plane.controller.read_transcript(run_id, owner="ada", parent_thread_id="chat:2")
    assert plane.controller.read_transcript(run_id, owner="ada", parent_thread_id="chat:1")


# -- retention -------------------------------------------------------------------------
def test_prune_deletes_finished_runs_past_the_retention_and_keeps_the_rest(plane):
    """Unlike tRPC (runs grow without bound): finalized runs older than the retention
    are deleted with their turn, steps, thread and records; newer or unfinished runs
    stay, and so does the note a pruned run left in its parent thread."""
    old, recent, active = plane.spawn(), plane.spawn(), plane.spawn()
    for run_id in (old, recent):
        plane.start(run_id)
        plane.step(run_id, "model_call", answer("done"))
        plane.end(run_id, output="done")
        plane.finalize(run_id)
    record = plane.store.get_record("toolang.taskrun", old)
    plane.store.put_record(
        "toolang.taskrun", old, {**record.data, "finished_at": time.time() - 8 * 86400}, now=0
    )
    assert plane.controller.prune(older_than_seconds=7 * 86400, dry_run=True) == [old]
    assert plane.controller.prune(older_than_seconds=7 * 86400) == [old]
    assert plane.store.get(old) is None
    assert plane.store.steps(old) == []
    assert plane.store.thread(f"task:{old}") is None
    assert plane.store.get_record("toolang.taskrun", old) is None
    assert {r.id for r in plane.controller.list()} == {recent, active}
    assert old in [n.run_id for n in notes_of(plane.store, "chat:1")]
