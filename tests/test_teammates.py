"""The teammate tools (agent_spawn, agent_wait, agent_stop) over the task-run
controller: spawned teammates really run, are limited, and are visible — where
Lango's only wrote in-memory records nothing ever ran (reference/lango.md §3)."""

from __future__ import annotations

import asyncio
from typing import Any

from taskrun_helpers import make_runtime
from test_taskrun_tools import outputs, results, run_turn

from toolang_core import (
    ApprovalBook,
    Block,
    NewTurnRequest,
    TaskRunStatus,
    TurnStatus,
    hookimpl,
)
from toolang_core.testing.approvals import ask_a_person
from toolang_core.testing.cast import Cast, last_output, position, user_text
from toolang_core.testing.models import text, tool_call
from toolang_core.testing.runtimes import serving, wait_status


def test_agent_spawn_without_an_instruction_fails_before_anything_is_created(tmp_path):
    """The instruction is required: missing, the call fails validation; blank, the tool
    refuses it — either way no run is stored."""
    cast = Cast(
        assistant=[
            tool_call("agent_spawn", {"agent": "researcher"}),
            tool_call("agent_spawn", {"instruction": "   ", "agent": "researcher"}),
            text("could not"),
        ]
    )
    runtime = make_runtime(tmp_path, cast)
    run_turn(runtime)
    missing, blank = results(cast)
    assert missing["error_type"] == "invalid_params"
    assert "instruction" in missing["error"]
    assert blank["error"] == "TaskRunError: agent_spawn: instruction is required"
    store = runtime.open_store()
    assert [t.source for t in store.list_turns()] == ["chat"]
    assert store.list_records("toolang.taskrun.open") == []
    store.close()


def test_a_spawned_teammate_runs_and_agent_wait_returns_its_result(tmp_path):
    """Unlike Lango (spawned records were never run): the teammate is a task run the
    scheduler admits; agent_wait returns its terminal result."""
    cast = Cast(
        assistant=[
            tool_call(
                "agent_spawn",
                {
                    "instruction": "look up tides",
                    "agent": "researcher",
                    "spawn_reason": "needs a source",
                },
            ),
            lambda r: tool_call("agent_wait", {"agent_id": last_output(r)["agent_id"]}),
            text("done"),
        ],
        researcher=[tool_call("lookup_fact", {"topic": "tides"}), text("tides: the moon")],
    )
    runtime = make_runtime(tmp_path, cast)
    run_turn(runtime)
    spawned, waited = outputs(cast)
    assert (spawned["status"], spawned["agent"], spawned["timeout_seconds"]) == (
        "queued",
        "researcher",
        300.0,  # [delegation] default_timeout_seconds
    )
    assert waited == {
        "agent_id": spawned["agent_id"],
        "status": "completed",
        "result": "tides: the moon",
        "summary": "tides: the moon",
        "error": "",
    }
    store = runtime.open_store()
    turn = store.get(spawned["agent_id"])
    assert (turn.source, turn.agent, turn.meta["taskrun"]["spawn_reason"]) == (
        "task",
        "researcher",
        "needs a source",
    )
    store.close()


def test_agent_wait_times_out_with_the_current_status_and_agent_stop_stops_it(tmp_path):
    """Lango's agent_wait: a deadline returns {status, timeout: true} without an error;
    agent_stop cancels (deviation: stopping a finished teammate is no error, just
    nothing to stop)."""
    cast = Cast(
        assistant=[
            tool_call("agent_spawn", {"instruction": "wait", "agent": "slowpoke"}),
            lambda r: tool_call(
                "agent_wait", {"agent_id": last_output(r)["agent_id"], "timeout": 0.1}
            ),
            lambda r: tool_call("agent_stop", {"agent_id": last_output(r)["agent_id"]}),
            lambda r: tool_call("agent_wait", {"agent_id": last_output(r)["agent_id"]}),
            lambda r: tool_call("agent_stop", {"agent_id": last_output(r)["agent_id"]}),
            text("stopped"),
        ],
        slowpoke=[tool_call("hang", {"label": "never"}), text("unreachable")],
    )
    run_turn(make_runtime(tmp_path, cast))
    _, timed_out, stopped, final, again = outputs(cast)
    assert (timed_out["status"], timed_out["timeout"]) in (("queued", True), ("running", True))
    assert (stopped["stopped"], stopped["status"]) in ((True, "canceling"), (True, "canceled"))
    assert (final["status"], final["error"]) == ("canceled", "")
    assert (again["stopped"], again["status"]) == (False, "canceled")


