"""ToolChain.run: how a tool is executed, and the verdicts the chain records."""

from __future__ import annotations

import asyncio
import threading

import pytest

from toolang_core import Block, Denied, Refusal, Tool, hookimpl
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


class Audit:
    """Every observing stage's view of the calls it saw."""

    def __init__(self):
        self.seen = []

    def _see(self, stage, call, result):
        self.seen.append((stage, call, result))

    @hookimpl
    def toolang_observe_tool_result(self, call, result, ctx):
        assert ctx.call is call  # the context carries the same (masked) call
        self._see("LearningObserver", call, result)

    @hookimpl
    def toolang_save_knowledge(self, call, result, ctx):
        self._see("KnowledgeSaver", call, result)

    @hookimpl
    async def toolang_publish_event(self, call, result, ctx):
        self._see("EventPublisher", call, result)

    @hookimpl
    def toolang_filter_tool_result(self, call, result, ctx):
        self._see("SecurityFilter (result)", call, result)


SECRET_KEY = "sk-proj-Zq8v3LmN0pR5tW7yB2dF4hJ6"


def audited(toolang_host, toolang_register, context, name="upper", **params):
    audit = Audit()
    toolang_register(audit, "audit")
    tool = Tool.from_function(plain_upper, name="upper", blocking=False)
    chain = ToolChain(toolang_host.hooks, registered(tool))
    return audit, run_call(chain, context, name, **params)


def test_a_blocked_call_reaches_the_observers_and_publishers_masked_with_its_refusal(
    toolang_host, toolang_register, toolang_call_context
):
    def block(call, ctx):
        return Block(f"no keys in parameters: {call.params['text']}")

    toolang_register(plugin(toolang_filter_tool_call=block), "guard")
    audit, done = audited(
        toolang_host, toolang_register, toolang_call_context, text=f"use {SECRET_KEY}"
    )
    assert (done.result.ok, done.result.error_type) == (False, "blocked")
    refusal = Refusal("SecurityFilter", "block", "no keys in parameters: use ********", "guard")
    assert done.result.refusal == refusal
    # the LearningObservers, then the EventPublishers; no result filter, no KnowledgeSaver
    assert [stage for stage, _, _ in audit.seen] == ["LearningObserver", "EventPublisher"]
    for _, call, result in audit.seen:
        assert call.params == {"text": "use ********"}
        assert result.refusal == refusal
        assert SECRET_KEY not in (result.error or "")
    assert [(s.stage, s.verdict, s.plugin) for s in done.stages] == [
        ("SecurityFilter", "block", "guard"),
        ("LearningObserver", "ok", "audit"),
        ("EventPublisher", "ok", "audit"),
    ]


def test_a_denied_call_is_audited_with_the_gates_message(
    toolang_host, toolang_register, toolang_call_context
):
    def deny(call, ctx):
        return Denied("not on weekends")

    toolang_register(plugin(toolang_approve_tool_call=deny), "gate")
    audit, done = audited(toolang_host, toolang_register, toolang_call_context, text="a")
    assert done.result.error_type == "denied"
    assert done.result.refusal == Refusal("ApprovalGate", "denied", "not on weekends", "gate")
    assert [(stage, r.refusal.stage) for stage, _, r in audit.seen] == [
        ("LearningObserver", "ApprovalGate"),
        ("EventPublisher", "ApprovalGate"),
    ]


@pytest.mark.parametrize(
    "case",
    [
        ("nope", {}, "lookup", "unknown_tool"),
        ("upper", {"text": 3}, "validate", "invalid_params"),
    ],
)
def test_a_call_refused_before_any_hook_is_audited_too(
    toolang_host, toolang_register, toolang_call_context, case
):
    name, params, stage, error_type = case
    audit, done = audited(toolang_host, toolang_register, toolang_call_context, name, **params)
    assert done.result.error_type == error_type
    assert (done.result.refusal.stage, done.result.refusal.verdict) == (stage, "refused")
    assert done.result.refusal.plugin is None
    assert done.result.refusal.reason == done.result.error
    assert [stage for stage, _, _ in audit.seen] == ["LearningObserver", "EventPublisher"]


