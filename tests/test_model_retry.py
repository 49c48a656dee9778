"""A model call that fails is made again ([models.retry]) or passed to a fallback model
([models] fallback, an agent's own fallback), through a real runtime with scripted
models; every attempt is a step of the turn's trace, and no tool call is made twice."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from bump_tools import BUMPED, BumpTools, clear_bumps  # noqa: F401 (a fixture)
from kill_helpers import install_kit

from toolang_core import ModelError, ModelRateLimited
from toolang_core.agents.types import AgentDefinition
from toolang_core.config import ToolangConfig, parse_config
from toolang_core.config.model import ModelRetryConfig, ModelsConfig, RuntimeConfig
from toolang_core.errors import ConfigError
from toolang_core.runtime import Runtime
from toolang_core.store.types import NewTurnRequest, TurnStatus
from toolang_core.testing.agents import AgentsPlugin
from toolang_core.testing.cli import assert_no_traceback
from toolang_core.testing.models import ScriptedModel, error, text, tool_call
from toolang_core.testing.processes import KILL_AND_RESUME_CONFIG
from toolang_core.turn.model_retry import backoff, decide
from toolang_core.turn.timeline import step_lines

COUNTER = BUMPED
FAST = ModelRetryConfig(attempts=3, initial_wait_seconds=0.01, max_wait_seconds=0.05)


def make(tmp_path, models, *, fallback=(), retry=FAST, agents=()):
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.05, shutdown_grace_seconds=0),
        models=ModelsConfig(default="scripted", fallback=tuple(fallback), retry=retry),
    )
    plugins = [(name, model.plugin(name)) for name, model in models.items()]
    plugins.append(("tools", BumpTools()))
    if agents:
        plugins.append(("agents", AgentsPlugin(*agents)))
    return Runtime.with_plugins(config, plugins, env={})


def run_turn(runtime, text_in="hi", **kw):
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:r", input=text_in, **kw)).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    try:
        return inbox.get(turn_id), inbox.store.steps(turn_id)
    finally:
        inbox.store.close()


def model_steps(steps):
    return [s for s in steps if s.kind == "model_call"]


def test_a_rate_limited_call_is_retried_with_backoff_and_then_answers(tmp_path):
    model = ScriptedModel(
        [
            error("slow down", kind="rate_limit"),
            error("slow down", kind="rate_limit"),
            text("hello"),
        ]
    )
    turn, steps = run_turn(make(tmp_path, {"scripted": model}))
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "hello")
    model.assert_complete()
    calls = model_steps(steps)
    assert [(s.status, s.data.get("error_kind"), s.data.get("next")) for s in calls] == [
        ("failed", "rate_limit", "retry"),
        ("failed", "rate_limit", "retry"),
        ("completed", None, None),
    ]
    first, second, done = calls
    assert first.idempotency_key == f"{turn.id}:model:0:try:1"
    assert second.idempotency_key == f"{turn.id}:model:0:try:2"
    assert done.idempotency_key == f"{turn.id}:model:0"
    assert "ModelError: slow down" in first.error
    for attempt in (first, second):  # the wait is in the trace, within the policy
        assert 0 <= attempt.data["wait_seconds"] <= FAST.max_wait_seconds
        assert attempt.data["transient"] is True
        assert attempt.data["model"] == "scripted"
    shown = "\n".join(step_lines(first))  # what `toolang trace` prints
    assert "attempt 1 failed (rate_limit): retried in" in shown


def test_a_retry_after_a_tool_call_does_not_run_the_tool_again(tmp_path):
    model = ScriptedModel(
        [
            tool_call("bump", {"label": "a"}, call_id="c1"),
            error("overloaded", kind="overloaded"),
            text("done"),
        ]
    )
    turn, steps = run_turn(make(tmp_path, {"scripted": model}))
    assert (turn.status, turn.output, COUNTER) == (TurnStatus.COMPLETED, "done", ["a"])
    assert [s.kind for s in steps].count("tool_call") == 1
    # the retried call sends the same history, the tool's result in it
    assert model.calls[2].messages == model.calls[1].messages
    assert model.calls[2].messages[-1].tool_call_id == "c1"


def test_the_turn_fails_once_the_attempts_are_used_up(tmp_path):
    model = ScriptedModel([error("busy", kind="server")] * 3)
    turn, steps = run_turn(make(tmp_path, {"scripted": model}))
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "model_error")
    assert "model 'scripted' failed: ModelError: busy" in turn.error
    model.assert_complete()
    assert [s.data["next"] for s in model_steps(steps)] == ["retry", "retry", "give_up"]


@pytest.mark.parametrize("kind", ["auth", "not_found", "refused", None])
def test_a_permanent_error_is_not_retried(tmp_path, kind):
    model = ScriptedModel([error("no", kind=kind)])
    turn, steps = run_turn(make(tmp_path, {"scripted": model}))
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "model_error")
    assert len(model.calls) == 1
    [failed] = model_steps(steps)
    assert (failed.data["error_kind"], failed.data["transient"], failed.data["next"]) == (
        kind or "error",
        False,
        "give_up",
    )
    assert "wait_seconds" not in failed.data


def test_a_kind_left_out_of_retry_on_is_not_retried(tmp_path):
    model = ScriptedModel([error("slow down", kind="rate_limit")])
    retry = ModelRetryConfig(initial_wait_seconds=0.01, on=("server",))
    turn, _ = run_turn(make(tmp_path, {"scripted": model}, retry=retry))
    assert turn.status is TurnStatus.FAILED
    assert len(model.calls) == 1


def test_after_its_retries_the_call_goes_to_the_fallback_model(tmp_path):
    primary = ScriptedModel([error("overloaded", kind="overloaded")] * 3)
    backup = ScriptedModel([text("from the backup")])
    runtime = make(tmp_path, {"scripted": primary, "backup": backup}, fallback=["backup/small"])
    turn, steps = run_turn(runtime)
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "from the backup")
    primary.assert_complete()
    assert backup.calls[0].model_id == "small"  # the fallback's own model id
    calls = model_steps(steps)
    assert [s.data["model"] for s in calls] == ["scripted"] * 3 + ["backup/small"]
    assert calls[2].data["next"] == "fallback"
    assert calls[2].data["fallback_to"] == "backup/small"
    assert calls[-1].status == "completed"


def test_a_permanent_error_falls_back_at_once(tmp_path):
    primary = ScriptedModel([error("bad key", kind="auth")])
    backup = ScriptedModel([text("ok")])
    runtime = make(tmp_path, {"scripted": primary, "backup": backup}, fallback=["backup"])
    turn, _ = run_turn(runtime)
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "ok")
    assert len(primary.calls) == 1


def test_a_refusal_does_not_fall_back(tmp_path):
    primary = ScriptedModel([error("I will not", kind="refused")])
    backup = ScriptedModel([])
    runtime = make(tmp_path, {"scripted": primary, "backup": backup}, fallback=["backup"])
    turn, _ = run_turn(runtime)
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "model_error")
    assert backup.calls == []


def test_when_every_model_fails_the_error_names_each(tmp_path):
    primary = ScriptedModel([error("bad key", kind="auth")])
    backup = ScriptedModel([error("unknown model", kind="not_found")])
    runtime = make(tmp_path, {"scripted": primary, "backup": backup}, fallback=["backup"])
    turn, _ = run_turn(runtime)
    assert turn.outcome == "model_error"
    assert turn.error == (
        "model 'scripted' failed: ModelError: bad key; "
        "fallback 'backup' failed: ModelError: unknown model"
    )


def test_an_agents_own_fallback_replaces_the_runtimes(tmp_path):
    primary = ScriptedModel([error("bad key", kind="auth")])
    backup = ScriptedModel([])
    mine = ScriptedModel([text("from mine")])
    agent = AgentDefinition(name="assistant", fallback=("mine",))
    runtime = make(
        tmp_path,
        {"scripted": primary, "backup": backup, "mine": mine},
        fallback=["backup"],
        agents=[agent],
    )
    turn, _ = run_turn(runtime)
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "from mine")
    assert backup.calls == []


def test_a_model_error_subclass_carries_its_kind_and_retry_after():
    exc = ModelRateLimited("429", retry_after=2.5)
    assert (exc.kind, exc.transient, exc.retry_after) == ("rate_limit", True, 2.5)
    assert isinstance(exc, ModelError)
    assert ModelError("x").kind == "error" and not ModelError("x").transient
    assert ModelError("x", kind="timeout").transient


def test_backoff_grows_is_capped_jittered_and_honours_retry_after():
    config = ModelRetryConfig(initial_wait_seconds=1, multiplier=2, max_wait_seconds=5, jitter=0.5)
    assert [backoff(config, n, rand=lambda: 0.0) for n in (1, 2, 3, 4)] == [1, 2, 4, 5]
    assert backoff(config, 2, rand=lambda: 1.0) == 1.0  # half of 2 taken off at most
    assert backoff(config, 1, retry_after=3, rand=lambda: 0.0) == 3
    assert backoff(config, 1, retry_after=60, rand=lambda: 0.0) == 5  # capped
    assert decide(config, "rate_limit", 3, True) == "fallback"
    assert decide(config, "rate_limit", 2, False) == "retry"


# -- bad input ------------------------------------------------------------------------


def problems(text: str) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_config(text, file=Path("toolang.toml"), env={})
    return info.value.problems


def test_the_retry_keys_are_checked_and_named():
    found = problems("[models.retry]\nattempts = 0\njitter = 2\nmultiplier = 0.5\n")
    assert len(found) == 3
    text = "\n".join(found)
    for key in ("attempts", "jitter", "multiplier"):
        assert f"toolang.toml: models.retry.{key}: expected a number" in text


def test_a_fallback_that_is_not_a_model_name_is_named():
    found = problems('[models]\nfallback = ["llm/ok", "Not A Model"]\n')
    assert len(found) == 1
    assert found[0].startswith("toolang.toml: models.fallback[1]: expected a model name")
    assert "'Not A Model'" in found[0]
    assert problems('[models]\nfallback = "llm/ok"\n')  # a list, not a string


def test_retry_on_names_only_transient_kinds():
    found = problems('[models.retry]\non = ["auth"]\n')
    assert len(found) == 1
    assert "models.retry.on[0]" in found[0] and "'auth'" in found[0]
    assert "rate_limit" in found[0]  # what is expected


def test_max_wait_below_the_initial_wait_is_refused():
    found = problems("[models.retry]\ninitial_wait_seconds = 5\nmax_wait_seconds = 1\n")
    assert len(found) == 1 and "models.retry.max_wait_seconds" in found[0]


def test_a_fallback_model_no_provider_gives_stops_the_runtime_at_start(tmp_path):
    runtime = make(tmp_path, {"scripted": ScriptedModel([])}, fallback=["nope/x"])
    with pytest.raises(ConfigError) as info:
        asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    [line] = info.value.problems
    assert line.startswith("[models] fallback[0] = 'nope/x': no model provider 'nope'")
    assert "installed providers: scripted" in line


def test_an_agents_fallback_no_provider_gives_is_named_at_start(tmp_path):
    agent = AgentDefinition(name="assistant", fallback=("ghost/m",))
    runtime = make(tmp_path, {"scripted": ScriptedModel([])}, agents=[agent])
    with pytest.raises(ConfigError) as info:
        asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    assert info.value.problems[0].startswith("agent 'assistant' fallback[0] = 'ghost/m'")


AGENT_MD = """---
name: writer
model: scripted
fallback: {fallback}
---
You write.
"""


def test_agent_md_declares_fallback_models():
    from toolang_core import parse_agent_md

    load = parse_agent_md(
        AGENT_MD.format(fallback="[backup/a, mine]"), origin="AGENT.md", source="user"
    )
    [definition] = load.definitions
    assert definition.fallback == ("backup/a", "mine")


def test_agent_md_fallback_must_be_a_list_of_model_names():
    from toolang_core import parse_agent_md
    from toolang_core.agents.validate import DefinitionError, checked

    load = parse_agent_md(AGENT_MD.format(fallback="backup"), origin="AGENT.md", source="user")
    [problem] = load.diagnostics
    assert (problem.level, problem.line) == ("error", 4)
    assert "fallback must be a list of strings" in problem.message
    load = parse_agent_md(AGENT_MD.format(fallback="['Bad Name']"), origin="A", source="user")
    with pytest.raises(DefinitionError, match=r"fallback\[0\]: expected a model name"):
        checked(load.definitions[0])


def toolang(home: Path, site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    env.update(
        TOOLANG_LOAD_PLUGINS="scripted",
        TOOLANG_SCRIPT=str(home / "script.json"),
        PYTHONPATH=os.pathsep.join([str(site), env.get("PYTHONPATH", "")]),
    )
    return subprocess.run(
        [sys.executable, "-m", "toolang_core", *args],
        check=False,
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_doctor_and_toolang_run_name_a_fallback_model_no_provider_gives(tmp_path):
    site = tmp_path / "site"
    install_kit(site)
    home = tmp_path / "home"
    home.mkdir()
    (home / "script.json").write_text("[]")
    (home / "toolang.toml").write_text(
        KILL_AND_RESUME_CONFIG + 'fallback = ["scripted/other", "ghost/x"]\n'
    )
    doctor = toolang(home, site, "doctor")
    assert doctor.returncode != 0
    assert "ghost/x ([models] fallback[1]): no model provider 'ghost'" in doctor.stdout
    assert "scripted/other" not in doctor.stdout.split("model(s) cannot answer")[1]

    run = toolang(home, site, "run", "--no-sources", "--until-idle")
    assert run.returncode == ConfigError.exit_code, run.stderr
    assert "[models] fallback[1] = 'ghost/x': no model provider 'ghost'" in run.stderr
    assert_no_traceback(run)


def test_a_fallback_of_the_same_provider_is_asked_for_its_own_model_id(tmp_path):
    model = ScriptedModel([error("gone", kind="not_found"), text("small here")])
    runtime = make(tmp_path, {"scripted": model}, fallback=["scripted/small"])
    turn, _ = run_turn(runtime)
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "small here")
    assert [c.model_id for c in model.calls] == [None, "small"]
