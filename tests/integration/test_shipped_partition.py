"""Every tool shipped in this repository has an owner among the shipped default agents.

Lango's recurring bug was tools that no agent's prefixes matched, so no specialist
could ever call them. Runs in the tox `integration` env, where every plugin under
`plugins/` is installed: the tools and the agents are discovered through entry points,
exactly as `toolang run` discovers them, and partitioned against the shipped defaults
(the built-in roles and the embedded AGENT.md files; no user or remote agents).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from toolang_core.agents.catalog import UNPARTITIONED
from toolang_core.agents.partition import assign_tools
from toolang_core.config import load_config
from toolang_core.plugins.records import PluginStatus
from toolang_core.runtime import Runtime

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
SHIPPED = ("builtin", "embedded")


def shipped_entry_points() -> set[str]:
    names = set()
    for pyproject in PLUGINS.glob("*/pyproject.toml"):
        project = tomllib.loads(pyproject.read_text())["project"]
        names |= set(project.get("entry-points", {}).get("toolang", {}))
    return names


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    home = tmp_path_factory.mktemp("shipped")
    (home / "toolang.toml").write_text("")
    env = {"HOME": str(home)}
    return Runtime.from_config(load_config(home / "toolang.toml", env=env), env=env)


def test_every_plugin_of_the_repository_is_loaded(runtime):
    failed = [r.failure_message() for r in runtime.host.records if r.status is PluginStatus.FAILED]
    assert failed == []
    assert shipped_entry_points() <= set(runtime.host.active_names)


def test_every_shipped_tool_is_owned_by_a_shipped_default_agent(runtime):
    # request_tool is the agent loop's own (capability escalation): no agent owns it.
    tools = sorted(set(runtime.host.components.tools) - UNPARTITIONED)
    assert "exec_run" in tools  # the tool plugins really are installed
    defaults = [d for d in runtime.agents.registry.active() if d.source in SHIPPED]
    assert {"operator", "planner", "chronicler", "assistant", "reviewer"} <= {
        d.name for d in defaults
    }
    assignment = assign_tools(tools, defaults)
    assert assignment.unmatched == (), (
        f"tools no shipped agent's prefixes cover: {', '.join(assignment.unmatched)} — give "
        "them to a role (toolang-agents-builtin) or rename them into a role's prefix"
    )


def test_the_shipped_defaults_load_without_a_problem(runtime):
    problems = [str(d) for d in runtime.agents.registry.diagnostics if d.level != "info"]
    assert problems == []
