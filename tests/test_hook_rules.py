"""Every hook is called through its declared calling rule.

Three proofs, each over every hook spec, so a new hook without a rule, a rule without
a combiner, or a facade wrapper that calls plugins its own way fails here:

- each hook, called through ``Hooks.call`` with two plugins of known answers (and one
  that raises), combines them as its declared rule says;
- each hook's typed wrapper on the facade (or its stage of the tool-call chain, or the
  registration the host does) reaches the runner with its rule's combiner;
- no core or plugin module calls a hook's implementations but the facade's runner.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from toolang_core import AgentDefinition, hookimpl
from toolang_core.hookspecs import FAMILIES
from toolang_core.hookspecs.combiners import Combiner, Terms
from toolang_core.hookspecs.rules import (
    BEST_SCORE,
    BROADCAST,
    COLLECT,
    DECLARED,
    FILTER,
    FIRST_ANSWER,
    FIRST_NUMBER,
    FOLD,
    HOOK_RULES,
    MERGE,
    REGISTRATION,
    CallingRule,
)
from toolang_core.plugins.facade import Hooks
from toolang_core.plugins.host import PluginHost
from toolang_core.tools import ToolCall, ToolResult, stages
from toolang_core.turn import guards

ROOT = Path(__file__).resolve().parents[1]
HOOKS = sorted(hook for family in FAMILIES for hook in family.hook_names)


class Boom(Exception):
    pass


def implementation(hook: str, argnames: tuple[str, ...], body: Callable[[dict], Any]) -> Any:
    """A plugin object implementing ``hook`` with the spec's argument names; ``body``
    gets the arguments as a dict and answers for the plugin."""
    namespace: dict[str, Any] = {"body": body}
    seen = ", ".join(f"{name!r}: {name}" for name in argnames)
    exec(f"def {hook}({', '.join(argnames)}):\n    return body({{{seen}}})", namespace)
    return type("FakePlugin", (), {hook: staticmethod(hookimpl(namespace[hook]))})()


class Two:
    """Two plugins implementing one hook: ``first`` is asked first, then ``second``."""

    def __init__(self, hook: str) -> None:
        self.hook = hook
        self.host = PluginHost()
        self.argnames = tuple(getattr(self.host.pm.hook, hook).spec.argnames)
        self.arguments = {name: f"<{name}>" for name in self.argnames}
        self.asked: list[str] = []
        self.seen: dict[str, dict] = {}

    def answer(self, first: Any, second: Any) -> Two:
        """Register the two; an answer that is an exception is raised."""
        # pluggy asks the most recently registered plugin first
        for name, answer in (("second", second), ("first", first)):
            self.host.register(
                implementation(self.hook, self.argnames, self._body(name, answer)), name
            )
        return self

    def _body(self, name: str, answer: Any) -> Callable[[dict], Any]:
        def body(arguments: dict) -> Any:
            self.asked.append(name)
            self.seen[name] = arguments
            if isinstance(answer, BaseException):
                raise answer
            return answer() if callable(answer) else answer

        return body

    def call(self, terms: Terms | None = None) -> Any:
        hooks = self.host.hooks
        done = (
            hooks.call(self.hook, **self.arguments)
            if terms is None
            else hooks.call_with(self.hook, terms, **self.arguments)
        )
        return asyncio.run(done) if DECLARED[self.hook].awaited else done

    @property
    def awaited(self) -> bool:
        return DECLARED[self.hook].awaited


def later(value: Any) -> Callable[[], Any]:
    """An answer given as an awaitable (an awaited hook must await it)."""

    async def answer() -> Any:
        return value

    return answer


def failed_plugins(failures: Any, hook: str) -> list[str]:
    assert all(f.hook == hook for f in failures), failures  # a failure names its hook
    return [f.plugin for f in failures]


# -- one scenario per rule: what two plugins' answers and raises must combine into ------


def registration(hook: str) -> None:
    done = Two(hook).answer("A", "B").call()
    assert [(p, answers, f) for p, answers, f in done] == [
        ("first", ["A"], None),
        ("second", ["B"], None),
    ]
    two = Two(hook).answer(Boom("broken"), "B")
    done = two.call()
    assert [(p, answers) for p, answers, _ in done] == [("first", []), ("second", ["B"])]
    assert done[0][2].plugin == "first" and "Boom: broken" in done[0][2].error
    assert two.asked == ["first", "second"]  # the others' registrations stand
    only = Two(hook).answer("A", "B")
    assert [p for p, _, _ in only.host.hooks.call_with(hook, Terms(only="second"))] == ["second"]


def broadcast(hook: str) -> None:
    two = Two(hook)
    answer = later(None) if two.awaited else None
    done = two.answer(answer, "ignored").call()
    assert done == [(hook, "first", None), (hook, "second", None)]
    two = Two(hook).answer(Boom("broken"), None)
    done = two.call()
    assert [p for _, p, _ in done] == ["first", "second"]  # the others are still called
    assert failed_plugins([f for _, _, f in done if f], hook) == ["first"]


def collect(hook: str) -> None:
    done = Two(hook).answer("A", None).call()
    assert done.answers == [("first", "A")]  # None is no answer
    done = Two(hook).answer("A", "B").call()
    assert done.answers == [("first", "A"), ("second", "B")]
    done = Two(hook).answer(Boom("broken"), "B").call()
    assert done.answers == [("second", "B")]
    assert failed_plugins(done.failures, hook) == ["first"]


def fail_closed_filter(hook: str) -> None:
    def amend(arguments: dict, verdict: str) -> None:
        arguments[next(iter(arguments))] = verdict

    terms = Terms(types=(str,), ends=lambda verdict: verdict == "block", amend=amend)
    two = Two(hook).answer(later("block"), "B")
    done = two.call(terms)
    assert done.decided == ("first", "block") and two.asked == ["first"]  # a block ends it
    two = Two(hook).answer("modified", "pass")
    done = two.call(terms)
    assert done.decided is None and done.answers == [("first", "modified"), ("second", "pass")]
    assert two.seen["second"][two.argnames[0]] == "modified"  # later ones see the change
    for broken in (Boom("broken"), 42):  # a raise, or an answer of the wrong type
        two = Two(hook).answer(broken, "B")
        done = two.call(terms)
        assert done.refused.plugin == "first" and two.asked == ["first"]  # fails closed
        assert failed_plugins(done.failures, hook) == ["first"]


def first_answer(hook: str) -> None:
    two = Two(hook)
    two.answer(later(None) if two.awaited else None, "B")
    assert two.call().decided == ("second", "B")  # an abstention is no answer
    two = Two(hook).answer("A", "B")
    assert two.call().decided == ("first", "A") and two.asked == ["first"]
    two = Two(hook).answer(Boom("broken"), "B")
    done = two.call()
    assert done.refused.plugin == "first" and done.decided is None and two.asked == ["first"]
    done = Two(hook).answer(42, "B").call(Terms(types=(str,)))
    assert done.refused.plugin == "first" and "expected one of str" in done.refused.error


def fold(hook: str) -> None:
    two = Two(hook)
    replaced = two.argnames[-1]
    done = two.answer(later("A"), "B").call(Terms(replaces=replaced))
    assert two.seen["second"][replaced] == "A"  # the value the previous one left
    assert done.arguments[replaced] == "B" and done.refused is None
    two = Two(hook).answer(Boom("broken"), "B")
    done = two.call(Terms(replaces=replaced))
    assert done.refused.plugin == "first" and two.asked == ["first"]  # withheld


def best_score(hook: str) -> None:
    low, high, other = (SimpleNamespace(score=s, name=n) for s, n in ((1, "a"), (2, "b"), (2, "c")))
    assert Two(hook).answer(low, high).call().decided == ("second", high)
    assert Two(hook).answer(high, other).call().decided == ("first", high)  # tie: first
    terms = Terms(accept=lambda answer: answer.name != "b")
    assert Two(hook).answer(low, high).call(terms).decided == ("first", low)  # only valid
    two = Two(hook).answer(Boom("broken"), low)
    done = two.call()
    assert done.decided == ("second", low) and failed_plugins(done.failures, hook) == ["first"]


def first_number(hook: str) -> None:
    two = Two(hook).answer(None, "2")
    assert two.call().decided == ("second", 2.0)
    two = Two(hook).answer(1, 2)
    assert two.call().decided == ("first", 1.0) and two.asked == ["first"]
    for broken in (Boom("broken"), "not a number"):
        done = Two(hook).answer(broken, 3).call()
        assert done.decided == ("second", 3.0) and failed_plugins(done.failures, hook) == ["first"]


def merge(hook: str) -> None:
    two = Two(hook)
    first = later({"k": "1", "a": "1"}) if two.awaited else {"k": "1", "a": "1"}
    assert two.answer(first, {"k": "2"}).call().merged == {"k": "2", "a": "1"}
    for broken in (Boom("broken"), ["no", "mapping"]):
        done = Two(hook).answer(broken, {"k": "2"}).call()
        assert done.merged == {"k": "2"} and failed_plugins(done.failures, hook) == ["first"]


SCENARIOS: dict[CallingRule, Callable[[str], None]] = {
    REGISTRATION: registration,
    BROADCAST: broadcast,
    COLLECT: collect,
    FILTER: fail_closed_filter,
    FIRST_ANSWER: first_answer,
    FOLD: fold,
    BEST_SCORE: best_score,
    FIRST_NUMBER: first_number,
    MERGE: merge,
}


def test_every_hook_declares_a_rule_with_a_combiner():
    assert sorted(HOOK_RULES) == HOOKS == sorted(DECLARED)
    for hook in HOOKS:
        assert issubclass(HOOK_RULES[hook].combiner, Combiner), hook
        assert DECLARED[hook].rule is HOOK_RULES[hook]


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_combines_its_answers_by_its_declared_rule(hook):
    rule = HOOK_RULES[hook]
    assert rule in SCENARIOS, f"{hook}: rule {rule.name!r} has no scenario in this test"
    SCENARIOS[rule](hook)


def test_a_hook_without_a_declared_rule_cannot_be_called(toolang_host):
    with pytest.raises(LookupError, match="toolang_made_up declares no calling rule"):
        toolang_host.hooks.call("toolang_made_up")


# -- every wrapper reaches the runner with its hook's combiner ---------------------------


def _every_hook_plugin(host: PluginHost) -> None:
    """A plugin implementing every hook, abstaining (registration hooks register nothing)."""
    namespace = {hook: staticmethod(hookimpl(lambda: None)) for hook in HOOKS}
    host.register(type("EveryHook", (), namespace)(), "every-hook")


CALL = ToolCall(call_id="c1", name="echo", params={})
RESULT = ToolResult(ok=True, output="x")
CTX = SimpleNamespace(call=CALL)
RT: Any = SimpleNamespace()
GUARD_CTX: Any = SimpleNamespace()


def _register(hook: str) -> Callable[[Hooks], Any]:
    """What the host does for a registration hook: call it for one plugin."""
    arguments = {"cli": None} if hook == "toolang_register_commands" else {"register": None}
    if hook == "toolang_agent_sources":
        arguments = {}
    return lambda h: h.registration(hook, "every-hook", **arguments)


WRAPPERS: dict[str, Callable[[Hooks], Any]] = {
    "toolang_startup": lambda h: h.startup(RT),
    "toolang_upkeep": lambda h: h.upkeep(RT),
    "toolang_shutdown": lambda h: h.shutdown(RT, "stop"),
    "toolang_offer_tools": lambda h: h.offer_tools(RT, lambda plugin: None),
    "toolang_inactive_hooks": lambda h: h.leave_out_inactive(RT)(),
    "toolang_on_event": lambda h: h.on_event(SimpleNamespace(), RT),
    "toolang_reports_turn_events": lambda h: h.reported_turn_events(RT),
    "toolang_prompt_notes": lambda h: h.prompt_notes("operator", "chat:1", RT),
    "toolang_build_agent": lambda h: h.build_agent(AgentDefinition("a"), SimpleNamespace(), RT),
    "toolang_route": lambda h: h.route("hello", []),
    "toolang_deliver_turn": lambda h: h.deliver_turn(SimpleNamespace(), RT),
    "toolang_turn_started": lambda h: h.turn_started(SimpleNamespace(), RT),
    "toolang_turn_step": lambda h: h.turn_step(SimpleNamespace(), RT),
    "toolang_turn_finished": lambda h: h.turn_finished(SimpleNamespace(), [], RT),
    "toolang_outbound_headers": lambda h: h.outbound_headers(SimpleNamespace(), "k", RT),
    "toolang_doctor_checks": lambda h: h.doctor_checks(RT),
    "toolang_agent_pool": lambda h: h.agent_pool(RT, SimpleNamespace(), SimpleNamespace()),
    "toolang_score_agent": lambda h: h.score_agent(SimpleNamespace(), "search"),
    "toolang_ping_agents": lambda h: h.ping_agents([], RT),
    "toolang_agree_payment": lambda h: h.agree_payment("team-1", SimpleNamespace()),
    "toolang_serves_routes": lambda h: h.route_servers(RT),
    "toolang_register_routes": lambda h: h.register_routes(),
    "toolang_finalize_task_run": lambda h: h.finalize_task_run(SimpleNamespace(), RT),
    "toolang_observe_task_run": lambda h: h.observe_task_run(SimpleNamespace(), RT),
    "toolang_check_model_input": lambda h: guards.check_input(h, (), GUARD_CTX),
    "toolang_check_model_output": lambda h: guards.check_output(h, "answer", GUARD_CTX),
    "toolang_filter_tool_call": lambda h: stages.filter_tool_call(h, CALL, CTX),
    "toolang_approve_tool_call": lambda h: stages.approve_tool_call(h, CALL, CTX),
    "toolang_filter_tool_result": lambda h: stages.filter_tool_result(h, CALL, RESULT, CTX),
    "toolang_observe_tool_result": lambda h: stages.after_tool_call(h, CALL, RESULT, CTX),
    "toolang_save_knowledge": lambda h: stages.after_tool_call(h, CALL, RESULT, CTX),
    "toolang_publish_event": lambda h: stages.refused_tool_call(h, CALL, RESULT, CTX),
    **{
        hook: _register(hook)
        for hook in HOOKS
        if HOOK_RULES[hook] is REGISTRATION and hook != "toolang_register_routes"
    },
}


@pytest.mark.parametrize("hook", HOOKS)
def test_the_facade_calls_every_hook_through_its_rules_combiner(hook, monkeypatch):
    assert hook in WRAPPERS, f"{hook}: no typed wrapper listed here (add one to Hooks)"
    host = PluginHost()
    _every_hook_plugin(host)
    ran: list[tuple[str, type]] = []
    for runner in ("_run", "_run_now"):
        original = getattr(Hooks, runner)

        def spy(self, *combiners, _original=original):
            ran.extend((combiner.hook, type(combiner)) for combiner in combiners)
            return _original(self, *combiners)

        monkeypatch.setattr(Hooks, runner, spy)
    done = WRAPPERS[hook](host.hooks)
    if asyncio.iscoroutine(done):
        asyncio.run(done)
    assert (hook, HOOK_RULES[hook].combiner) in ran, ran


# -- nothing else calls a hook's implementations ---------------------------------------

_DIRECT = re.compile(
    r"per_plugin_callers\(|per_plugin_answers\(|\.pm\.hook\.|\.hook\.toolang_\w+\(|subset_hook_caller\("
)
_RUNNERS = {ROOT / "toolang_core/plugins/runner.py", ROOT / "toolang_core/plugins/manager.py"}


def test_only_the_facade_runner_calls_hook_implementations():
    sources = [*(ROOT / "toolang_core").rglob("*.py")]
    for package in (ROOT / "plugins").glob("*/toolang_*"):
        sources += package.rglob("*.py")
    bypassing = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sources
        if path not in _RUNNERS
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _DIRECT.search(line)
    ]
    assert bypassing == [], "hooks called around Hooks.call:\n" + "\n".join(bypassing)
