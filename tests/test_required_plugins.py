"""Required plugins fail closed outside strict mode too (issue #31, item 13).

Each broken gate here is a real distribution on a ``sys.path`` entry — one that fails
to import, one with a misspelled hook, one whose registration raises, one whose start-up
raises, one answering the wrong type, one that is not installed at all — each meant to
deny every call. None of them may let a tool run: the call's result and its trace say
which plugin and why, ``toolang doctor`` fails naming it, and ``toolang run`` says so at
start-up.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from toolang_core import Tool, hookimpl
from toolang_core.builtins import builtin_plugins
from toolang_core.config import load_config
from toolang_core.doctor import run_checks
from toolang_core.runtime import Runtime
from toolang_core.store.types import NewTurnRequest
from toolang_core.testing import make_distribution
from toolang_core.testing.models import ScriptedModel, text, tool_call

DENY_ALL = """
from toolang_core import Denied, hookimpl

@hookimpl
def toolang_approve_tool_call(call, ctx):
    return Denied("this gate denies every call")
"""

GATES = {
    "import": "import tl_not_installed_anywhere\n" + DENY_ALL,
    "typo": DENY_ALL.replace("toolang_approve_tool_call", "toolang_aprove_tool_call"),
    "register": DENY_ALL
    + """
@hookimpl
def toolang_register_settings(register):
    raise RuntimeError("settings class missing")
""",
    "startup": DENY_ALL
    + """
@hookimpl
def toolang_startup(runtime):
    raise RuntimeError("cannot reach the policy server")
""",
}

WHY = {
    "import": "failed to import: ModuleNotFoundError: No module named 'tl_not_installed_anywhere'",
    "typo": "failed validation in hook toolang_aprove_tool_call",
    "register": "raised while registering in hook toolang_register_settings",
    "startup": "raised in toolang_startup: RuntimeError: cannot reach the policy server",
}


class Effects:
    """A tool whose every run is counted: what must not happen."""

    def __init__(self) -> None:
        self.runs: list[str] = []

    def delete_everything(self, path: str) -> str:
        """Delete PATH."""
        self.runs.append(path)
        return f"deleted {path}"

    @hookimpl
    def toolang_register_tools(self, register):
        register(Tool.from_function(self.delete_everything))


def gate(make, kind: str, *, dist: str = "toolang-test-deny-gate", entry_point: str = "deny-gate"):
    module = "tl_deny_gate_" + kind
    make(
        dist, "0.3", entry_points={"toolang": {entry_point: module}}, modules={module: GATES[kind]}
    )


def runtime_with(tmp_path, config_text: str, effects: Effects, load: str) -> Runtime:
    path = tmp_path / "toolang.toml"
    path.write_text('[models]\ndefault = "scripted"\n' + config_text, encoding="utf-8")
    model = ScriptedModel([tool_call("delete_everything", {"path": "/srv"}), text("Done.")])
    return Runtime.from_config(
        load_config(path, env={}),
        env={"TOOLANG_LOAD_PLUGINS": load},
        builtins=[*builtin_plugins(), ("scripted", model.plugin()), ("effects", effects)],
    )


def tool_step(runtime: Runtime) -> dict:
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="t", input="clean up")).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    (step,) = [s.data for s in inbox.store.steps(turn_id) if "result" in s.data]
    return step


@pytest.mark.parametrize("kind", sorted(GATES))
def test_a_broken_required_gate_lets_no_tool_run(toolang_distribution, tmp_path, kind):
    gate(toolang_distribution, kind)
    effects = Effects()
    config = '[plugins]\nrequired = ["toolang-test-deny-gate"]\n'
    step = tool_step(runtime_with(tmp_path, config, effects, "deny-gate"))
    assert effects.runs == []  # before: the tool ran — the broken gate was left out
    result = step["result"]
    assert (result["ok"], result["error_type"]) == (False, "required_plugin")
    assert "required plugin 'deny-gate' (distribution toolang-test-deny-gate 0.3" in result["error"]
    assert WHY[kind] in result["error"]
    assert "no tool runs until it is fixed or removed from [plugins] required" in result["error"]
    (stage,) = step["chain"][:1]
    assert (stage["stage"], stage["verdict"], stage["plugin"]) == (
        "required",
        "refused",
        "deny-gate",
    )


def test_the_bundled_approval_gate_is_required_while_installed_and_enabled(
    toolang_distribution, tmp_path
):
    # This distribution, first on sys.path, stands for an installed approval gate that
    # is broken: no configuration names it, and still no tool runs.
    gate(
        toolang_distribution,
        "import",
        dist="toolang-hook-approval-gate",
        entry_point="hook-approval-gate",
    )
    effects = Effects()
    step = tool_step(runtime_with(tmp_path, "", effects, "hook-approval-gate"))
    assert effects.runs == []
    assert "required plugin 'hook-approval-gate'" in step["result"]["error"]
    assert "or disabled ([plugins] disable) to run without it" in step["result"]["error"]


def test_a_disabled_bundled_gate_is_not_required(toolang_distribution, tmp_path):
    gate(
        toolang_distribution,
        "import",
        dist="toolang-hook-approval-gate",
        entry_point="hook-approval-gate",
    )
    effects = Effects()
    config = '[plugins]\ndisable = ["hook-approval-gate"]\n'
    step = tool_step(runtime_with(tmp_path, config, effects, "hook-approval-gate"))
    assert effects.runs == ["/srv"] and step["result"]["ok"] is True


def test_a_required_plugin_that_is_not_installed_lets_no_tool_run(tmp_path):
    effects = Effects()
    config = '[plugins]\nrequired = ["toolang-hook-audit"]\n'
    step = tool_step(runtime_with(tmp_path, config, effects, "nothing"))
    assert effects.runs == []
    assert (
        "required plugin 'toolang-hook-audit' ([plugins] required) is not installed"
        in (step["result"]["error"])
    )


@pytest.mark.parametrize(
    "answer", ['"deny"', "False", 'Block("no")'], ids=["a string", "False", "a Block"]
)
def test_a_gate_answering_the_wrong_type_denies_the_call(toolang_distribution, tmp_path, answer):
    source = f"""
