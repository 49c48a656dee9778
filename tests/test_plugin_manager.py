"""Per-plugin callers: a plain implementation is called directly, exactly as pluggy
would call it; wrappers and monitoring always go through pluggy."""

from __future__ import annotations

import pluggy
import pytest

from toolang_core import hookimpl
from toolang_core.plugins.manager import DirectCaller, create_plugin_manager


class Plain:
    def __init__(self, answer):
        self.answer = answer
        self.seen = []

    @hookimpl
    def toolang_observe_tool_result(self, result):  # declares only one of the arguments
        self.seen.append(result)
        return self.answer


class Gate:
    @hookimpl
    def toolang_approve_tool_call(self, call, ctx):
        return ("decided", call)


class Wrapped:
    @hookimpl(wrapper=True)
    def toolang_observe_tool_result(self, call, result, ctx):
        outcome = yield
        return [*outcome, "wrapped"]

    @hookimpl
    def toolang_save_knowledge(self, call, result, ctx):
        return None


def callers(pm, hook):
    return dict(pm.per_plugin_callers(hook))


def test_a_plain_implementation_gets_only_the_arguments_it_declares():
    pm = create_plugin_manager()
    plugin = Plain("noted")
    pm.register(plugin, "plain")
    caller = callers(pm, "toolang_observe_tool_result")["plain"]
    assert isinstance(caller, DirectCaller)
    assert caller(call="c", result="r", ctx="x") == ["noted"]
    assert plugin.seen == ["r"]


@pytest.mark.parametrize(("answer", "expected"), [("noted", ["noted"]), (None, [])])
def test_a_direct_call_answers_what_pluggy_answers(answer, expected):
    pm = create_plugin_manager()
    pm.register(Plain(answer), "plain")
    direct = callers(pm, "toolang_observe_tool_result")["plain"]
    through_pluggy = pm.hook.toolang_observe_tool_result
    kwargs = {"call": "c", "result": "r", "ctx": "x"}
    assert direct(**kwargs) == through_pluggy(**kwargs) == expected


def test_a_firstresult_hook_answers_the_value_itself():
    pm = create_plugin_manager()
    pm.register(Gate(), "gate")
    caller = callers(pm, "toolang_approve_tool_call")["gate"]
    assert (
        caller(call="c", ctx="x")
        == ("decided", "c")
        == pm.hook.toolang_approve_tool_call(call="c", ctx="x")
    )


def test_a_plugin_with_a_wrapper_is_called_through_pluggy():
    pm = create_plugin_manager()
    pm.register(Plain("noted"), "plain")
    pm.register(Wrapped(), "wrapped")
    observe = callers(pm, "toolang_observe_tool_result")
    assert isinstance(observe["plain"], DirectCaller)
    assert isinstance(observe["wrapped"], pluggy.HookCaller)
    assert isinstance(callers(pm, "toolang_save_knowledge")["wrapped"], DirectCaller)


def test_while_calls_are_monitored_every_caller_is_pluggys_own():
    pm = create_plugin_manager()
    pm.register(Plain("noted"), "plain")
    seen = []
    undo = pm.add_hookcall_monitoring(lambda name, *a: seen.append(name), lambda *a: None)
    caller = callers(pm, "toolang_observe_tool_result")["plain"]
    assert isinstance(caller, pluggy.HookCaller)
    caller(call="c", result="r", ctx="x")
    assert seen == ["toolang_observe_tool_result"]
    undo()
    assert isinstance(callers(pm, "toolang_observe_tool_result")["plain"], DirectCaller)


def test_registering_a_plugin_refreshes_the_callers():
    pm = create_plugin_manager()
    pm.register(Plain("a"), "first")
    assert list(callers(pm, "toolang_observe_tool_result")) == ["first"]
    pm.register(Plain("b"), "second")
    assert list(callers(pm, "toolang_observe_tool_result")) == ["second", "first"]


def test_an_inactive_plugin_is_left_out_of_that_hook_only_until_the_undo():
    pm = create_plugin_manager()
    pm.register(Plain("a"), "first")
    pm.register(Wrapped(), "wrapped")
    assert list(callers(pm, "toolang_observe_tool_result")) == ["wrapped", "first"]
    undo = pm.set_inactive([("first", "toolang_observe_tool_result")])
    assert list(callers(pm, "toolang_observe_tool_result")) == ["wrapped"]
    assert list(callers(pm, "toolang_save_knowledge")) == ["wrapped"]
    undo()
    assert list(callers(pm, "toolang_observe_tool_result")) == ["wrapped", "first"]


@pytest.mark.parametrize(
    ("plugins", "hook", "kwargs"),
    [
        (
            {"plain": Plain("noted")},
            "toolang_observe_tool_result",
            {"call": 1, "result": 2, "ctx": 3},
        ),
        ({"plain": Plain(None)}, "toolang_observe_tool_result", {"call": 1, "result": 2, "ctx": 3}),
        ({"gate": Gate()}, "toolang_approve_tool_call", {"call": "c", "ctx": "x"}),
        ({"wrapped": Wrapped()}, "toolang_observe_tool_result", {"call": 1, "result": 2, "ctx": 3}),
    ],
)
def test_each_answerer_answers_its_callers_answers_as_a_list(plugins, hook, kwargs):
    pm = create_plugin_manager()
    for name, plugin in plugins.items():
        pm.register(plugin, name)
    for (name, caller), (same, answers) in zip(
        pm.per_plugin_callers(hook), pm.per_plugin_answers(hook), strict=True
    ):
        assert name == same
        raw = caller(**kwargs)
        expected = raw if isinstance(raw, list) else ([] if raw is None else [raw])
        assert answers(kwargs) == expected


def test_the_answerers_follow_registration_and_inactivity():
    pm = create_plugin_manager()
    pm.register(Plain("a"), "first")
    assert [n for n, _ in pm.per_plugin_answers("toolang_observe_tool_result")] == ["first"]
    pm.register(Plain("b"), "second")
    assert [n for n, _ in pm.per_plugin_answers("toolang_observe_tool_result")] == [
        "second",
        "first",
    ]
    undo = pm.set_inactive([("second", "toolang_observe_tool_result")])
    assert [n for n, _ in pm.per_plugin_answers("toolang_observe_tool_result")] == ["first"]
    undo()
    assert len(pm.per_plugin_answers("toolang_observe_tool_result")) == 2
