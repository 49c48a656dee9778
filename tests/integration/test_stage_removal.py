"""Removing a stage's plugin changes `toolang hooks` and what a tool call goes through.

The same turn — a scripted model writes a file whose text carries a recursive delete of
the root — runs with every plugin installed, then with one stage's plugin disabled
(``TOOLANG_DISABLE_PLUGINS``, applied before any import).
"""

from __future__ import annotations

import asyncio
import json

import pytest

from toolang_core import NewTurnRequest, TurnStatus
from toolang_core.builtins import builtin_plugins
from toolang_core.config.loader import load_config
from toolang_core.runtime import Runtime
from toolang_core.testing.cli import run_toolang
from toolang_core.testing.models import ScriptedModel, text, tool_call
from toolang_core.testing.runtimes import SCRIPTED_AGENT_CONFIG

CONFIG = (
    SCRIPTED_AGENT_CONFIG
    + """
[plugins.tools-operator]
workspace = "workspace"

[plugins.hook-approval-gate]
auto_approve = ["fs_write"]
"""
)
RISKY = {"path": "setup.txt", "text": "rm -rf /"}
STAGE_PLUGINS = {
    "hook-security-filter": "SecurityFilter",
    "hook-learning-observer": "LearningObserver",
    "hook-knowledge-saver": "KnowledgeSaver",
    "hook-event-publisher": "EventPublisher",
}


def chain_of(tmp_path, disabled: str | None) -> dict[str, list[str]]:
    env = {"TOOLANG_DISABLE_PLUGINS": disabled} if disabled else {}
    shown = run_toolang("hooks", "--json", cwd=tmp_path, env=env)
    assert shown.returncode == 0, shown.stderr
    (family,) = [f for f in json.loads(shown.stdout) if f["family"] == "tool-hooks"]
    return {e["stage"]: e["plugins"] for e in family["hooks"] if "stage" in e}


def run_turn(tmp_path, disabled: str | None):
    model = ScriptedModel([tool_call("fs_write", RISKY, call_id="c1"), text("done")])
    env = {"TOOLANG_DISABLE_PLUGINS": disabled} if disabled else {}
    config = load_config(tmp_path / "toolang.toml", env=env)
    runtime = Runtime.from_config(
        config, env=env, builtins=[*builtin_plugins(), ("scripted", model.plugin())]
    )
    inbox = runtime.open_inbox()
    try:
        # The operator owns fs_write (the default assistant delegates file work).
        request = NewTurnRequest(source="chat", thread_id="cli:t", input="go", agent="operator")
        turn_id = inbox.submit(request).id
        asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
        (step,) = [s for s in inbox.store.steps(turn_id) if s.kind == "tool_call"]
        return inbox.get(turn_id), step, model
    finally:
        inbox.store.close()


@pytest.fixture
def home(tmp_path):
    (tmp_path / "toolang.toml").write_text(CONFIG)
    return tmp_path


@pytest.mark.parametrize("plugin", sorted(STAGE_PLUGINS))
def test_disabling_a_stage_plugin_removes_it_from_toolang_hooks(home, plugin):
    stage = STAGE_PLUGINS[plugin]
    assert plugin in chain_of(home, None)[stage]
    assert plugin not in chain_of(home, plugin)[stage]


def test_with_the_security_filter_the_risky_write_is_blocked(home):
    turn, step, model = run_turn(home, None)
    assert turn.status is TurnStatus.COMPLETED
    assert step.data["result"]["error_type"] == "blocked"
    assert not (home / "workspace" / "setup.txt").exists()
    verdicts = [(s["stage"], s["verdict"]) for s in step.data["chain"]]
    assert ("SecurityFilter", "block") in verdicts
    assert "execute" not in [stage for stage, _ in verdicts]
    assert json.loads(model.calls[1].messages[-1].content)["error_type"] == "blocked"


def test_without_the_security_filter_the_same_write_runs(home):
    turn, step, _ = run_turn(home, "hook-security-filter")
    assert turn.status is TurnStatus.COMPLETED
    assert step.data["result"]["ok"] is True
    assert (home / "workspace" / "setup.txt").read_text() == RISKY["text"]
    stages = [s["stage"] for s in step.data["chain"]]
    assert stages[0] == "SecurityFilter"
    assert [s["verdict"] for s in step.data["chain"] if s["stage"] == "SecurityFilter"] == ["pass"]
    assert "execute" in stages


@pytest.mark.parametrize("plugin", ["hook-learning-observer", "hook-knowledge-saver"])
def test_without_a_post_stage_plugin_its_stage_is_empty_in_the_trace(home, plugin):
    stage = STAGE_PLUGINS[plugin]
    _, with_all, _ = run_turn(home, "hook-security-filter")
    assert [s["plugin"] for s in with_all.data["chain"] if s["stage"] == stage] == [plugin]
    _, without, _ = run_turn(home, f"hook-security-filter,{plugin}")
    assert [s for s in without.data["chain"] if s["stage"] == stage] == []
