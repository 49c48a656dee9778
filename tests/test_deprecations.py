"""What 0.2 deprecated instead of breaking (issue #31, item 15): 0.1's way still works
for one minor release and warns, naming the replacement and the release that removes
it (the frozen 0.1 plugins of tests/test_frozen_plugins.py rely on them)."""

from __future__ import annotations

import asyncio

import pytest

from toolang_core import Block, ToolCall, ToolCallContext, hookimpl
from toolang_core.execution.seam import TurnContext


def test_a_tool_call_context_without_runtime_warns_and_has_none():
    call = ToolCall("c1", "fs_read", {})
    with pytest.warns(DeprecationWarning, match=r"runtime= is deprecated since toolang-core 0\.2"):
        ctx = ToolCallContext(call=call, turn_id="t", thread_id="th", run_id="r", agent="a")
    assert ctx.runtime is None


def test_a_turn_context_without_runtime_warns():
    with pytest.warns(DeprecationWarning, match=r"TurnContext\(\.\.\.\) without runtime="):
        context = TurnContext(object(), run_id="r", store=None)  # type: ignore[arg-type]
    assert context.runtime is None


class Filter:
    @hookimpl
    def toolang_filter_tool_call(self, call, ctx):
        return Block("no") if call.name == "fs_rm" else None


def test_hooks_filter_tool_call_still_answers_and_warns(
    toolang_host, toolang_register, toolang_call_context
):
    toolang_register(Filter(), "filter")
    ctx = toolang_call_context("fs_rm")
    with pytest.warns(DeprecationWarning, match="Hooks.filter_tool_call is deprecated"):
        outcome = asyncio.run(toolang_host.hooks.filter_tool_call(ctx.call, ctx))
    assert outcome.blocked == ("filter", Block("no"))