def test_teammates_and_task_runs_share_one_controller(tmp_path):
    """agent_spawn's agent_id is a task-run id: list_task_runs and get_task_run see it."""
    cast = Cast(
        assistant=[
            tool_call("agent_spawn", {"instruction": "x", "agent": "researcher"}),
            tool_call("list_task_runs"),
            text("listed"),
        ],
        researcher=[text("ok")],
    )
    run_turn(make_runtime(tmp_path, cast))
    spawned, listed = outputs(cast)
    assert [r["id"] for r in listed["runs"]] == [spawned["agent_id"]]


def test_allowed_tools_narrow_the_teammate_and_a_call_outside_them_is_refused(tmp_path):
    """Spawn-time allowed_tools narrow the role's scope: the model is offered only
    those, and a call outside them is refused by the chain's scope check."""
    cast = Cast(
        assistant=[
            tool_call(
                "agent_spawn",
                {"instruction": "x", "agent": "researcher", "allowed_tools": ["lookup_fact"]},
            ),
            lambda r: tool_call("agent_wait", {"agent_id": last_output(r)["agent_id"]}),
            text("done"),
        ],
        researcher=[
            tool_call("lookup_source", {"topic": "x"}),
            tool_call("lookup_fact", {"topic": "x"}),
            text("only facts"),
        ],
    )
    run_turn(make_runtime(tmp_path, cast))
    first = cast.requests_of("researcher")[0]
    assert [spec.name for spec in first.tools] == ["lookup_fact"]
    refused, allowed = results(cast, "researcher")
    assert refused["error_type"] == "not_allowed"
    assert refused["error"] == "tool 'lookup_source' is outside agent 'researcher''s scope"
    assert allowed == {"ok": True, "output": "fact about x"}


def test_allowed_tools_can_never_widen_the_role(tmp_path):
    """allowed_tools outside the role's scope are refused at spawn, nothing stored."""
    cast = Cast(
        assistant=[
            tool_call(
                "agent_spawn",
                {"instruction": "x", "agent": "researcher", "allowed_tools": ["draft_text"]},
            ),
            text("refused"),
        ]
    )
    runtime = make_runtime(tmp_path, cast)
    run_turn(runtime)
    (refused,) = outputs(cast)
    assert refused.startswith(
        "TaskRunError: taskrun: allowed_tools asks for 'draft_text' outside agent 'researcher''s"
    )
    store = runtime.open_store()
    assert [t.source for t in store.list_turns()] == ["chat"]
    store.close()


