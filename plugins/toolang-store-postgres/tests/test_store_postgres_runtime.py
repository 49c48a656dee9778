"""A real runtime on the PostgreSQL store: turns, agent steps, approvals and records."""

from __future__ import annotations

import asyncio
import time

import pytest

import toolang_store_postgres
from toolang_core import ApprovalBook, Tool, hookimpl
from toolang_core.store import NewTurnRequest, TurnStatus
from toolang_core.testing.approvals import ask_a_person
from toolang_core.testing.models import text, tool_call

RAN: list[str] = []


def config_text(dsn: str, schema: str, extra: str = "", **runtime: object) -> str:
    settings = {"executor": "echo", "poll_seconds": 0.05, "shutdown_grace_seconds": 0, **runtime}
    lines = "\n".join(f"{k} = {v!r}".replace("'", '"') for k, v in settings.items())
    return (
        f'[store]\nbackend = "postgres"\n\n[plugins.store-postgres]\ndsn = "{dsn}"\n'
        f'schema = "{schema}"\n\n[runtime]\n{lines}\n{extra}'
    )


@pytest.fixture
def make_runtime(toolang_runtime, toolang_pg_dsn, toolang_pg_schema):
    def make(plugins=None, extra="", **runtime):
        return toolang_runtime(
            config_text(toolang_pg_dsn, toolang_pg_schema, extra, **runtime),
            plugins={"store-postgres": toolang_store_postgres, **(plugins or {})},
        )

    return make


def test_a_runtime_serves_turns_from_the_postgres_store(make_runtime):
    runtime = make_runtime()
    inbox = runtime.open_inbox()
    try:
        ids = [
            inbox.submit(NewTurnRequest(source="chat", thread_id=f"cli:{i % 3}", input=f"n{i}")).id
            for i in range(9)
        ]
        asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
        turns = [inbox.get(turn_id) for turn_id in ids]
        assert [(t.status, t.output) for t in turns] == [
            (TurnStatus.COMPLETED, f"n{i}") for i in range(9)
        ]
        assert [s.kind for s in inbox.store.steps(ids[0])] == ["echo"]
        (run,) = inbox.store.list_runs()
        assert run.status == "stopped"
    finally:
        inbox.store.close()


def touch(name: str) -> str:
    """Record a run."""
    RAN.append(name)
    return f"touched {name}"


class AskEveryTime:
    @hookimpl
    def toolang_register_tools(self, register):
        register(Tool.from_function(touch, blocking=False))

    @hookimpl
    def toolang_approve_tool_call(self, call, ctx):
        return ask_a_person(call, ctx, prompt=f"run {call.name}?", requester="tester")


def test_an_agent_turn_waits_for_an_approval_decided_on_another_connection(
    make_runtime, toolang_scripted_model
):
    RAN.clear()
    model = toolang_scripted_model([tool_call("touch", {"name": "x"}), text("done")])
    runtime = make_runtime(
        {"scripted": model.plugin(), "gate": AskEveryTime()},
        extra='\n[models]\ndefault = "scripted"\n',
        executor="agent",
    )
    other = runtime.open_inbox()  # another process's view: its own pool

    async def scenario():
        turn_id = other.submit(NewTurnRequest(source="chat", thread_id="cli:a", input="go")).id
        stop = asyncio.Event()
        serving = asyncio.create_task(runtime.serve(stop, sources=()))
        book = ApprovalBook(other.store)
        try:
            deadline = time.monotonic() + 30
            decided = False
            while time.monotonic() < deadline:
                turn = other.get(turn_id)
                if turn.status is TurnStatus.AWAITING_APPROVAL and not decided:
                    assert RAN == []
                    (pending,) = book.list("pending")
                    book.decide(pending.id, approved=True, by="alice")
                    decided = True
                if turn.status.is_terminal:
                    return turn
                await asyncio.sleep(0.02)
            raise AssertionError(f"turn still {other.get(turn_id).status}")
        finally:
            stop.set()
            await serving

    try:
        turn = asyncio.run(scenario())
        assert (turn.status, turn.output, RAN) == (TurnStatus.COMPLETED, "done", ["x"])
        kinds = [s.kind for s in other.store.steps(turn.id)]
        assert "tool_call" in kinds
        assert [a.status for a in ApprovalBook(other.store).list()] == ["approved"]
    finally:
        other.store.close()