def test_a_raising_filter_refuses_and_a_raising_auditor_skips_no_other(
    toolang_host, toolang_register, toolang_call_context
):
    def explode(call, ctx):
        raise RuntimeError("filter bug")

    def broken(call, result, ctx):
        raise OSError("audit log full")

    toolang_register(plugin(toolang_filter_tool_call=explode), "buggy")
    toolang_register(plugin(toolang_observe_tool_result=broken), "broken-audit")
    audit, done = audited(toolang_host, toolang_register, toolang_call_context, text="a")
    assert done.result.error_type == "blocked"
    assert done.result.refusal.stage == "SecurityFilter"
    assert done.result.refusal.verdict == "error"
    assert "filter bug" in done.result.refusal.reason
    assert [stage for stage, _, _ in audit.seen] == ["LearningObserver", "EventPublisher"]
    assert ("LearningObserver", "error", "broken-audit") in [
        (s.stage, s.verdict, s.plugin) for s in done.stages
    ]


def test_a_call_that_ran_has_no_refusal(toolang_host, toolang_register, toolang_call_context):
    audit, done = audited(toolang_host, toolang_register, toolang_call_context, text="a")
    assert done.result.ok and done.result.refusal is None
    assert [stage for stage, _, _ in audit.seen] == [
        "SecurityFilter (result)",
        "LearningObserver",
        "KnowledgeSaver",
        "EventPublisher",
    ]


def test_constrain_adds_schema_keywords_and_names_an_unknown_parameter():
    from toolang_core import Tool

    def search(query: str, limit: int | None = None) -> str:
        """Search."""
        return query

    tool = Tool.from_function(search).constrain(
        query={"minLength": 1}, limit={"minimum": 1, "maximum": 50}
    )
    props = tool.parameters["properties"]
    assert props["query"]["minLength"] == 1
    assert {"type": "integer", "minimum": 1, "maximum": 50} in props["limit"]["anyOf"]
    assert {"type": "null"} in props["limit"]["anyOf"]
    with pytest.raises(ValueError, match=r"tool 'search' has no parameter 'limt'.*limit, query"):
        tool.constrain(limt={"minimum": 1})


def test_tool_owner_and_runtime_raise_the_tools_own_error_outside_a_turn():
    from toolang_core import ToolContextError, tool_owner, tool_runtime

    class MyError(ValueError):
        pass

    with pytest.raises(MyError, match="needs the turn it is called from"):
        tool_owner(None, MyError)
    with pytest.raises(ToolContextError, match="only inside a turn of a runtime"):
        tool_runtime(None)


def exits(code: int) -> str:
    """Ends the process, as argparse does on bad arguments.

    :param code: the exit status
    """
    raise SystemExit(code)


def interrupts() -> str:
    """Raises KeyboardInterrupt."""
    raise KeyboardInterrupt


@pytest.mark.parametrize("blocking", [True, False])
def test_a_tool_that_exits_fails_its_call_not_the_runtime(
    toolang_call_context, toolang_host, blocking
):
    tool = Tool.from_function(exits, blocking=blocking)
    done = run_call(
        ToolChain(toolang_host.hooks, registered(tool)), toolang_call_context, "exits", code=3
    )
    assert (done.result.ok, done.result.error_type) == (False, "SystemExit")
    assert "exits raised SystemExit(3)" in (done.result.error or "")


def test_an_interrupt_a_tool_raises_in_its_thread_fails_its_call(
    toolang_call_context, toolang_host
):
    tool = Tool.from_function(interrupts, blocking=True)
    done = run_call(
        ToolChain(toolang_host.hooks, registered(tool)), toolang_call_context, "interrupts"
    )
    assert (done.result.ok, done.result.error_type) == (False, "KeyboardInterrupt")
