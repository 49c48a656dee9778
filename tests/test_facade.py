"""The typed facade: calling order, awaitables, isolation, and chain semantics."""

from __future__ import annotations

import asyncio

import pytest

from toolang_core import hookimpl
from toolang_core.config import ToolangConfig
from toolang_core.events import Event
from toolang_core.runtime import Runtime
from toolang_core.tools import (
    Block,
    Denied,
    Granted,
    Modify,
    Observe,
    Pending,
    ToolCall,
    ToolResult,
    stages,
)


def plugin(**hooks):
    """A plugin object with the given hook implementations (as plain functions)."""
    namespace = {name: staticmethod(hookimpl(fn)) for name, fn in hooks.items()}
    return type("TestPlugin", (), namespace)()


@pytest.fixture
def call():
    return ToolCall(call_id="c1", name="fs_write", params={"path": "a.txt", "text": "hi"})


@pytest.fixture
def ctx(call, toolang_call_context):
    return toolang_call_context(call=call, agent="operator")


def run(coro):
    return asyncio.run(coro)


def test_filters_run_in_order_and_modify_is_seen_by_later_filters(
    toolang_host, toolang_register, call, ctx
):
    seen = []

    def redact(call, ctx):
        return Modify({**call.params, "text": "[redacted]"}, reason="pii")

    def check(call, ctx):
        seen.append(dict(call.params))
        return Observe("looked")

    toolang_register(plugin(toolang_filter_tool_call=check), "b-check")
    toolang_register(plugin(toolang_filter_tool_call=redact), "a-redact")
    outcome = run(stages.filter_tool_call(toolang_host.hooks, call, ctx))
    assert seen == [{"path": "a.txt", "text": "[redacted]"}]
    assert outcome.call.params == {"path": "a.txt", "text": "[redacted]"}
    assert [p for p, _ in outcome.verdicts] == ["a-redact", "b-check"]
    assert outcome.blocked is None


def test_an_observing_filter_cannot_hide_a_blocking_one(toolang_host, toolang_register, call, ctx):
    toolang_register(plugin(toolang_filter_tool_call=lambda call, ctx: Block("rm -rf")), "b")
    toolang_register(plugin(toolang_filter_tool_call=lambda call, ctx: Observe("fine")), "a")
    outcome = run(stages.filter_tool_call(toolang_host.hooks, call, ctx))
    assert outcome.blocked == ("b", Block("rm -rf"))


def test_a_raising_filter_fails_closed(toolang_host, toolang_register, call, ctx):
    def broken(call, ctx):
        raise ValueError("regex exploded")

    toolang_register(plugin(toolang_filter_tool_call=broken), "flaky")
    outcome = run(stages.filter_tool_call(toolang_host.hooks, call, ctx))
    assert outcome.blocked is not None
    assert "security filter 'flaky' failed: ValueError: regex exploded" in outcome.blocked[1].reason
    assert outcome.failures[0].plugin == "flaky"


def test_async_implementations_are_awaited_and_may_abstain(
    toolang_host, toolang_register, call, ctx
):
    async def abstain(call, ctx):
        await asyncio.sleep(0)

    async def grant(call, ctx):
        return Granted("policy")

    toolang_register(plugin(toolang_approve_tool_call=grant), "b-grant")
    toolang_register(plugin(toolang_approve_tool_call=abstain), "a-abstain")
    outcome = run(stages.approve_tool_call(toolang_host.hooks, call, ctx))
    assert (outcome.plugin, outcome.decision) == ("b-grant", Granted("policy"))


def test_first_approval_decision_wins(toolang_host, toolang_register, call, ctx):
    toolang_register(plugin(toolang_approve_tool_call=lambda call, ctx: Granted()), "b")
    toolang_register(plugin(toolang_approve_tool_call=lambda call, ctx: Pending("ap-1")), "a")
    outcome = run(stages.approve_tool_call(toolang_host.hooks, call, ctx))
    assert outcome.decision == Pending("ap-1")


def test_no_gate_means_no_decision(toolang_host, call, ctx):
    outcome = run(stages.approve_tool_call(toolang_host.hooks, call, ctx))
    assert (outcome.plugin, outcome.decision) == (None, None)


def test_a_raising_gate_denies(toolang_host, toolang_register, call, ctx):
    def broken(call, ctx):
        raise RuntimeError("db down")

    toolang_register(plugin(toolang_approve_tool_call=broken), "gate")
    outcome = run(stages.approve_tool_call(toolang_host.hooks, call, ctx))
    assert isinstance(outcome.decision, Denied)
    assert "db down" in outcome.decision.message


