"""ToolChain.run: how a tool is executed, and the verdicts the chain records."""

from __future__ import annotations

import asyncio
import threading

import pytest

from toolang_core import Tool, hookimpl
from toolang_core.plugins.components import ToolRegistration
from toolang_core.tools.chain import ToolChain


def plugin(**hooks):
    namespace = {name: staticmethod(hookimpl(fn)) for name, fn in hooks.items()}
    return type("TestPlugin", (), namespace)()


def registered(*tools: Tool) -> dict[str, ToolRegistration]:
    return {tool.name: ToolRegistration(tool, "test-tools") for tool in tools}


def run_call(chain: ToolChain, context, name: str, **params):
    """Run a call of ``name`` through ``chain``; ``context`` is the
    ``toolang_call_context`` fixture."""
    ctx = context(name, params)
    call = ctx.call

    async def never_asked(*_):
        raise AssertionError("no approval expected")

    return asyncio.run(chain.run(call, ctx, wait_for_approval=never_asked))


def thread_name(text: str) -> str:
    """The thread it ran on.

    :param text: anything
    """
    return threading.current_thread().name


async def async_upper(text: str) -> str:
    """Upper case.

    :param text: anything
    """
    await asyncio.sleep(0)
    return text.upper()


def lazy_upper(text: str):
    """Upper case, answered as an awaitable.

    :param text: anything
    """
    return async_upper(text)


def plain_upper(text: str) -> str:
    """Upper case.

    :param text: anything
    """
    return text.upper()


def test_a_blocking_sync_tool_runs_in_a_worker_thread(toolang_call_context, toolang_host):
    chain = ToolChain(toolang_host.hooks, registered(Tool.from_function(thread_name)))
    done = run_call(chain, toolang_call_context, "thread_name", text="x")
    assert done.result.ok
    assert done.result.output != threading.current_thread().name


def test_a_non_blocking_sync_tool_runs_inline(toolang_call_context, toolang_host):
    tool = Tool.from_function(thread_name, blocking=False)
    done = run_call(
        ToolChain(toolang_host.hooks, registered(tool)),
        toolang_call_context,
        "thread_name",
        text="x",
    )
    assert done.result.output == threading.current_thread().name


@pytest.mark.parametrize("blocking", [True, False])
def test_an_async_tool_is_awaited(toolang_call_context, toolang_host, blocking):
    tool = Tool.from_function(async_upper, name="upper", blocking=blocking)
    done = run_call(
        ToolChain(toolang_host.hooks, registered(tool)), toolang_call_context, "upper", text="hi"
    )
    assert (done.result.ok, done.result.output) == (True, "HI")


def test_an_awaitable_answered_by_an_inline_tool_is_awaited(toolang_call_context, toolang_host):
    tool = Tool.from_function(lazy_upper, name="upper", blocking=False)
    done = run_call(
        ToolChain(toolang_host.hooks, registered(tool)), toolang_call_context, "upper", text="hi"
    )
    assert done.result.output == "HI"


def test_a_tool_replaced_under_its_name_runs_as_the_new_one(toolang_call_context, toolang_host):
    tools = registered(Tool.from_function(plain_upper, name="upper", blocking=False))
    chain = ToolChain(toolang_host.hooks, tools)
    assert run_call(chain, toolang_call_context, "upper", text="a").result.output == "A"
    tools.update(registered(Tool.from_function(async_upper, name="upper", blocking=False)))
    assert run_call(chain, toolang_call_context, "upper", text="b").result.output == "B"


def test_every_stage_records_its_verdict_in_chain_order(
    toolang_call_context, toolang_host, toolang_register
):
    for hook in (
        "toolang_filter_tool_call",
        "toolang_approve_tool_call",
        "toolang_filter_tool_result",
        "toolang_observe_tool_result",
        "toolang_save_knowledge",
        "toolang_publish_event",
    ):
        toolang_register(plugin(**{hook: lambda **_: None}), hook.removeprefix("toolang_"))

    def broken(call, result, ctx):
        raise OSError("disk full")

    toolang_register(plugin(toolang_save_knowledge=broken), "broken-saver")
    tool = Tool.from_function(plain_upper, name="upper", blocking=False)
    done = run_call(
        ToolChain(toolang_host.hooks, registered(tool)), toolang_call_context, "upper", text="a"
    )
    assert [(s.stage, s.verdict, s.plugin) for s in done.stages] == [
        ("SecurityFilter", "pass", None),
        ("ApprovalGate", "pass", None),
        ("execute", "ok", None),
        ("LearningObserver", "ok", "observe_tool_result"),
        ("KnowledgeSaver", "error", "broken-saver"),
        ("KnowledgeSaver", "ok", "save_knowledge"),
        ("EventPublisher", "ok", "publish_event"),
    ]
    assert "disk full" in done.stages[4].detail
