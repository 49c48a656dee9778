"""``toolang agents …`` prints what the runtime really uses, not configuration."""

from __future__ import annotations

import asyncio
import json

import pytest

from toolang_core.config import load_config
from toolang_core.questions.tool import TOOL_NAME as ASK_PERSON
from toolang_core.runtime import Runtime
from toolang_core.store.types import NewTurnRequest
from toolang_core.testing.cli import assert_no_traceback, run_toolang
from toolang_core.testing.models import ScriptedModel, text
from toolang_core.testing.runtimes import SCRIPTED_AGENT_CONFIG
from toolang_core.turn.delegation_plugin import TOOL_NAMES as DELEGATION_TOOLS

CORE_TOOLS = (*DELEGATION_TOOLS, ASK_PERSON)
"""The core's own tools: no fixture agent claims them."""

FIXTURE = """
from toolang_core import AgentDefinition, AgentLoad, Tool, hookimpl

TOOLS = ["alpha_one", "alpha_two", "beta_run", "gamma"]


@hookimpl
def toolang_register_tools(register):
    for name in TOOLS:
        register(Tool(name=name, description=name, parameters={"type": "object"},
                      function=lambda: "ok"))


class Source:
    label = "user"
    name = "fixture"

    def load(self, context):
        return AgentLoad(definitions=(
            AgentDefinition(name="alpha", prefixes=("alpha_*",), keywords=("alpha",)),
            AgentDefinition(name="one", prefixes=("alpha_one",), origin="/defs/one/AGENT.md"),
            AgentDefinition(name="beta", prefixes=("beta_",), tools=("alpha_two",)),
            AgentDefinition(name="quiet", status="disabled"),
            AgentDefinition(name="Broken Name", origin="/defs/broken/AGENT.md"),
        ))


@hookimpl
def toolang_agent_sources():
    return Source()
"""
CONFIG = SCRIPTED_AGENT_CONFIG
ENV = {"TOOLANG_LOAD_PLUGINS": "test-agents"}


@pytest.fixture
def home(tmp_path, toolang_distribution, monkeypatch):
    toolang_distribution(
        "toolang-test-agents",
        entry_points={"toolang": {"test-agents": "agentsfix"}},
        modules={"agentsfix": FIXTURE},
    )
    monkeypatch.setenv("TOOLANG_LOAD_PLUGINS", "test-agents")
    (tmp_path / "toolang.toml").write_text(CONFIG)
    return tmp_path


def cli(home, toolang_distribution, *args):
    result = run_toolang(*args, cwd=home, env=ENV, pythonpath=[toolang_distribution.root])
    assert_no_traceback(result)
    return result


def test_agents_tools_equals_the_assignment_turns_run_with(home, toolang_distribution):
    printed = json.loads(cli(home, toolang_distribution, "agents", "tools", "--json").stdout)
    config = load_config(home / "toolang.toml", env=ENV)
    runtime = Runtime.from_config(config, env=ENV)
    model = ScriptedModel(lambda request: text("ok"))
    runtime.host.register(model.plugin(), "scripted")
    assert printed == runtime.agents.assignment.to_json()
    assert printed["agents"] == {
        "alpha": ["alpha_two"],
        "one": ["alpha_one"],
        "beta": ["alpha_two", "beta_run"],
        "assistant": sorted(["alpha_one", "alpha_two", "beta_run", "gamma", *CORE_TOOLS]),
    }
    inbox = runtime.open_inbox()
    ids = {
        name: inbox.submit(
            NewTurnRequest(source="chat", thread_id=f"chat:{name}", input="hi", agent=name)
        ).id
        for name in printed["agents"]
    }
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    try:
        used = {name: inbox.store.steps(turn)[0].data["tools"] for name, turn in ids.items()}
    finally:
        inbox.store.close()
    assert used == printed["agents"]


def test_agents_tools_names_each_owner_the_winning_prefix_and_the_unmatched(
    home, toolang_distribution
):
    out = cli(home, toolang_distribution, "agents", "tools").stdout
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[1:-1]}
    assert rows["alpha_one"] == ["one", "alpha_one*", "assistant"]
    assert rows["alpha_two"] == ["alpha", "alpha_*", "assistant,", "beta"]
    assert rows["gamma"] == ["(unmatched)", "-", "assistant"]
    # The built-in delegation tools are unmatched too: no fixture agent claims them.
    assert out.splitlines()[-1] == "unmatched: " + ", ".join(sorted(["gamma", *CORE_TOOLS]))


def test_agents_list_shows_every_agent_with_source_status_and_origin(home, toolang_distribution):
    result = cli(home, toolang_distribution, "agents", "list", "--json")
    rows = {r["name"]: (r["source"], r["status"], r["origin"]) for r in json.loads(result.stdout)}
    assert rows["one"] == ("user", "active", "/defs/one/AGENT.md")
    assert rows["quiet"] == ("user", "disabled", "")
    assert rows["assistant"][:2] == ("builtin", "active")
    assert "Broken Name" not in rows
    assert result.returncode == 1  # the list is not every agent
    assert "error: 1 agent definition(s) not loaded:\n  /defs/broken/AGENT.md: " in result.stderr


def test_agents_status_counts_per_source_and_lists_load_errors(home, toolang_distribution):
    result = cli(home, toolang_distribution, "agents", "status", "--json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    (source,) = report["sources"]
    assert (source["label"], source["kept"], source["rejected"]) == (
        "user",
        ["alpha", "one", "beta", "quiet"],
        1,
    )
    assert report["agents"] == {
        "active": 4,
        "disabled": 1,
        "by_source": {"builtin": 1, "user": 4},
        "idle": {},
        "not_loaded": 1,  # the counts above are partial: one file did not load
    }
    assert report["unmatched_tools"] == sorted(["gamma", *CORE_TOOLS])
    (problem,) = report["problems"]
    assert problem["origin"] == "/defs/broken/AGENT.md"


def test_agents_show_prints_one_agent_with_its_tools(home, toolang_distribution):
    shown = json.loads(cli(home, toolang_distribution, "agents", "show", "beta", "--json").stdout)
    assert (shown["prefixes"], shown["tools"]) == (["beta_*"], ["alpha_two*"])
    assert (shown["tools_in_scope"], shown["tools_owned"]) == (
        ["alpha_two", "beta_run"],
        ["beta_run"],
    )


def test_agents_show_of_an_unknown_agent_names_the_known_ones(home, toolang_distribution):
    result = cli(home, toolang_distribution, "agents", "show", "ghost")
    assert result.returncode == 2
    assert "no agent 'ghost' (agents: assistant, alpha, beta, one, quiet)" in result.stderr


def test_doctor_fails_on_a_definition_that_was_not_loaded(home, toolang_distribution):
    result = cli(home, toolang_distribution, "doctor")
    assert result.returncode == 1
    assert "agent definitions: 1 not loaded" in result.stdout
    shown = " ".join(result.stdout.split())  # the report wraps long lines
    assert "FAIL agents 1 tool(s) no agent owns: gamma (test-agents)" in shown
    core = ", ".join(sorted(CORE_TOOLS))
    assert f"info agents {len(CORE_TOOLS)} of the core's own tool(s) no agent owns: {core}" in (
        shown
    )
    # The fix is named: declare the owner, claim the prefix, or change the rule.
    assert "Tool(owner='<agent>')" in shown
    assert '[agents] unmatched_tools = "default"' in shown
