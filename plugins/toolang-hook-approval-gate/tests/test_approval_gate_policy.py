"""The policy: which tools need approval, which are auto-approved, and its settings."""

from __future__ import annotations

import pytest

import toolang_hook_approval_gate as plugin
from toolang_core import ConfigError, Denied, plugin_settings
from toolang_hook_approval_gate.policy import ApprovalGateSettings, Verdict, matches


@pytest.mark.parametrize(
    ("pattern", "tool", "expected"),
    [
        ("fs_write", "fs_write", True),
        ("fs_write", "fs_write_many", False),  # no trailing _ or *: an exact name
        ("exec_", "exec_run", True),
        ("exec_", "executor", False),
        ("fs*", "fs_read", True),
        ("fs_*", "fs_read", True),
        ("fs_*", "fsck", False),
        ("*", "anything", True),
    ],
)
def test_a_pattern_is_an_exact_name_or_a_prefix_ending_with_underscore_or_star(
    pattern, tool, expected
):
    assert matches(pattern, tool) is expected


def test_the_default_policy_asks_for_exec_and_fs_write_only():
    settings = ApprovalGateSettings()
    assert settings.verdict("exec_run") == Verdict("ask", "exec_")
    assert settings.verdict("fs_write") == Verdict("ask", "fs_write")
    assert settings.verdict("fs_read") == Verdict("abstain")


def test_the_default_policy_asks_before_granting_an_escalation():
    # request_tool widens a turn only on this gate's grant (docs/delegation.md)
    assert ApprovalGateSettings().verdict("request_tool") == Verdict("ask", "request_tool")
    policy = ApprovalGateSettings(auto_approve=("request_tool",))
    assert policy.verdict("request_tool") == Verdict("auto_approve", "request_tool")
    assert policy.verdict("exec_run") == Verdict("ask", "exec_")


def test_an_exact_auto_approve_beats_a_required_prefix():
    settings = ApprovalGateSettings(require=("exec_",), auto_approve=("exec_status",))
    assert settings.verdict("exec_status") == Verdict("auto_approve", "exec_status")
    assert settings.verdict("exec_run") == Verdict("ask", "exec_")


def test_an_exact_require_beats_an_auto_approved_prefix():
    settings = ApprovalGateSettings(require=("fs_write",), auto_approve=("fs_",))
    assert settings.verdict("fs_write") == Verdict("ask", "fs_write")
    assert settings.verdict("fs_read") == Verdict("auto_approve", "fs_")


def test_the_longer_prefix_wins():
    settings = ApprovalGateSettings(require=("fs_",), auto_approve=("fs_read_",))
    assert settings.verdict("fs_read_lines").action == "auto_approve"
    assert settings.verdict("fs_remove").action == "ask"


def test_equally_specific_patterns_in_both_lists_ask():
    settings = ApprovalGateSettings(require=("fs_",), auto_approve=("fs_*",))
    assert settings.verdict("fs_write") == Verdict("ask", "fs_")


def test_auto_approving_a_default_takes_it_out_of_the_defaults():
    settings = ApprovalGateSettings(auto_approve=("fs_write",))
    assert settings.verdict("fs_write") == Verdict("auto_approve", "fs_write")
    assert settings.verdict("exec_run") == Verdict("ask", "exec_")


def test_the_same_pattern_in_both_lists_is_a_setting_error():
    with pytest.raises(ValueError, match="require and auto_approve both list 'fs_write'"):
        ApprovalGateSettings(require=("fs_write",), auto_approve=("fs_write",))


def test_default_ask_asks_for_every_tool_no_pattern_names():
    settings = ApprovalGateSettings(require=(), auto_approve=("fs_read",), default="ask")
    assert settings.verdict("web_fetch") == Verdict("ask")
    assert settings.verdict("fs_read").action == "auto_approve"


def test_a_verdict_names_the_setting_that_decided():
    assert ApprovalGateSettings().verdict("exec_run").describe() == (
        "[plugins.hook-approval-gate] require 'exec_'"
    )
    assert ApprovalGateSettings(default="ask").verdict("x").describe() == (
        "[plugins.hook-approval-gate] default = 'ask'"
    )


def test_the_plugin_offers_the_gate_its_settings_and_the_approvals_command(
    toolang_host, toolang_register
):
    record = toolang_register(plugin, "hook-approval-gate")
    assert set(record.hooks) == {
        "toolang_approve_tool_call",
        "toolang_register_commands",
        "toolang_register_settings",
    }
    assert toolang_host.components.settings["hook-approval-gate"] is ApprovalGateSettings


def _settings(toolang_home, text: str) -> ApprovalGateSettings:
    toolang_home.write_config(f"[plugins.hook-approval-gate]\n{text}")
    return plugin_settings(toolang_home.load(), "hook-approval-gate", ApprovalGateSettings)


def test_settings_are_read_from_the_plugins_section(toolang_home):
    settings = _settings(
        toolang_home,
        'require = ["web_"]\nauto_approve = ["web_search"]\ndefault = "ask"\n'
        "timeout_seconds = 90\n",
    )
    assert settings == ApprovalGateSettings(
        require=("web_",), auto_approve=("web_search",), default="ask", timeout_seconds=90.0
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            'require = ["f*s"]',
            "plugins.hook-approval-gate: require[0]: '*' may only end a pattern",
        ),
        ('auto_approve = ["fs_read", ""]', "auto_approve[1]: expected a tool name or prefix"),
        ("timeout_seconds = -5", "timeout_seconds: expected a number of seconds > 0"),
        ('default = "maybe"', "plugins.hook-approval-gate.default: expected one of 'allow', 'ask'"),
        ('require = "exec_"', "plugins.hook-approval-gate.require: expected an array"),
        ("requires = []", "plugins.hook-approval-gate.requires: unknown key (did you mean"),
    ],
)
def test_a_bad_setting_names_the_key_and_what_was_expected(toolang_home, text, message):
    with pytest.raises(ConfigError) as caught:
        _settings(toolang_home, text + "\n")
    assert message in str(caught.value)
    assert "toolang.toml" in str(caught.value)


@pytest.fixture
def gate_context(toolang_runtime, toolang_call_context):
    """The context of a call of ``tool`` in a runtime with the gate, not serving."""
    runtime = toolang_runtime(plugins={plugin.NAME: plugin})
    return lambda tool: toolang_call_context(tool, runtime=runtime, thread_id="cli:t")


def test_without_a_store_to_ask_in_a_required_call_is_denied(gate_context):
    ctx = gate_context("fs_write")
    decision = plugin.toolang_approve_tool_call(ctx.call, ctx)
    assert isinstance(decision, Denied)
    assert decision.message == (
        "fs_write needs approval ([plugins.hook-approval-gate] require 'fs_write') but no "
        "execution store is open to ask in; it was not run"
    )


def test_a_tool_the_policy_does_not_name_gets_no_answer(gate_context):
    ctx = gate_context("fs_read")
    assert plugin.toolang_approve_tool_call(ctx.call, ctx) is None
