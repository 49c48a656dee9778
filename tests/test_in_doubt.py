"""Tool calls in doubt: what is decided, and what a resumed turn does about them.

The decision alone (:func:`toolang_core.turn.in_doubt.decide`), then whole turns over a
real SQLite store holding what a crashed attempt left: a tool call's intent and no
result.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from person_helpers import create_request, only_pending

from toolang_core import Tool, ToolCallContext, hookimpl
from toolang_core.config import ToolangConfig
from toolang_core.config.model import ModelsConfig, RuntimeConfig, ToolsConfig
from toolang_core.runtime import Runtime
from toolang_core.store.types import NewTurnRequest, StepRecord, TurnStatus
from toolang_core.testing.models import ScriptedModel, text, tool_call
from toolang_core.testing.runtimes import crashed_with_intent
from toolang_core.tools.approvals import ApprovalBook
from toolang_core.tools.types import Denied, Granted, ToolCall
from toolang_core.turn.in_doubt import decide

CALL = ToolCall("c1", "send_mail", {"to": "ada"})


async def never_asked(prompt: str) -> Granted | Denied:
    raise AssertionError("nobody should be asked")


# -- the decision ------------------------------------------------------------------------


def test_an_idempotent_tool_in_doubt_runs_again():
    doubt = asyncio.run(
        decide(CALL, idempotent=True, intent_attempt=1, policy="ask_person", ask_person=never_asked)
    )
    assert (doubt.decision, doubt.rerun, doubt.intent_attempt) == ("rerun", True, 1)


def test_a_tool_not_idempotent_is_not_run_again_and_the_model_is_told():
    doubt = asyncio.run(
        decide(
            CALL, idempotent=False, intent_attempt=2, policy="tell_model", ask_person=never_asked
        )
    )
    assert (doubt.decision, doubt.rerun) == ("told_model", False)
    assert doubt.result is not None and not doubt.result.ok
    assert doubt.result.error_type == "in_doubt"
    assert "send_mail may already have run" in doubt.result.error
    assert "attempt 2" in doubt.result.error and "Check whether" in doubt.result.error


def test_with_ask_person_an_approval_runs_it_again():
    asked: list[str] = []

    async def approve(prompt: str) -> Granted | Denied:
        asked.append(prompt)
        return Granted("approved by ada")

    doubt = asyncio.run(
        decide(CALL, idempotent=False, intent_attempt=1, policy="ask_person", ask_person=approve)
    )
    assert (doubt.decision, doubt.rerun) == ("approved", True)
    assert "approved by ada" in doubt.detail
    assert len(asked) == 1 and "may already have run" in asked[0]


def test_with_ask_person_a_refusal_tells_the_model_it_was_not_run_again():
    async def deny(prompt: str) -> Granted | Denied:
        return Denied("ada denied send_mail; it was not run")

    doubt = asyncio.run(
        decide(CALL, idempotent=False, intent_attempt=1, policy="ask_person", ask_person=deny)
    )
    assert (doubt.decision, doubt.rerun) == ("denied", False)
    assert doubt.result is not None and doubt.result.error_type == "in_doubt"
    assert "ada denied send_mail" in doubt.result.error


def test_tools_are_not_idempotent_unless_declared():
    def look(q: str) -> str:
        """Look.

        :param q: what
        """
        return q

    assert Tool.from_function(look).idempotent is False
    assert Tool.from_function(look, idempotent=True).idempotent is True


# -- resumed turns -------------------------------------------------------------------------

effects: list[tuple[str, str | None]] = []


def send_mail(to: str, context: ToolCallContext | None = None) -> str:
    """Send a mail (an effect that must not happen twice).

    :param to: whom to
    """
    assert context is not None
    effects.append(("send_mail", context.idempotency_key))
    return f"sent to {to}"


def put_file(to: str, context: ToolCallContext | None = None) -> str:
    """Store a file under the call's idempotency key (safe to repeat).

    :param to: whose
    """
    assert context is not None
    effects.append(("put_file", context.idempotency_key))
    return f"stored for {to}"


class Tools:
    @staticmethod
    @hookimpl
    def toolang_register_tools(register):
        register(Tool.from_function(send_mail, blocking=False))
        register(Tool.from_function(put_file, blocking=False, idempotent=True))


@pytest.fixture(autouse=True)
def _reset():
    effects.clear()


def make(tmp_path, model, in_doubt="tell_model"):
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.05, shutdown_grace_seconds=0),
        models=ModelsConfig(default="scripted"),
        tools=ToolsConfig(in_doubt=in_doubt),
    )
    return Runtime.with_plugins(config, [("scripted", model.plugin()), ("tools", Tools())], env={})


def serve(runtime, *, while_serving=None):
    async def main():
        serving = asyncio.create_task(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
        if while_serving is not None:
            await while_serving(serving)
        await serving

    asyncio.run(main())
    store = runtime.open_store()
    return store


def test_a_resumed_turn_does_not_run_a_call_in_doubt_again_and_tells_the_model(tmp_path):
    model = ScriptedModel([tool_call("send_mail", {"to": "ada"}, call_id="c1"), text("checked")])
    runtime = make(tmp_path, model)
    turn_id = crashed_with_intent(runtime, "send_mail")
    store = serve(runtime)
    turn = store.get(turn_id)
    assert (turn.status, turn.output, turn.attempt) == (TurnStatus.COMPLETED, "checked", 2)
    assert effects == []  # not run again
    told = model.calls[1].messages[-1]
    assert told.role == "tool" and "send_mail may already have run" in told.content
    (step,) = [s for s in store.steps(turn_id) if s.kind == "tool_call"]
    assert (step.status, step.attempt) == ("failed", 2)
    assert step.data["in_doubt"]["decision"] == "told_model"
    assert step.data["in_doubt"]["intent_attempt"] == 1
    ((stage, verdict),) = [(c["stage"], c["verdict"]) for c in step.data["chain"]]
    assert (stage, verdict) == ("in_doubt", "not_run")  # no filter, gate or tool ran
    store.close()


def test_an_idempotent_call_in_doubt_runs_again_under_the_same_key(tmp_path):
    model = ScriptedModel([tool_call("put_file", {"to": "ada"}, call_id="c1"), text("stored")])
    runtime = make(tmp_path, model)
    turn_id = crashed_with_intent(runtime, "put_file")
    store = serve(runtime)
    assert store.get(turn_id).status is TurnStatus.COMPLETED
    assert effects == [("put_file", f"{turn_id}:tool:c1")]
    step = store.find_step(f"{turn_id}:tool:c1")
    assert (step.status, step.attempt) == ("completed", 2)
    assert step.data["in_doubt"]["decision"] == "rerun"
    assert step.data["result"]["output"] == "stored for ada"
    store.close()


def test_an_ordinary_call_stores_its_intent_before_the_tool_runs(tmp_path):
    seen: list[str | None] = []

    class Spy:
        @staticmethod
        @hookimpl
        def toolang_observe_tool_result(call, result, ctx):
            # by now the tool ran: its intent is stored, its result not yet
            store = ctx.runtime.store
            seen.append(store.find_step(ctx.idempotency_key).status)

    model = ScriptedModel([tool_call("send_mail", {"to": "ada"}, call_id="c1"), text("sent")])
    runtime = make(tmp_path, model)
    runtime.host.register(Spy(), "spy")
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:t", input="mail")).id
    inbox.store.close()
    store = serve(runtime)
    assert seen == ["intent"]
    (step,) = [s for s in store.steps(turn_id) if s.kind == "tool_call"]
    assert (step.status, step.data["result"]["output"]) == ("completed", "sent to ada")
    assert "in_doubt" not in step.data
    assert effects == [("send_mail", f"{turn_id}:tool:c1")]
    store.close()


@pytest.mark.parametrize("approved", [True, False])
def test_with_ask_person_a_person_decides_whether_a_call_in_doubt_runs_again(tmp_path, approved):
    final = "sent again" if approved else "not sent"
    model = ScriptedModel([tool_call("send_mail", {"to": "ada"}, call_id="c1"), text(final)])
    runtime = make(tmp_path, model, in_doubt="ask_person")
    turn_id = crashed_with_intent(runtime, "send_mail")

    async def decide_when_asked(serving):
        book = ApprovalBook(runtime.open_store())
        approval = await only_pending(book, serving)
        assert approval.turn_id == turn_id and approval.tool == "send_mail"
        assert "may already have run" in approval.prompt
        assert book.store.get(turn_id).status is TurnStatus.AWAITING_APPROVAL
        book.decide(approval.id, approved=approved, by="ada")
        book.store.close()

    store = serve(runtime, while_serving=decide_when_asked)
    assert store.get(turn_id).status is TurnStatus.COMPLETED
    step = store.find_step(f"{turn_id}:tool:c1")
    if approved:
        assert effects == [("send_mail", f"{turn_id}:tool:c1")]
        assert step.data["in_doubt"]["decision"] == "approved"
        assert step.status == "completed"
    else:
        assert effects == []
        assert step.data["in_doubt"]["decision"] == "denied"
        assert "ada denied send_mail" in step.data["result"]["error"]
    store.close()


def test_a_rerun_a_person_approved_that_is_interrupted_again_is_asked_about_again(tmp_path):
    """The approval to run a call in doubt again is for the attempt that left it in
    doubt: when the rerun it allowed is itself interrupted, a person is asked again.
    Keyed by the call alone, that one approval reran the call after every later crash."""
    model = ScriptedModel([tool_call("send_mail", {"to": "ada"}, call_id="c1"), text("sent")])
    runtime = make(tmp_path, model, in_doubt="ask_person")
    store = runtime.open_store()
    turn_id = runtime.open_inbox().submit(request_of("mail ada")).id
    long_ago = time.time() - 600
    store.claim(run_id="dead", limit=1, now=long_ago, lease_seconds=1, caps={})  # attempt 1
    store.recover(now=long_ago + 5, max_attempts=5)
    (turn,) = store.claim(run_id="dead", limit=1, now=long_ago + 6, lease_seconds=1, caps={})
    assert turn.attempt == 2
    book = ApprovalBook(store)
    for call_id in ("c1:in-doubt", "c1:in-doubt:1"):  # attempt 2 asked about attempt 1's doubt
        asked = create_request(
            book,
            turn_id,
            call_id=call_id,
            tool="send_mail",
            params={"to": "ada"},
            thread_id="cli:doubt",
            prompt="run it again?",
        )
        book.decide(asked.id, approved=True, by="ada")
    store.record_step(  # … the rerun renewed the intent, and attempt 2 died too
        StepRecord(
            turn_id=turn_id,
            seq=0,
            attempt=2,
            kind="tool_call",
            status="intent",
            started_at=long_ago + 6,
            finished_at=long_ago + 6,
            data={"call": {"id": "c1", "name": "send_mail", "params": {"to": "ada"}}},
            idempotency_key=f"{turn_id}:tool:c1",
        ),
        run_id="dead",
    )
    store.close()

    async def deny_when_asked(serving):
        book = ApprovalBook(runtime.open_store())
        approval = await only_pending(book, serving)
        assert approval.key == f"{turn_id}:c1:in-doubt:2"
        book.decide(approval.id, approved=False, by="ada")
        book.store.close()

    store = serve(runtime, while_serving=deny_when_asked)
    assert store.get(turn_id).status is TurnStatus.COMPLETED
    assert effects == []  # not run on the strength of the first answer
    assert store.find_step(f"{turn_id}:tool:c1").data["in_doubt"]["decision"] == "denied"
    store.close()


def request_of(words):
    return NewTurnRequest(source="chat", thread_id="cli:doubt", input=words)


def test_a_task_runs_progress_counts_a_tool_result_only_once_it_is_recorded():
    from toolang_core.taskruns.view import progress_of

    def step(seq, kind, status, data):
        return StepRecord("t", seq, 1, kind, status, 1.0, 2.0, data, None, f"t:{seq}")

    asked = step(1, "model_call", "completed", {"response": {"tool_calls": [{"name": "x"}]}})
    running = step(2, "tool_call", "intent", {"call": {"id": "c1", "name": "x"}})
    progress = progress_of([asked, running])
    assert (progress.tool_call_count, progress.tool_result_count) == (1, 0)
    done = step(2, "tool_call", "completed", {"call": {"id": "c1"}, "result": {"ok": True}})
    assert progress_of([asked, done]).tool_result_count == 1