class BlockDeepSources:
    """A SecurityFilter that blocks lookup_source in delegated work (spawn depth > 0)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, int, frozenset[str] | None]] = []

    @hookimpl
    def toolang_filter_tool_call(self, call, ctx):
        self.seen.append((call.name, ctx.agent, ctx.spawn_depth, ctx.allowed_tools))
        if call.name == "lookup_source" and ctx.spawn_depth > 0:
            return Block("sources are not looked up in delegated work")
        return None


def test_a_teammates_tool_calls_pass_the_security_filter(tmp_path):
    """Every delegated tool call passes the whole chain: the filter sees the teammate's
    call with its agent, spawn depth 1 and narrowed scope — and its block holds."""
    guard = BlockDeepSources()
    cast = Cast(
        assistant=[
            tool_call("agent_spawn", {"instruction": "x", "agent": "researcher"}),
            lambda r: tool_call("agent_wait", {"agent_id": last_output(r)["agent_id"]}),
            text("done"),
        ],
        researcher=[tool_call("lookup_source", {"topic": "x"}), text("blocked")],
    )
    run_turn(make_runtime(tmp_path, cast, plugins=[("guard", guard)]))
    (blocked,) = results(cast, "researcher")
    assert blocked["error_type"] == "blocked"
    assert "sources are not looked up in delegated work" in blocked["error"]
    assert ("lookup_source", "researcher", 1, frozenset({"lookup_fact", "lookup_source"})) in (
        guard.seen
    )


class ApproveDrafts:
    """An ApprovalGate asking a person before every draft_text."""

    @hookimpl
    def toolang_approve_tool_call(self, call, ctx):
        if call.name != "draft_text":
            return None
        return ask_a_person(call, ctx, prompt="draft this?", requester="tester")


def test_agent_wait_reports_a_teammate_blocked_on_approval(tmp_path):
    """A teammate whose tool call waits for a person: agent_wait returns at once with
    blocked: awaiting_approval and the approval to decide; once approved it finishes."""
    cast = Cast(
        assistant=[
            tool_call("agent_spawn", {"instruction": "x", "agent": "writer"}),
            lambda r: tool_call("agent_wait", {"agent_id": last_output(r)["agent_id"]}),
            text("it waits for you"),
        ],
        writer=[tool_call("draft_text", {"text": "hello"}), text("drafted")],
    )
    runtime = make_runtime(tmp_path, cast, plugins=[("gate", ApproveDrafts())])

    async def scenario() -> Any:
        inbox = runtime.open_inbox()
        parent = inbox.submit(NewTurnRequest(source="chat", thread_id="chat:t", input="go")).id
        async with serving(runtime, sources=()):
            await wait_status(inbox, parent, {"completed"})
            _, waited = outputs(cast)
            book = ApprovalBook(inbox.store)
            book.decide(waited["awaiting_approval"]["approval_id"], approved=True, by="ada")
            run = await runtime.task_runs.wait(waited["agent_id"], owner="owner", timeout=10)
        inbox.store.close()
        return waited, run

    waited, run = asyncio.run(scenario())
    assert (waited["status"], waited["blocked"]) == ("running", "awaiting_approval")
    assert (waited["awaiting_approval"]["tool"], waited["awaiting_approval"]["prompt"]) == (
        "draft_text",
        "draft this?",
    )
    assert (run.status, run.result) == (TaskRunStatus.COMPLETED, "drafted")


def test_a_teammate_spawned_without_an_agent_is_the_default_agent(tmp_path):
    """agent is optional: the default agent takes the instruction on its own thread."""
    steps = [tool_call("agent_spawn", {"instruction": "say hi"}), text("asked")]
    cast = Cast(assistant=lambda r: text("hi") if user_text(r) == "say hi" else steps[position(r)])
    runtime = make_runtime(tmp_path, cast)
    turn = run_turn(runtime)
    (spawned,) = outputs(cast)
    assert (turn.status, spawned["agent"]) == (TurnStatus.COMPLETED, "assistant")
    store = runtime.open_store()
    assert store.get(spawned["agent_id"]).output == "hi"
    store.close()


def test_a_blocked_teammate_reports_a_stable_grant_request_and_its_attempt(tmp_path):
    """Lango: approval-blocked teammate runs report their blocked condition, mirrored
    into the run ledger; the parent tells a new request from the same one still waiting."""
    cast = Cast(
        assistant=[
            tool_call("agent_spawn", {"instruction": "x", "agent": "writer"}),
            lambda r: tool_call("agent_wait", {"agent_id": last_output(r)["agent_id"]}),
            lambda r: tool_call("agent_wait", {"agent_id": last_output(r)["agent_id"]}),
            text("it waits for you"),
        ],
        writer=[
            tool_call("draft_text", {"text": "one"}, call_id="d1"),
            tool_call("draft_text", {"text": "two"}, call_id="d2"),
            text("drafted"),
        ],
    )
    runtime = make_runtime(tmp_path, cast, plugins=[("gate", ApproveDrafts())])

    async def scenario() -> Any:
        inbox = runtime.open_inbox()
        parent = inbox.submit(NewTurnRequest(source="chat", thread_id="chat:t", input="go")).id
        async with serving(runtime, sources=()):
            await wait_status(inbox, parent, {"completed"})
            _, first, again = outputs(cast)
            ApprovalBook(inbox.store).decide(first["grant_request_id"], approved=True, by="ada")
            controller = runtime.task_runs
            deadline = asyncio.get_running_loop().time() + 60
            while True:  # until the second request is the one it waits for (polled)
                assert asyncio.get_running_loop().time() < deadline, "no second request"
                run = await controller.wait(
                    first["agent_id"], owner="owner", timeout=10, until_blocked=True
                )
                wait = run.awaiting_approval
                if wait is None or wait.approval_id != first["grant_request_id"]:
                    break
                await asyncio.sleep(0.01)
            ledger = inbox.store.get_record("taskrun.blocked", first["agent_id"])
        inbox.store.close()
        return first, again, wait, ledger

    first, again, second, ledger = asyncio.run(scenario())
    assert (first["grant_attempt"], first["grant_state"]) == (1, "pending")
    assert first["grant_request_id"] == first["awaiting_approval"]["approval_id"]
    # waited on again, the same request still waiting: same id, same attempt
    assert (again["grant_request_id"], again["grant_attempt"]) == (first["grant_request_id"], 1)
    assert second is not None
    assert second.approval_id != first["grant_request_id"]  # a new request
    assert (second.attempt, second.state) == (2, "pending")
    assert ledger.data["grant_request_id"] == second.approval_id
    assert ledger.data["grant_attempt"] == 2
