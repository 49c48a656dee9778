"""toolang-source-invoke, alone."""

from __future__ import annotations

import asyncio
import json

import toolang_source_invoke as plugin
from toolang_core.store.types import NewTurnRequest, TurnStatus
from toolang_source_invoke import ainvoke

ECHO = '[runtime]\nexecutor = "echo"\n'
ENV = {"TOOLANG_LOAD_PLUGINS": "source-invoke"}


def test_invoke_prints_the_answer_and_exits_0(toolang_cli, toolang_home):
    toolang_home.write_config(ECHO)
    result = toolang_cli("invoke", "2 + 2", env=ENV)
    assert (result.returncode, result.stdout) == (0, "2 + 2\n")
    (turn,) = json.loads(toolang_cli("turns", "list", "--json", env=ENV).stdout)
    assert turn["source"] == "invoke"
    assert turn["thread_id"].startswith("invoke:")


def test_each_invocation_gets_its_own_thread(toolang_cli, toolang_home):
    toolang_home.write_config(ECHO)
    toolang_cli("invoke", "a", env=ENV)
    toolang_cli("invoke", "b", env=ENV)
    threads = json.loads(toolang_cli("threads", "list", "--json", env=ENV).stdout)
    assert len({t["thread_id"] for t in threads}) == 2


def test_the_python_api_returns_a_result(toolang_runtime):
    runtime = toolang_runtime(ECHO, plugins={"source-invoke": plugin})
    result = asyncio.run(ainvoke("hello", runtime=runtime))
    assert (result.ok, result.output, result.exit_code) == (True, "hello", 0)


def test_a_failed_turn_exits_1(toolang_runtime):
    runtime = toolang_runtime(ECHO, plugins={"source-invoke": plugin})
    inbox = runtime.open_inbox()

    async def failing():
        from toolang_core.runtime.oneshot import await_turn
        from toolang_core.store.types import NewTurnRequest

        turn_id = inbox.submit(
            NewTurnRequest(
                source="invoke",
                thread_id="invoke:x",
                input="x",
                meta={"echo": {"fail": "no model"}},
            )
        ).id
        return await await_turn(runtime, inbox, turn_id)

    turn = asyncio.run(failing())
    assert (turn.status, turn.error) == (TurnStatus.FAILED, "no model")
    assert plugin.InvokeResult(turn.id, turn.status, error=turn.error).exit_code == 1


def test_a_waiting_invocation_returns_when_its_timeout_passes(toolang_runtime, toolang_home):
    runtime = toolang_runtime(ECHO, plugins={"source-invoke": plugin})
    store = runtime.open_store()
    store.acquire("someone-else")  # a runtime "serves" the store but never runs anything
    try:
        result = asyncio.run(ainvoke("slow", runtime=runtime, timeout=0.2))
    finally:
        store.close()
    assert (result.status, result.exit_code) == (TurnStatus.QUEUED, 75)


# -- a turn that waits for a person ---------------------------------------------------

GATE = """
from toolang_core import Tool, hookimpl
from toolang_core.testing.approvals import ask_a_person


def write(path, text, **_):
    return "written"


@hookimpl
def toolang_register_tools(register):
    register(Tool(name="fs_write", description="Write a file.", parameters={"type": "object"},
                  function=write, blocking=False))


@hookimpl
def toolang_approve_tool_call(call, ctx):
    return ask_a_person(call, ctx)
"""
AGENT = '[runtime]\nexecutor = "agent"\npoll_seconds = 0.05\n[models]\ndefault = "scripted"\n'


def test_invoke_shows_the_approval_it_waits_for_and_its_timeout_exits_75(
    toolang_cli, toolang_home, toolang_distribution, tmp_path
):
    from toolang_core import ApprovalBook, Runtime, load_config

    toolang_distribution(
        "toolang-test-invoke-gate",
        entry_points={
            "toolang": {
                "test-gate": "tl_invoke_gate",
                "scripted": "toolang_core.testing.script_file_plugin",
            }
        },
        modules={"tl_invoke_gate": GATE},
    )
    script = tmp_path / "script.json"
    write = {"tool_calls": [{"id": "c1", "name": "fs_write", "params": {"path": "a", "text": "b"}}]}
    script.write_text(json.dumps([write, {"text": "done"}]))
    toolang_home.write_config(AGENT)
    env = {
        "TOOLANG_LOAD_PLUGINS": "source-invoke,test-gate,scripted",
        "TOOLANG_SCRIPT": str(script),
        "PYTHONPATH": str(toolang_distribution.root),
    }
    result = toolang_cli("invoke", "write it", "--timeout", "3", env=env)
    assert result.returncode == 75, result.stderr
    store = Runtime.with_plugins(load_config(toolang_home.config_path, env={})).open_store()
    try:
        (approval,) = ApprovalBook(store).list()
    finally:
        store.close()
    assert f"approval needed ({approval.id}): " in result.stderr
    assert "wants to run fs_write" in result.stderr
    assert f"toolang approvals approve {approval.id}" in result.stderr
    assert f"toolang approvals deny {approval.id}" in result.stderr


def test_invocations_come_after_chat_and_before_background_work(toolang_runtime):
    runtime = toolang_runtime(ECHO, plugins={"source-invoke": plugin})
    result = runtime.open_inbox().submit(
        NewTurnRequest(source="invoke", thread_id="invoke:1", input="hi")
    )
    assert runtime.open_store().get(result.id).priority == 30
