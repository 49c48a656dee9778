"""Durable approvals in the core: the book, and a turn parked until a person decides.

The gate here is a small in-test plugin that asks for every call; the real policy lives
in toolang-hook-approval-gate and has its own tests.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from person_helpers import create_request, serve_until_decided, submit as submit_turn

from toolang_core import ApprovalBook, ApprovalError, Denied, Granted, Pending, Tool, hookimpl
from toolang_core.config import ToolangConfig
from toolang_core.config.model import AgentsConfig, ModelsConfig, RuntimeConfig
from toolang_core.runtime import Runtime
from toolang_core.store.types import NewTurnRequest, TurnStatus
from toolang_core.testing.approvals import ask_a_person
from toolang_core.testing.models import ScriptedModel, text, tool_call
from toolang_core.testing.runtimes import wait_status

RAN: list[str] = []


def touch(name: str) -> str:
    """Record a run."""
    RAN.append(name)
    return f"touched {name}"


class AskEveryTime:
    def __init__(self, timeout_seconds=None):
        self.timeout_seconds = timeout_seconds

    @hookimpl
    def toolang_register_tools(self, register):
        register(Tool.from_function(touch, blocking=False))

    @hookimpl
    def toolang_approve_tool_call(self, call, ctx):
        return ask_a_person(
            call,
            ctx,
            prompt=f"run {call.name}?",
            requester="tester",
            timeout_seconds=self.timeout_seconds,
        )


@pytest.fixture(autouse=True)
def _reset():
    RAN.clear()


def make(tmp_path, model, gate, *, grace=0.0, max_attempts=3, **agents):
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(
            executor="agent",
            poll_seconds=0.02,
            shutdown_grace_seconds=grace,
            max_attempts=max_attempts,
        ),
        models=ModelsConfig(default="scripted"),
        agents=AgentsConfig(**agents),
    )
    return Runtime.with_plugins(config, [("scripted", model.plugin()), ("gate", gate)], env={})


def _the_pending(book, turn_id):
    (pending,) = book.list("pending")
    return pending


async def serve_until(runtime, turn_id, decide=None, *, deadline=20.0):
    """Serve; when the turn awaits approval, call ``decide(book, approval)``; return it."""
    return await serve_until_decided(
        runtime, turn_id, ApprovalBook, _the_pending, decide, deadline=deadline
    )


def submit(runtime, text_in="go"):
    return submit_turn(runtime, text_in)


def test_an_approved_call_runs_after_the_turn_waited_in_awaiting_approval(tmp_path):
    model = ScriptedModel([tool_call("touch", {"name": "x"}), text("done")])
    runtime = make(tmp_path, model, AskEveryTime())
    turn_id = submit(runtime)

    def approve(book, pending):
        assert RAN == []  # nothing ran before the decision
        book.decide(pending.id, approved=True, by="alice")

    turn = asyncio.run(serve_until(runtime, turn_id, approve))
    assert (turn.status, turn.output, RAN) == (TurnStatus.COMPLETED, "done", ["x"])


def test_a_denied_call_is_not_run_and_the_model_is_told_who_denied_it_and_why(tmp_path):
    model = ScriptedModel([tool_call("touch", {"name": "x"}), text("ok, I will not")])
    runtime = make(tmp_path, model, AskEveryTime())
    turn_id = submit(runtime)
    turn = asyncio.run(
        serve_until(
            runtime,
            turn_id,
            lambda book, p: book.decide(p.id, approved=False, by="bob", reason="not today"),
        )
    )
    assert (turn.status, RAN) == (TurnStatus.COMPLETED, [])
    told = model.calls[1].messages[-1].content
    assert "bob denied touch: not today; it was not run" in told


class PointsAt:
    """A gate that answers every call with the request ``approval_id``."""

    def __init__(self):
        self.approval_id = ""

    @hookimpl
    def toolang_register_tools(self, register):
        register(Tool.from_function(touch, blocking=False))

    @hookimpl
    def toolang_approve_tool_call(self, call, ctx):
        return Pending(self.approval_id, "run it?")


def test_a_decision_on_another_turns_request_runs_nothing(tmp_path):
    """The turn waits on the request a gate names, and takes its decision only when
    the request is this turn's, for this tool: an approval of another turn's call
    (one a gate named by mistake, or a record pointed elsewhere) runs nothing here."""
    model = ScriptedModel([tool_call("touch", {"name": "x"}), text("fine")])
    gate = PointsAt()
    runtime = make(tmp_path, model, gate)
    other, turn_id = submit(runtime, "first"), submit(runtime, "second")
    store = runtime.open_store()
    book = ApprovalBook(store)
    elsewhere = create_request(
        book,
        other,
        call_id="c9",
        params={"name": "x"},
        thread_id="cli:elsewhere",
        prompt="run touch?",
    )
    book.decide(elsewhere.id, approved=True, by="alice")
    store.cancel(other, now=time.time())
    store.close()
    gate.approval_id = elsewhere.id
    turn = asyncio.run(serve_until(runtime, turn_id))
    assert (turn.status, RAN) == (TurnStatus.COMPLETED, [])
    assert f"approval {elsewhere.id} is for another call" in model.calls[1].messages[-1].content


def test_a_request_nobody_decides_expires_and_the_model_hears_so(tmp_path):
    model = ScriptedModel([tool_call("touch", {"name": "x"}), text("gave up")])
    runtime = make(tmp_path, model, AskEveryTime(timeout_seconds=0.1))
    turn = asyncio.run(serve_until(runtime, submit(runtime)))
    assert (turn.status, RAN) == (TurnStatus.COMPLETED, [])
    assert "nobody approved touch in time; it was not run" in model.calls[1].messages[-1].content


def test_waiting_for_a_person_does_not_count_against_the_agents_time_limit(tmp_path):
    model = ScriptedModel([tool_call("touch", {"name": "x"}), text("done")])
    runtime = make(tmp_path, model, AskEveryTime(), turn_timeout_seconds=0.5)
    turn_id = submit(runtime)

    def approve_late(book, pending):
        time.sleep(1.0)  # a slow person: twice the agent's whole limit
        book.decide(pending.id, approved=True, by="alice")

    turn = asyncio.run(serve_until(runtime, turn_id, approve_late))
    assert (turn.status, RAN) == (TurnStatus.COMPLETED, ["x"])


def test_a_request_expires_as_soon_as_its_turn_is_canceled(tmp_path):
    model = ScriptedModel([tool_call("touch", {"name": "x"})])
    runtime = make(tmp_path, model, AskEveryTime())
    turn_id = submit(runtime)

    def cancel_instead(book, pending):
        book.store.cancel(turn_id, now=time.time())

    turn = asyncio.run(serve_until(runtime, turn_id, cancel_instead))
    assert turn.status is TurnStatus.CANCELED
    store = runtime.open_store()
    book = ApprovalBook(store)
    (request,) = book.list()  # expired when the turn ended, before anyone tried to decide
    assert (request.status, request.reason) == ("expired", "its turn was canceled")
    with pytest.raises(ApprovalError, match="was already expired"):
        book.decide(request.id, approved=True, by="alice")
    assert RAN == []
    store.close()


def test_a_request_expires_as_soon_as_its_turn_times_out(tmp_path):
    model = ScriptedModel([tool_call("touch", {"name": "x"})])
    runtime = make(tmp_path, model, AskEveryTime())
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(
        NewTurnRequest(source="chat", thread_id="cli:a", input="go", timeout_seconds=0.5)
    ).id
    inbox.store.close()
    turn = asyncio.run(serve_until(runtime, turn_id))
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "timeout")
    store = runtime.open_store()
    (request,) = ApprovalBook(store).list()
    assert (request.status, request.reason) == ("expired", "its turn timed out")
    store.close()


def test_a_request_whose_turn_ended_unwatched_expires_at_the_next_start(tmp_path):
    runtime = make(tmp_path, ScriptedModel([]), AskEveryTime())
    turn_id = submit(runtime)
    store = runtime.open_store()
    book = ApprovalBook(store)
    made = create_request(book, turn_id)
    other = create_request(book, "t-elsewhere", thread_id="cli:b")
    store.cancel(turn_id, now=time.time())  # no runtime was there to see it
    store.close()
    asyncio.run(runtime.serve(asyncio.Event(), sources=(), until_idle=True))
    store = runtime.open_store()
    book = ApprovalBook(store)
    assert book.get(made.id).status == "expired"
    assert book.get(made.id).reason == "its turn ended (canceled)"
    assert book.get(other.id).status == "expired"  # its turn is gone altogether
    assert book.list("pending") == []
    store.close()


def test_requests_are_found_by_id_and_unknown_ids_are_a_clear_error(tmp_path):
    runtime = make(tmp_path, ScriptedModel([]), AskEveryTime())
    store = runtime.open_store()
    book = ApprovalBook(store)
    made = create_request(book, "t1", params={"name": "x"})
    assert book.get(made.id) == made
    assert create_request(book, "t1") == made  # the same call asks once, also after a restart
    with pytest.raises(ApprovalError, match="no approval request 'ap-nope'"):
        book.get("ap-nope")
    store.close()


def test_thread_grants_can_be_listed_and_revoked(tmp_path):
    runtime = make(tmp_path, ScriptedModel([]), AskEveryTime())
    store = runtime.open_store()
    book = ApprovalBook(store)
    book.grant("cli:a", "touch", by="alice")
    book.grant("cli:b", "touch", by="alice")
    assert book.granted("cli:a", "touch")
    (grant,) = book.grants("cli:a")
    assert grant == {"thread_id": "cli:a", "tool": "touch", "by": "alice", "at": grant["at"]}
    assert book.revoke("cli:a", "touch") is True
    assert book.revoke("cli:a", "touch") is False
    assert not book.granted("cli:a", "touch")
    assert [g["thread_id"] for g in book.grants()] == ["cli:b"]
    store.close()


def test_a_decision_reads_as_granted_or_denied():
    from toolang_core import Approval

    base = Approval(
        id="ap-1",
        key="t:c",
        tool="fs_write",
        params={},
        params_hash="h",
        turn_id="t",
        thread_id="cli:a",
        agent="assistant",
        requester=None,
        prompt="",
        created_at=0.0,
    )
    import attrs

    assert ApprovalBook.decision(attrs.evolve(base, status="approved", decided_by="al")) == (
        Granted("approved by al")
    )
    assert ApprovalBook.decision(attrs.evolve(base, status="denied")) == Denied(
        "the operator denied fs_write; it was not run"
    )
    with pytest.raises(ApprovalError, match="still pending"):
        ApprovalBook.decision(base)


def test_a_request_outlives_a_shutdown_for_the_turn_to_find_when_it_resumes(tmp_path):
    model = ScriptedModel([tool_call("touch", {"name": "x"})])
    runtime = make(tmp_path, model, AskEveryTime())
    turn_id = submit(runtime)

    async def serve_until_parked_then_stop():
        inbox = runtime.open_inbox()
        stop = asyncio.Event()
        serving = asyncio.create_task(runtime.serve(stop, sources=()))
        try:
            end = time.monotonic() + 20
            while inbox.get(turn_id).status is not TurnStatus.AWAITING_APPROVAL:
                assert time.monotonic() < end, "the turn never parked"
                await asyncio.sleep(0.02)
        finally:
            stop.set()
            await serving
            inbox.store.close()

    asyncio.run(serve_until_parked_then_stop())
    store = runtime.open_store()
    assert store.get(turn_id).status is TurnStatus.QUEUED  # handed back, not ended
    (request,) = ApprovalBook(store).list()
    assert request.status == "pending"
    store.close()


def stop_once(runtime: Runtime, turn_id: str, status: TurnStatus) -> None:
    """Serve ``runtime`` until the turn is ``status``, then stop it and wait for the stop
    — at most 30 s, where a grace of 600 s waited out would time out."""

    async def main() -> None:
        inbox = runtime.open_inbox()
        stop = asyncio.Event()
        serving = asyncio.create_task(runtime.serve(stop, sources=()))
        try:
            await wait_status(inbox, turn_id, {status.value}, timeout=20)
            stop.set()
            await asyncio.wait_for(asyncio.shield(serving), 30)
        finally:
            stop.set()
            runtime.scheduler.end_grace()  # a failing test must not wait 600 s
            await serving
            inbox.store.close()

    asyncio.run(main())


def test_a_turn_waiting_for_a_person_is_handed_back_at_once_not_after_the_grace(tmp_path):
    model = ScriptedModel([tool_call("touch", {"name": "x"}), text("done")])
    runtime = make(tmp_path, model, AskEveryTime(), grace=600)
    turn_id = submit(runtime)

    stop_once(runtime, turn_id, TurnStatus.AWAITING_APPROVAL)
    store = runtime.open_store()
    assert store.get(turn_id).status is TurnStatus.QUEUED
    (request,) = ApprovalBook(store).list()
    assert request.status == "pending"
    # nothing ran, and the handed-back attempt left no tool_call step to mislead a reader
    assert RAN == []
    assert [s for s in store.steps(turn_id) if s.kind == "tool_call"] == []
    store.close()


def test_a_turn_that_comes_to_wait_for_a_person_during_the_grace_is_handed_back_then(
    tmp_path,
):
    # the model answers 0.5 s after the stop: the turn runs on in the grace, then parks
    model = ScriptedModel([tool_call("touch", {"name": "x"}, delay=0.5), text("done")])
    runtime = make(tmp_path, model, AskEveryTime(), grace=600)
    turn_id = submit(runtime)

    stop_once(runtime, turn_id, TurnStatus.RUNNING)
    store = runtime.open_store()
    assert store.get(turn_id).status is TurnStatus.QUEUED
    (request,) = ApprovalBook(store).list()  # it did come to ask
    assert request.status == "pending"
    store.close()


def test_a_decision_from_a_process_a_tool_started_is_refused_and_changes_nothing(
    tmp_path, monkeypatch
):
    from toolang_core import TOOL_CALL_ENV
    from toolang_core.tools.approvals import DecisionFromTool

    runtime = make(tmp_path, ScriptedModel([]), AskEveryTime())
    store = runtime.open_store()
    book = ApprovalBook(store)
    made = create_request(book, submit(runtime))
    monkeypatch.setenv(TOOL_CALL_ENV, "t-1:c-1")
    for approved in (True, False):
        with pytest.raises(DecisionFromTool, match=r"started by tool call t-1:c-1.*only a person"):
            book.decide(made.id, approved=approved, by="agent", always=True)
    with pytest.raises(DecisionFromTool):
        book.grant("cli:a", "touch", by="agent")
    assert book.get(made.id).status == "pending"
    assert not book.granted("cli:a", "touch")
    monkeypatch.delenv(TOOL_CALL_ENV)
    assert book.decide(made.id, approved=True, by="alice").status == "approved"
    store.close()


def test_a_turn_handed_back_at_every_deploy_while_it_waits_is_not_abandoned(tmp_path):
    """Five restarts while nobody decides, with max_attempts 2: each hand-back while
    parked starts a new attempt but spends none, so the turn still waits, its request
    still pending, and runs when the person approves."""
    model = ScriptedModel([tool_call("touch", {"name": "x"}), text("done")])
    turn_id = submit(make(tmp_path, model, AskEveryTime(), max_attempts=2))
    for deploy in range(5):
        runtime = make(tmp_path, model, AskEveryTime(), grace=600, max_attempts=2)
        stop_once(runtime, turn_id, TurnStatus.AWAITING_APPROVAL)
        store = runtime.open_store()
        turn = store.get(turn_id)
        assert (turn.status, turn.attempt) == (TurnStatus.QUEUED, deploy + 1), turn.error
        (request,) = ApprovalBook(store).list()
        assert request.status == "pending"
        store.close()
    runtime = make(tmp_path, model, AskEveryTime(), max_attempts=2)

    def approve(book, pending):
        book.decide(pending.id, approved=True, by="alice")

    turn = asyncio.run(serve_until(runtime, turn_id, approve))
    assert (turn.status, turn.output, RAN) == (TurnStatus.COMPLETED, "done", ["x"])
