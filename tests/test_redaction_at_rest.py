"""The redaction policy at rest, in a real runtime: detectors registered by plugins,
the raw input a turn's model reads, and what the store keeps."""

from __future__ import annotations

import asyncio
import json
import time

from toolang_core import NewTurnRequest, hookimpl
from toolang_core.config import ToolangConfig
from toolang_core.config.model import ModelsConfig, RuntimeConfig
from toolang_core.runtime import Runtime
from toolang_core.runtime.after_turn import PROMPT_TRACE_KIND
from toolang_core.testing.models import ScriptedModel, text

SECRET = "EMP-123456"


class EmployeeIds:
    """Registers a detector of ACME's employee ids (and one whose factory fails)."""

    @hookimpl
    def toolang_register_redactors(self, register):
        register("employee-ids", lambda context: lambda t: t.replace(SECRET, "[employee]"))
        register("broken", lambda context: 1 / 0)


def make(tmp_path, model):
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.02, shutdown_grace_seconds=0),
        models=ModelsConfig(default="scripted"),
    )
    plugins = [("scripted", model.plugin()), ("acme", EmployeeIds())]
    return Runtime.with_plugins(config, plugins, env={})


def stored(runtime, turn_id):
    store = runtime.open_store()
    try:
        turn = store.get(turn_id)
        steps = [s.data for s in store.steps(turn_id)]
        trace = store.get_record(PROMPT_TRACE_KIND, turn_id)
    finally:
        store.close()
    return turn, json.dumps([turn.input, turn.output, steps, dict(trace.data)])


async def submit_in_process(runtime, request):
    """Submit through the running runtime's own inbox and wait for the turn."""
    stop = asyncio.Event()
    serving = asyncio.create_task(runtime.serve(stop, sources=()))
    deadline = time.monotonic() + 10
    while not runtime.admitting:
        assert time.monotonic() < deadline and not serving.done(), "the runtime did not start"
        await asyncio.sleep(0.01)
    turn_id = runtime.inbox.submit(request).id
    await runtime.inbox.wait(turn_id, timeout=10)
    stop.set()
    await serving
    return turn_id


def test_a_plugins_detector_masks_what_is_stored_and_a_broken_one_is_left_out(tmp_path):
    model = ScriptedModel([text(f"your id is {SECRET}")])
    runtime = make(tmp_path, model)
    assert runtime.redaction_detectors == ("acme:employee-ids",)
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(
        NewTurnRequest(source="chat", thread_id="chat:1", input=f"I am {SECRET}")
    ).id
    inbox.store.close()
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    turn, everything = stored(runtime, turn_id)
    assert (turn.input, turn.output) == ("I am [employee]", "your id is [employee]")
    assert SECRET not in everything
    # Submitted from outside the running runtime: its model reads the masked input.
    assert model.calls[0].messages[-1].content == "I am [employee]"


def test_the_model_reads_the_raw_input_of_its_own_turn_the_store_keeps_it_masked(tmp_path):
    model = ScriptedModel([text("noted")])
    runtime = make(tmp_path, model)
    request = NewTurnRequest(source="chat", thread_id="chat:1", input=f"I am {SECRET}")
    turn_id = asyncio.run(submit_in_process(runtime, request))
    assert model.calls[0].messages[-1].content == f"I am {SECRET}"
    turn, everything = stored(runtime, turn_id)
    assert turn.input == "I am [employee]"
    assert SECRET not in everything
    assert runtime.inbox.raw_input(turn_id) is None  # forgotten once the turn ended


def test_a_task_runs_task_and_spawn_reason_are_stored_masked(tmp_path):
    from toolang_core import SpawnRequest, TaskRunController

    runtime = make(tmp_path, ScriptedModel([]))
    controller = TaskRunController(runtime.open_store(), runtime)
    run = asyncio.run(
        controller.spawn(
            SpawnRequest(
                owner="ada",
                parent_thread_id="chat:1",
                task=f"look up {SECRET}",
                spawn_reason=f"asked about {SECRET}",
                metadata={"about": SECRET},
            )
        )
    )
    turn = controller.store.get(run.id)
    controller.store.close()
    assert turn.input == "look up [employee]"
    assert SECRET not in json.dumps(turn.meta)
    assert SECRET not in (tmp_path / ".toolang" / "toolang.db").read_bytes().decode("latin-1")


def test_a_secret_at_the_cut_of_a_long_prompt_is_masked_before_the_cut():
    from toolang_core.models.types import Message
    from toolang_core.redaction import use_detectors
    from toolang_core.turn.trace import TEXT_LIMIT, messages_json

    undo = use_detectors({"acme": lambda t: t.replace(SECRET, "[employee]")})
    try:
        text_in = "x" * (TEXT_LIMIT - 4) + f" {SECRET} and more"
        (stored,), truncated = messages_json([Message(role="user", content=text_in)])
    finally:
        undo()
    assert truncated
    assert stored["content"].endswith(" [em")
    assert "EMP" not in stored["content"]


