import asyncio

from toolang_core import Block, ToolCall, ToolCallContext

import toolang_hook_frozen as plugin


def check(host, params):
    call = ToolCall(call_id="c1", name="fs_read", params=params)
    ctx = ToolCallContext(call=call, turn_id="t", thread_id="th", run_id="r", agent="a")
    return asyncio.run(host.hooks.filter_tool_call(call, ctx))


def test_blocks_calls_that_mention_the_word(toolang_host, toolang_register):
    toolang_register(plugin, "hook-frozen")
    outcome = check(toolang_host, {"path": "forbidden.txt"})
    assert outcome.blocked == ("hook-frozen", Block("parameters mention 'forbidden'"))


def test_lets_other_calls_through(toolang_host, toolang_register):
    toolang_register(plugin, "hook-frozen")
    assert check(toolang_host, {"path": "notes.txt"}).blocked is None
