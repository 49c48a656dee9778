"""The embedded defaults: bundled AGENT.md files, overridable, the default router."""

from __future__ import annotations

import asyncio
import json

import pytest

import toolang_agents_embedded
from toolang_core import AgentDefinition, NewTurnRequest, Tool, hookimpl
from toolang_core.testing.agents import AgentsPlugin
from toolang_core.testing.cast import DELEGATION_TOOLS
from toolang_core.testing.models import ScriptedModel, text
from toolang_core.testing.runtimes import SCRIPTED_AGENT_CONFIG


class SomeTools:
    @staticmethod
    @hookimpl
    def toolang_register_tools(register):
        for name in ("fs_read", "fs_list", "zz_unclaimed"):
            register(
                Tool(
                    name=name, description=name, parameters={"type": "object"}, function=lambda: ""
                )
            )


def UserAgents(*definitions):
    return AgentsPlugin(*definitions, name="test-user")


CONFIG = SCRIPTED_AGENT_CONFIG


@pytest.fixture
def runtime(toolang_runtime):
    def make(*plugins, model=None):
        named = {"agents-embedded": toolang_agents_embedded, "some-tools": SomeTools()}
        if model is not None:
            named["scripted"] = model.plugin()
        named.update({f"extra-{i}": p for i, p in enumerate(plugins)})
        return toolang_runtime(CONFIG, plugins=named)

    return make


def test_the_bundled_agents_load_without_a_problem(runtime):
    registry = runtime().agents.registry
    embedded = [d for d in registry.all() if d.source == "embedded"]
    assert [d.name for d in embedded] == ["assistant", "reviewer"]
    assert all(d.instruction and d.origin.endswith("/AGENT.md") for d in embedded)
    assert registry.diagnostics == ()


def test_the_assistant_is_the_default_agent_not_a_fallback(runtime):
    catalog = runtime().agents
    assert catalog.agent(None).source == "embedded"
    assert catalog.registry.fallback is None


DELEGATION = set(DELEGATION_TOOLS)


def test_the_assistant_routes_with_the_delegation_tools_and_no_specialist_tool(runtime):
    catalog = runtime().agents
    assert catalog.scope(catalog.agent("assistant")) == DELEGATION | {"ask_person"}
    assert catalog.assignment.owned_by("assistant") == (
        "ask_agent",
        "ask_person",
        "transfer_to_agent",
    )
    assert "zz_unclaimed" in catalog.assignment.unmatched


def test_the_reviewer_is_granted_read_only_file_tools(runtime):
    catalog = runtime().agents
    assert catalog.scope(catalog.agent("reviewer")) == {"fs_read", "fs_list"}


def test_a_user_definition_replaces_the_embedded_one(runtime):
    mine = AgentDefinition(name="reviewer", instruction="Mine.", origin="/a/reviewer/AGENT.md")
    registry = runtime(UserAgents(mine)).agents.registry
    assert (registry.get("reviewer").source, registry.get("reviewer").instruction) == (
        "user",
        "Mine.",
    )
    (note,) = registry.diagnostics
    assert note.level == "info"
    assert "replaces the embedded default" in note.message


def run_turn(runtime, text_in):
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="chat:t", input=text_in)).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    try:
        return inbox.get(turn_id), inbox.store.steps(turn_id)
    finally:
        inbox.store.close()


def test_the_router_answers_a_simple_message_itself(runtime):
    model = ScriptedModel([text("Hello!")])
    turn, steps = run_turn(runtime(model=model), "hello")
    assert (turn.output, steps[0].data["agent"], steps[0].data["route"]) == (
        "Hello!",
        "assistant",
        None,
    )


def test_the_router_is_told_which_agent_fits_a_specialist_request(runtime):
    model = ScriptedModel([text("The reviewer should look at it.")])
    _, steps = run_turn(runtime(model=model), "please do a code review of main.py")
    route = steps[0].data["route"]
    assert (route["agent"], route["router"]) == ("reviewer", "route-keywords")
    system = model.calls[0].messages[0].content
    assert "Routing: this request fits agent 'reviewer'" in system


def test_agents_list_shows_the_embedded_defaults(toolang_cli):
    result = toolang_cli("agents", "list", "--json")
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row["source"] for row in json.loads(result.stdout)}
    assert rows["assistant"] == rows["reviewer"] == "embedded"