def test_a_long_thread_is_compacted_into_a_summary_kept_in_the_postgres_store(
    make_runtime, toolang_scripted_model
):
    """[agents] context_tokens on PostgreSQL: the thread's summary is a record there,
    written over the revision it was read at (docs/long-conversations.md)."""
    from toolang_core.models import ModelResponse

    def answer(request):
        if request.messages[0].content.startswith("You keep the running summary"):
            facts = [line for line in request.messages[-1].content.splitlines() if "FACT" in line]
            return ModelResponse(text="\n".join(facts) or "nothing")
        return ModelResponse(text="noted")

    model = toolang_scripted_model(answer)
    runtime = make_runtime(
        {"scripted": model.plugin()},
        extra='\n[models]\ndefault = "scripted"\n\n[agents]\ncontext_tokens = 400\n',
        executor="agent",
    )
    inbox = runtime.open_inbox()
    try:
        for n in range(12):
            said = "FACT the ship is the Albatross" if n == 0 else f"turn {n}: " + "word " * 60
            inbox.submit(NewTurnRequest(source="chat", thread_id="cli:ship", input=said))
        asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
        summary = inbox.store.get_record("toolang.thread.summary", "cli:ship")
        assert summary is not None and "Albatross" in summary.data["text"]
        assert summary.revision >= 1 and summary.data["turns"] >= 1
        assert "Albatross" in model.calls[-1].messages[0].content
    finally:
        inbox.store.close()


NOT_JSON = {"nan": float("nan"), "infinity": {"rate": [1.0, float("inf")]}, "surrogate": "a\ud800"}


def measure(kind: str) -> object:
    """Return what is not JSON.

    :param kind: nan, infinity, surrogate or nul
    """
    RAN.append(kind)
    return {**NOT_JSON, "nul": {"text": "PK\x00\x00"}}[kind]


class Measures:
    @hookimpl
    def toolang_register_tools(self, register):
        register(Tool.from_function(measure, blocking=False))


def measured(make_runtime, model):
    """A runtime with the ``measure`` tool and ``model`` serves one turn: the inbox and
    the turn's id."""
    runtime = make_runtime(
        {"scripted": model.plugin(), "measures": Measures()},
        extra='\n[models]\ndefault = "scripted"\n',
        executor="agent",
    )
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:a", input="m")).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    return inbox, turn_id


@pytest.mark.parametrize("kind", sorted(NOT_JSON))
def test_a_tool_output_that_is_not_json_fails_its_call_named_and_the_turn_goes_on(
    make_runtime, toolang_scripted_model, kind
):
    """``jsonb`` refuses ``NaN``, the infinities and a lone surrogate: the call is
    recorded as failed with the tool named (as on SQLite), not the turn failed by the
    database."""
    RAN.clear()
    model = toolang_scripted_model([tool_call("measure", {"kind": kind}), text("no number")])
    inbox, turn_id = measured(make_runtime, model)
    try:
        turn = inbox.get(turn_id)
        assert (turn.status, turn.output, RAN) == (TurnStatus.COMPLETED, "no number", [kind])
        (call,) = [s for s in inbox.store.steps(turn_id) if s.kind == "tool_call"]
        assert (call.status, call.data["result"]["error_type"]) == ("failed", "ToolOutputError")
        assert "tool 'measure' returned output that is not JSON" in call.data["result"]["error"]
    finally:
        inbox.store.close()


def test_a_nul_in_a_tool_output_and_an_answer_is_written_out_and_the_turn_completes(
    make_runtime, toolang_scripted_model
):
    """``jsonb`` and ``text`` cannot hold U+0000: a tool's output holding one failed the
    turn (``UntranslatableCharacter``), an answer holding one failed its commit. Both
    are kept with it written out as ``\\x00``, as on SQLite."""
    model = toolang_scripted_model([tool_call("measure", {"kind": "nul"}), text("it says PK\x00")])
    inbox, turn_id = measured(make_runtime, model)
    try:
        turn = inbox.get(turn_id)
        assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "it says PK\\x00")
        (call,) = [s for s in inbox.store.steps(turn_id) if s.kind == "tool_call"]
        assert call.data["result"]["output"] == {"text": "PK\\x00\\x00"}
    finally:
        inbox.store.close()
