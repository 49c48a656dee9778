"""Guardrails on the model's input and output (``toolang_check_model_input`` /
``toolang_check_model_output``), through a real runtime with a scripted model: a refusal
ends the turn ``failed`` with outcome ``guardrail`` (before the model call, or after it),
a rewrite is what the model sees or what the turn stores and returns, a guard that
raises refuses (fail closed, naming plugin and hook), the trace shows each, and an
``ask_agent`` specialist's loop passes the same guards."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from taskrun_helpers import make_runtime
from test_agent_turns import Tools, make, run_turn
from test_taskrun_tools import outputs, run_turn as run_cast_turn

from toolang_core import GuardContext, Refuse, RewriteAnswer, RewritePrompt, TurnStatus, hookimpl
from toolang_core.models.types import Message
from toolang_core.runtime import Runtime
from toolang_core.testing.cast import Cast
from toolang_core.testing.models import ScriptedModel, text, tool_call
from toolang_core.turn.timeline import step_lines

SECRET = "sk-proj-Zq8v3LmN0pR5tW7yB2dF4hJ6"


class Guard:
    """A guard plugin: ``input`` / ``output`` answer (a callable gets the value and the
    context); every check it was asked is kept in ``seen``."""

    def __init__(self, *, input: Any = None, output: Any = None) -> None:
        self.input, self.output = input, output
        self.seen: list[tuple[str, Any, GuardContext]] = []

    def _answer(self, answer: Any, value: Any, ctx: GuardContext) -> Any:
        return answer(value, ctx) if callable(answer) else answer

    @hookimpl
    def toolang_check_model_input(
        self, messages: tuple[Message, ...], ctx: GuardContext
    ) -> Refuse | RewritePrompt | None:
        self.seen.append(("input", messages, ctx))
        return self._answer(self.input, messages, ctx)

    @hookimpl
    def toolang_check_model_output(self, text: str, ctx: GuardContext) -> Any:
        self.seen.append(("output", text, ctx))
        return self._answer(self.output, text, ctx)


def guarded(tmp_path, model, *guards: tuple[str, Guard]):
    config = make(tmp_path, model).config
    plugins = [("scripted", model.plugin()), ("tools", Tools()), *guards]
    return Runtime.with_plugins(config, plugins, env={})


def guard_steps(steps) -> list[dict[str, Any]]:
    return [dict(s.data) for s in steps if s.kind == "guardrail"]


def test_an_input_refusal_ends_the_turn_before_any_model_call(tmp_path):
    model = ScriptedModel([text("never said")])
    guard = Guard(input=Refuse("no-medical-advice", "asks for a diagnosis"))
    turn, steps = run_turn(guarded(tmp_path, model, ("topics", guard)), "what is this rash?")
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "guardrail")
    assert turn.error == (
        "guardrail 'no-medical-advice' of plugin 'topics' refused the input: asks for a diagnosis"
    )
    assert model.calls == []  # the model never saw it
    assert [s.kind for s in steps] == ["prompt_build", "guardrail"]
    (step,) = [s for s in steps if s.kind == "guardrail"]
    assert step.status == "failed"
    assert step.data["hook"] == "toolang_check_model_input"
    assert step.data["refused"] == {
        "plugin": "topics",
        "rule": "no-medical-advice",
        "reason": "asks for a diagnosis",
    }
    (_, messages, ctx) = guard.seen[0]
    assert messages[-1] == Message(role="user", content="what is this rash?")
    assert (ctx.turn_id, ctx.agent, ctx.spawn_depth, ctx.step) == (turn.id, "assistant", 0, 0)


def test_an_output_refusal_ends_the_turn_after_the_model_answered(tmp_path):
    model = ScriptedModel([text("buy ACME shares now")])
    guard = Guard(
        output=lambda text, ctx: Refuse("no-financial-advice") if "shares" in text else None
    )
    turn, steps = run_turn(guarded(tmp_path, model, ("topics", guard)))
    assert (turn.status, turn.outcome, turn.output) == (TurnStatus.FAILED, "guardrail", None)
    assert turn.error == "guardrail 'no-financial-advice' of plugin 'topics' refused the answer"
    assert len(model.calls) == 1
    assert [s.kind for s in steps] == ["prompt_build", "model_call", "guardrail"]
    assert guard_steps(steps)[0]["refused"]["rule"] == "no-financial-advice"
    assert [kind for kind, _, _ in guard.seen] == ["input", "output"]


def test_an_answer_rewrite_is_what_the_turn_stores_and_the_trace_says_who(tmp_path):
    model = ScriptedModel([text("the answer is 42")])
    guard = Guard(output=lambda text, ctx: RewriteAnswer(text.replace("42", "[number]"), "hide it"))
    turn, steps = run_turn(guarded(tmp_path, model, ("masker", guard)))
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "the answer is [number]")
    (step,) = guard_steps(steps)
    assert step["hook"] == "toolang_check_model_output"
    assert step["rewritten_by"] == [{"plugin": "masker", "reason": "hide it"}]
    assert "refused" not in step
    (stored,) = [s for s in steps if s.kind == "guardrail"]
    assert step_lines(stored) == ["toolang_check_model_output: rewritten by masker (hide it)"]


def test_a_rewrite_never_puts_a_secret_raw_in_the_trace(tmp_path):
    model = ScriptedModel([text(f"your key is {SECRET}")])
    guard = Guard(output=lambda text, ctx: RewriteAnswer("your key is hidden", f"hid {SECRET}"))
    turn, steps = run_turn(guarded(tmp_path, model, ("masker", guard)))
    assert turn.output == "your key is hidden"
    (step,) = guard_steps(steps)
    assert step["rewritten_by"][0]["plugin"] == "masker"
    assert SECRET not in json.dumps([dict(s.data) for s in steps])


def test_a_prompt_rewrite_is_what_the_model_sees_and_what_the_trace_records(tmp_path):
    def mask(messages, ctx):
        return RewritePrompt(
            [Message(m.role, m.content.replace("Ada", "[name]")) for m in messages], "names"
        )

    model = ScriptedModel([text("hello")])
    turn, steps = run_turn(guarded(tmp_path, model, ("names", Guard(input=mask))), "I am Ada")
    assert turn.status is TurnStatus.COMPLETED
    assert model.calls[0].messages[-1].content == "I am [name]"
    (call,) = [s for s in steps if s.kind == "model_call"]
    assert call.data["messages"][-1]["content"] == "I am [name]"
    assert guard_steps(steps)[0]["rewritten_by"] == [{"plugin": "names", "reason": "names"}]


def test_every_guard_sees_the_previous_rewrite_and_the_first_refusal_wins(tmp_path):
    first = Guard(output=lambda text, ctx: RewriteAnswer(text + " (checked)"))
    refusing = Guard(output=lambda text, ctx: Refuse("too-long") if "checked" in text else None)
    never = Guard(output=Refuse("never-asked"))
    model = ScriptedModel([text("fine")])
    # pluggy asks the most recently registered plugin first
    runtime = guarded(tmp_path, model, ("never", never), ("refusing", refusing), ("first", first))
    turn, steps = run_turn(runtime)
    assert turn.outcome == "guardrail"
    assert [kind for kind, _, _ in never.seen] == ["input"]  # its output check never came
    assert refusing.seen[-1][1] == "fine (checked)"
    (step,) = guard_steps(steps)
    assert step["rewritten_by"] == [{"plugin": "first", "reason": "rewritten"}]
    assert step["refused"]["plugin"] == "refusing"


class Broken(Exception):
    pass


def test_a_guard_that_raises_refuses_naming_the_plugin_and_the_hook(tmp_path):
    def boom(text, ctx):
        raise Broken("lost its word list")

    model = ScriptedModel([text("fine")])
    after = Guard()
    turn, steps = run_turn(
        guarded(tmp_path, model, ("after", after), ("wordlist", Guard(output=boom)))
    )
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "guardrail")
    assert turn.error == (
        "guardrail 'error' of plugin 'wordlist' refused the answer: 'wordlist' failed in "
        "toolang_check_model_output: Broken: lost its word list"
    )
    assert [kind for kind, _, _ in after.seen] == ["input"]  # nobody after it was asked
    assert guard_steps(steps)[0]["refused"]["plugin"] == "wordlist"


def test_a_wrong_answer_refuses_too(tmp_path):
    model = ScriptedModel([text("fine")])
    turn, _ = run_turn(guarded(tmp_path, model, ("sloppy", Guard(input="not a verdict"))))
    assert turn.outcome == "guardrail"
    assert "'sloppy' failed in toolang_check_model_input" in turn.error
    assert "expected one of Refuse, RewritePrompt" in turn.error
    assert model.calls == []


def test_a_rewrite_that_is_no_prompt_refuses_naming_the_plugin(tmp_path):
    model = ScriptedModel([text("fine")])
    guard = Guard(input=lambda messages, ctx: RewritePrompt(["just a string"]))
    turn, _ = run_turn(guarded(tmp_path, model, ("sloppy", guard)))
    assert turn.outcome == "guardrail" and model.calls == []
    assert "'sloppy' failed in toolang_check_model_input: TypeError" in turn.error


def test_guards_check_every_model_call_and_only_the_final_answer(tmp_path):
    model = ScriptedModel([tool_call("bump", {"label": "a"}), text("done")])
    guard = Guard()
    turn, steps = run_turn(guarded(tmp_path, model, ("watch", guard)))
    assert turn.status is TurnStatus.COMPLETED
    assert [(kind, ctx.step) for kind, _, ctx in guard.seen] == [
        ("input", 0),
        ("input", 1),
        ("output", 1),
    ]
    assert guard_steps(steps) == []  # nothing rewritten or refused: nothing recorded


def test_an_asked_agents_loop_passes_the_guards_one_level_deeper(tmp_path):
    ask = {"agent": "researcher", "request": "what moves the tides?"}
    cast = Cast(
        assistant=[tool_call("ask_agent", ask), text("it could not say")],
        researcher=[text("the moon, says my secret source")],
    )

    def refuse_secrets(text, ctx):
        return Refuse("no-sources", "names a source") if "secret" in text else None

    guard = Guard(output=refuse_secrets)
    runtime = make_runtime(tmp_path, cast, plugins=[("guard", guard)])
    turn = run_cast_turn(runtime)
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "it could not say")
    (told,) = outputs(cast)  # the asking agent is told the specialist was refused
    assert "guardrail 'no-sources' of plugin 'guard' refused the answer" in told
    depths = [(kind, ctx.agent, ctx.spawn_depth) for kind, _, ctx in guard.seen]
    assert ("output", "researcher", 1) in depths
    assert depths[-1] == ("output", "assistant", 0)


def test_toolang_turns_shows_the_guardrail(tmp_path):
    model = ScriptedModel([text("never said")])
    guard = Guard(input=Refuse("off-topic", "not about tides"))
    turn, _ = run_turn(guarded(tmp_path, model, ("topics", guard)))
    (tmp_path / "toolang.toml").write_text('[runtime]\nexecutor = "agent"\n')

    def toolang(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "toolang_core", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    listed = toolang("turns", "list")
    assert turn.id in listed and "failed" in listed and "guardrail 'off-topic'" in listed
    shown = json.loads(toolang("turns", "show", turn.id, "--json"))
    assert (shown["turn"]["status"], shown["turn"]["outcome"]) == ("failed", "guardrail")
    (step,) = [s for s in shown["steps"] if s["kind"] == "guardrail"]
    assert step["data"]["refused"]["plugin"] == "topics"
    traced = toolang("turns", "trace", turn.id)
    assert f"turn {turn.id} on cli:t: failed (guardrail)" in traced
    assert "toolang_check_model_input: refused by topics, rule off-topic: not about tides" in traced


def test_no_guard_installed_costs_no_check(tmp_path):
    model = ScriptedModel([text("hi")])
    runtime = make(tmp_path, model)
    assert not runtime.hooks.implemented("toolang_check_model_output")
    turn, steps = run_turn(runtime)
    assert turn.output == "hi" and guard_steps(steps) == []