def test_post_stages_are_isolated_from_each_other(toolang_host, toolang_register, call, ctx):
    calls = []

    def raising(call, result, ctx):
        raise RuntimeError("observer broke")

    def recording(call, result, ctx):
        calls.append(result.output)

    toolang_register(plugin(toolang_observe_tool_result=recording), "b-ok")
    toolang_register(plugin(toolang_observe_tool_result=raising), "a-broken")
    result = ToolResult(ok=True, output="written")
    outcomes = run(stages.observe_tool_result(toolang_host.hooks, call, result, ctx))
    assert calls == ["written"]
    assert [(p, f and (f.hook, f.error)) for p, f in outcomes] == [
        ("a-broken", ("toolang_observe_tool_result", "RuntimeError: observer broke")),
        ("b-ok", None),
    ]


def test_observing_stages_run_in_chain_order_each_answer_awaited_before_the_next(
    toolang_host, toolang_register, call, ctx
):
    seen = []

    async def save(call, result, ctx):
        await asyncio.sleep(0)
        seen.append("save")

    toolang_register(plugin(toolang_publish_event=lambda: seen.append("publish")), "p")
    toolang_register(plugin(toolang_save_knowledge=save), "k")
    toolang_register(plugin(toolang_observe_tool_result=lambda: seen.append("observe")), "o")
    outcomes = run(stages.after_tool_call(toolang_host.hooks, call, ToolResult(ok=True), ctx))
    assert seen == ["observe", "save", "publish"]
    assert outcomes == [
        ("toolang_observe_tool_result", "o", None),
        ("toolang_save_knowledge", "k", None),
        ("toolang_publish_event", "p", None),
    ]


def test_lifecycle_hooks_isolate_failures(toolang_host, toolang_register, tmp_path):
    started = []

    async def ok(runtime):
        started.append(runtime)

    def broken(runtime):
        raise OSError("no disk")

    toolang_register(plugin(toolang_startup=ok), "b-ok")
    toolang_register(plugin(toolang_startup=broken), "a-broken")
    runtime = Runtime(ToolangConfig(base_dir=tmp_path), toolang_host)
    failures = run(toolang_host.hooks.startup(runtime))
    assert started == [runtime]
    assert [f.plugin for f in failures] == ["a-broken"]


def test_shutdown_receives_the_reason_and_events_reach_every_subscriber(
    toolang_host, toolang_register, tmp_path
):
    reasons, events = [], []
    toolang_register(plugin(toolang_shutdown=lambda runtime, reason: reasons.append(reason)), "s")
    toolang_register(plugin(toolang_on_event=lambda event: events.append(event.kind)), "e")
    runtime = Runtime(ToolangConfig(base_dir=tmp_path), toolang_host)
    run(toolang_host.hooks.on_event(Event("turn.completed"), runtime))
    run(toolang_host.hooks.shutdown(runtime, "signal"))
    assert (reasons, events) == (["signal"], ["turn.completed"])


def test_shutdown_reason_has_a_spec_default(toolang_host, toolang_register, tmp_path):
    reasons = []
    toolang_register(plugin(toolang_shutdown=lambda runtime, reason: reasons.append(reason)), "s")
    runtime = Runtime(ToolangConfig(base_dir=tmp_path), toolang_host)
    toolang_host.pm.hook.toolang_shutdown(runtime=runtime)  # an external caller omitting it
    assert reasons == ["stop"]


def test_plugin_state_is_per_runtime(toolang_host, tmp_path):
    first = Runtime(ToolangConfig(base_dir=tmp_path), toolang_host)
    second = Runtime(ToolangConfig(base_dir=tmp_path), toolang_host)
    first.plugin_state("x", list).append(1)
    assert first.plugin_state("x", list) == [1]
    assert second.plugin_state("x", list) == []


def test_chain_lists_stages_in_the_fixed_order(toolang_host, toolang_register):
    toolang_register(plugin(toolang_publish_event=lambda call, result, ctx: None), "events")
    chain = toolang_host.hooks.chain()
    assert [stage for stage, _, _ in chain] == [
        "SecurityFilter",
        "ApprovalGate",
        "execute",
        "SecurityFilter",
        "LearningObserver",
        "KnowledgeSaver",
        "EventPublisher",
    ]
    assert chain[-1] == ("EventPublisher", "toolang_publish_event", ["events"])