from toolang_core import Block, hookimpl

@hookimpl
def toolang_approve_tool_call(call, ctx):
    return {answer}
"""
    toolang_distribution(
        "toolang-test-wrong-gate",
        entry_points={"toolang": {"wrong-gate": "tl_wrong_gate"}},
        modules={"tl_wrong_gate": source},
    )
    effects = Effects()
    step = tool_step(runtime_with(tmp_path, "", effects, "wrong-gate"))
    assert effects.runs == []  # before: an answer that was no decision let the call through
    assert step["result"]["error_type"] == "denied"
    assert (
        "approval gate 'wrong-gate' failed: TypeError: toolang_approve_tool_call answered"
        in (step["result"]["error"])
    )


def test_a_required_observer_that_raises_withholds_the_result(toolang_distribution, tmp_path):
    toolang_distribution(
        "toolang-hook-audit",
        entry_points={"toolang": {"hook-audit": "tl_audit"}},
        modules={
            "tl_audit": """
from toolang_core import hookimpl

@hookimpl
def toolang_observe_tool_result(call, result, ctx):
    raise OSError("audit log is full")
"""
        },
    )
    effects = Effects()
    config = '[plugins]\nrequired = ["hook-audit"]\n'
    step = tool_step(runtime_with(tmp_path, config, effects, "hook-audit"))
    assert effects.runs == ["/srv"]  # it ran before the audit failed; the model is told
    result = step["result"]
    assert (result["ok"], result["error_type"]) == (False, "required_plugin")
    assert "required plugin 'hook-audit' failed in toolang_observe_tool_result" in result["error"]


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "site"
    gate(lambda *a, **kw: make_distribution(root, *a, **kw), "import")
    return root


def test_doctor_fails_naming_the_required_plugin(site, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(site))
    (tmp_path / "toolang.toml").write_text('[plugins]\nrequired = ["deny-gate"]\n')
    findings = run_checks(tmp_path / "toolang.toml", env={"TOOLANG_LOAD_PLUGINS": "deny-gate"})
    failed = [f.summary for f in findings if f.status == "fail"]
    assert any(
        s.startswith("required plugin 'deny-gate' (distribution toolang-test-deny-gate 0.3")
        and "no tool runs until" in s
        for s in failed
    ), failed


def test_toolang_run_says_at_start_up_that_no_tool_will_run(cli_run, site, tmp_path):
    (tmp_path / "toolang.toml").write_text(
        '[plugins]\nrequired = ["deny-gate"]\n[runtime]\nexecutor = "echo"\n'
    )
    result = cli_run(
        "--log-format",
        "json",
        "run",
        "--no-sources",
        "--until-idle",
        pythonpath=[site],
        env={"TOOLANG_LOAD_PLUGINS": "deny-gate"},
    )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    (said,) = [e for e in events if e.get("event") == "plugin.required_unavailable"]
    assert said["level"] == "error" and said["plugin"] == "deny-gate"
    assert "failed to import" in said["problem"] and "no tool runs until" in said["problem"]
