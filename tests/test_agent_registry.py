"""The registry's merge rules, each on its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolang_core.agents.registry import AgentRegistry, SourceInput
from toolang_core.agents.types import AgentDefinition, AgentDiagnostic, AgentHealth, AgentLoad
from toolang_core.config import ToolangConfig
from toolang_core.config.model import AgentsConfig


def source(label, *definitions, name=None, plugin=None, diagnostics=(), health=None):
    return SourceInput(
        name=name or f"{label}-source",
        label=label,
        plugin=plugin or f"{label}-plugin",
        load=AgentLoad(definitions=definitions, diagnostics=diagnostics, health=health or {}),
    )


def agent(name, **kw):
    kw.setdefault("origin", f"/defs/{name}/AGENT.md")
    return AgentDefinition(name=name, **kw)


def merge(*inputs, config=None):
    return AgentRegistry.merge(inputs, config=config)


@pytest.mark.parametrize("label", ["embedded", "user", "remote"])
def test_a_built_in_name_is_reserved_against_every_other_source(label):
    impostor = agent("operator", instruction="mine", origin=f"/{label}/operator/AGENT.md")
    registry = merge(source("builtin", agent("operator")), source(label, impostor))
    assert registry.get("operator").source == "builtin"
    (error,) = registry.errors
    assert str(error) == (
        f"/{label}/operator/AGENT.md: agent name 'operator' is reserved by a built-in agent; "
        "rename this definition"
    )


def test_a_user_definition_replaces_an_embedded_default_of_the_same_name():
    registry = merge(
        source("user", agent("reviewer", instruction="user's")),
        source("embedded", agent("reviewer", instruction="default")),
    )
    assert (registry.get("reviewer").source, registry.get("reviewer").instruction) == (
        "user",
        "user's",
    )
    (note,) = registry.diagnostics
    assert note.level == "info"


@pytest.mark.parametrize("local", ["embedded", "user"])
def test_a_remote_agent_never_shadows_a_local_one(local):
    registry = merge(
        source("remote", agent("helper", origin="http://127.0.0.1:1")),
        source(local, agent("helper")),
    )
    assert registry.get("helper").source == local
    (error,) = registry.errors
    assert error.origin == "http://127.0.0.1:1"
    assert f"would shadow the {local} agent" in error.message


def test_a_name_defined_twice_by_one_label_keeps_the_first_source_in_plugin_order():
    registry = merge(
        source("user", agent("x", instruction="b"), plugin="b-plugin"),
        source("user", agent("x", instruction="a"), plugin="a-plugin"),
    )
    assert registry.get("x").instruction == "a"
    assert "defined twice" in registry.errors[0].message


def test_a_bad_definition_is_reported_and_the_others_still_load():
    registry = merge(
        source("user", agent("Bad Name"), agent("good"), agent("bad-pattern", prefixes=("a*b",)))
    )
    assert [d.name for d in registry.all()] == ["good"]
    messages = [str(e) for e in registry.errors]
    assert messages[0].startswith("/defs/Bad Name/AGENT.md: agent 'Bad Name' not loaded")
    assert "tool pattern 'a*b'" in messages[1]
    assert registry.reports[0].rejected == 2


def test_a_source_that_failed_is_reported_and_the_others_count():
    failed = SourceInput("broken", "user", "broken-plugin", failed="OSError: disk on fire")
    registry = merge(failed, source("embedded", agent("fine")))
    assert registry.get("fine") is not None
    assert registry.reports[1].failed == "OSError: disk on fire"
    assert "agent source 'broken' of plugin 'broken-plugin' failed" in registry.errors[0].message


def test_active_is_ordered_by_source_priority_then_name():
    registry = merge(
        source("remote", agent("aaa-remote")),
        source("user", agent("zeta"), agent("alpha")),
        source("builtin", agent("planner"), agent("operator")),
        source("embedded", agent("reviewer")),
    )
    assert [d.name for d in registry.active()] == [
        "operator",
        "planner",
        "reviewer",
        "alpha",
        "zeta",
        "aaa-remote",
    ]


def test_disabled_agents_are_kept_but_not_active():
    registry = merge(source("user", agent("resting", status="disabled"), agent("awake")))
    assert [d.name for d in registry.all()] == ["awake", "resting"]
    assert [d.name for d in registry.active()] == ["awake"]


def test_tool_patterns_are_kept_in_one_spelling():
    registry = merge(source("user", agent("x", prefixes=("fs_", "fs_*", "exec"), tools=("*",))))
    assert registry.get("x").prefixes == ("fs_*", "exec*")
    assert registry.get("x").tools == ("*",)


def test_claiming_every_tool_is_refused():
    registry = merge(source("user", agent("greedy", prefixes=("*",))))
    assert registry.get("greedy") is None
    assert "would claim every tool" in registry.errors[0].message


def test_the_configured_default_is_made_when_no_source_defines_it_and_config_says_so(
    tmp_path: Path,
):
    config = ToolangConfig(base_dir=tmp_path, agents=AgentsConfig(create_default=True))
    registry = merge(source("user", agent("helper")), config=config)
    made = registry.get("assistant")
    assert (made.source, made.tools, registry.fallback) == ("builtin", ("*",), "assistant")


def test_a_default_no_source_defines_is_an_error_not_an_agent_allowed_every_tool(
    tmp_path: Path,
):
    config = ToolangConfig(base_dir=tmp_path, agents=AgentsConfig(default="asistant"))
    registry = merge(source("embedded", agent("assistant")), config=config)
    assert registry.get("asistant") is None and registry.fallback is None
    (error,) = registry.errors
    assert "'asistant' is defined by no agent source" in error.message
    assert error.origin.endswith("[agents] default")
    assert "did you mean 'assistant'?" in error.message
    assert "create_default = true" in error.message


def test_with_no_agent_source_at_all_the_default_is_made_single_agent_mode(tmp_path: Path):
    registry = merge(config=ToolangConfig(base_dir=tmp_path))
    assert registry.fallback == "assistant" and registry.errors == ()


def test_the_configured_default_is_not_made_when_a_source_defines_it(tmp_path: Path):
    config = ToolangConfig(base_dir=tmp_path)
    registry = merge(source("embedded", agent("assistant")), config=config)
    assert (registry.get("assistant").source, registry.fallback) == ("embedded", None)


def test_health_is_kept_only_for_accepted_agents():
    ok = AgentHealth("ok")
    registry = merge(
        source("user", agent("taken")),
        source("remote", agent("taken"), agent("far"), health={"taken": ok, "far": ok}),
    )
    assert dict(registry.health) == {"far": ok}


def test_a_plain_string_diagnostic_counts_as_an_error():
    registry = merge(source("user", diagnostics=("something broke",)))
    assert registry.errors == (AgentDiagnostic("error", "something broke"),)