class EchoId:
    """A tool whose result carries what it was given (a secret, here)."""

    @hookimpl
    def toolang_register_tools(self, register):
        from toolang_core import Tool

        def lookup(who: str, password: str) -> str:
            """Look someone up."""
            return f"found {who}"

        register(Tool.from_function(lookup, blocking=False))


def test_every_model_calls_prompt_is_stored_masked_each_message_once_per_loop(tmp_path):
    from toolang_core.testing.models import tool_call

    model = ScriptedModel(
        [tool_call("lookup", {"who": SECRET, "password": "hunter22"}), text("done")]
    )
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.02, shutdown_grace_seconds=0),
        models=ModelsConfig(default="scripted"),
    )
    plugins = [("scripted", model.plugin()), ("acme", EmployeeIds()), ("tools", EchoId())]
    runtime = Runtime.with_plugins(config, plugins, env={})
    request = NewTurnRequest(source="chat", thread_id="chat:1", input=f"who is {SECRET}?")
    turn_id = asyncio.run(submit_in_process(runtime, request))
    # the model read it all unmasked, its tool's result too
    read = model.calls[1].messages[-1].content
    assert read == json.dumps({"ok": True, "output": f"found {SECRET}"})
    _, everything = stored(runtime, turn_id)
    assert SECRET not in everything and "hunter22" not in everything
    store = runtime.open_store()
    try:
        first, second = [s.data for s in store.steps(turn_id) if s.kind == "model_call"]
    finally:
        store.close()
    assert first["messages"][-1]["content"] == "who is [employee]?"
    # the second prompt repeats the first one's messages as they were stored
    assert second["messages"][: len(first["messages"])] == first["messages"]
    assistant, tool = second["messages"][len(first["messages"]) :]
    assert assistant["tool_calls"][0]["params"] == {"who": "[employee]", "password": "********"}
    assert tool["content"] == json.dumps({"ok": True, "output": "found [employee]"})


def test_a_loops_masked_messages_are_the_policys_walk_of_them(tmp_path):
    from toolang_core.models.types import Message
    from toolang_core.redaction import redact, use_detectors
    from toolang_core.tools.types import ToolCall
    from toolang_core.turn.trace import TEXT_LIMIT, MaskedMessages, messages_json

    key = "sk-proj-" + "b" * 30
    messages = [
        Message(role="system", content=f"You are {SECRET}'s agent."),
        Message(role="user", content=f"my key is {key}"),
        Message(role="user", content="x" * (TEXT_LIMIT - 3) + f" {SECRET}"),
        Message(
            role="assistant",
            content="",
            tool_calls=(ToolCall("c1", "lookup", {"who": SECRET, "api_key": "k", "n": 1}),),
        ),
        Message(role="tool", content=f'{{"ok": true, "output": "{SECRET}"}}', tool_call_id="c1"),
    ]
    undo = use_detectors({"acme": lambda t: t.replace(SECRET, "[employee]")})
    try:
        walked, truncated = messages_json(messages)
        expected = redact(walked)
        masked = MaskedMessages()
        first, cut = masked.json(messages[:2])
        again, cut_again = masked.json(messages)
    finally:
        undo()
    assert (again, cut_again, truncated, cut) == (expected, True, True, False)
    assert first == expected[:2]
    assert SECRET not in json.dumps(again) and key not in json.dumps(again)


def test_a_tool_calls_chain_is_stored_as_the_policy_masks_it():
    from toolang_core.redaction import redact, use_detectors
    from toolang_core.tools.chain import StageRecord
    from toolang_core.turn.trace import chain_json

    key = "sk-proj-" + "c" * 30
    stages = [
        StageRecord("SecurityFilter", "block", "hook-security-filter", f"a key: {key}"),
        StageRecord("ApprovalGate", "denied", "hook-approval-gate", f"not for {SECRET}"),
        StageRecord("execute", "ok", None, ""),
        StageRecord("LearningObserver", "ok", "hook-learning-observer", ""),
    ]
    undo = use_detectors({"acme": lambda t: t.replace(SECRET, "[employee]")})
    try:
        stored = chain_json(stages)
        again = chain_json(stages)  # the verdicts without detail are kept
        walked = redact([s.to_json() for s in stages])
    finally:
        undo()
    assert stored == walked
    assert stored.json == json.dumps(walked, separators=(",", ":"), ensure_ascii=False)
    assert (again, again.json) == (stored, stored.json)
    assert stored[0]["detail"] == "a key: ********"
    assert stored[1]["detail"] == "not for [employee]"
