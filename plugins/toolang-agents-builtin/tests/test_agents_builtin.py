"""The built-in roles: their scopes, their place in the registry, routing to them."""

from __future__ import annotations

import asyncio
import json

import pytest

import toolang_agents_builtin
from toolang_agents_builtin.roles import AGENT_RUN_TOOLS, TASK_RUN_TOOLS
from toolang_core import AgentDefinition, Tool, hookimpl
from toolang_core.testing.agents import AgentsPlugin

TEAM_TOOLS = ("team_form", "team_delegate", "team_status", "team_disband")
"""toolang-teams' tools (registered here by name, as that plugin would)."""

ROLE_SCOPES = {
    "operator": ("exec_*", "fs_*", "skill_*"),
    "navigator": ("browser_*",),
    "vault": ("crypto_*", "secrets_*", "payment_*"),
    "librarian": (
        "search_*", "rag_*", "graph_*", "web_*", "save_knowledge*", "save_learning*",
        "learning_*", "create_skill*", "list_skills*", "import_skill*", "librarian_*",
    ),
    "automator": (
        "cron_*", "bg_*", "workflow_*", "task_*", "start_task_run*", "list_task_runs*",
        "get_task_run*", "wait_task_run*", "cancel_task_run*", "read_task_run_transcript*",
        "agent_spawn*", "agent_wait*", "agent_stop*", "team_*",
    ),
    "planner": (),
    "chronicler": ("memory_*", "observe_*", "reflect_*"),
    "ontologist": ("ontology_*",),
}  # fmt: skip

ROLE_CAPABILITIES = {
    "operator": ("operations", "shell", "files"),
    "navigator": ("web-browsing", "web-extraction"),
    "vault": ("security", "encryption", "payments"),
    "librarian": ("knowledge", "research", "retrieval"),
    "automator": ("automation", "scheduling", "coordination"),
    "planner": ("planning", "decomposition"),
    "chronicler": ("memory", "recall"),
    "ontologist": ("ontology", "modeling"),
}

SOME_TOOLS = (
    "exec_run", "fs_read", "browser_open", "crypto_sign", "save_knowledge", "web_fetch",
    "cron_add", "observe_turn", "ontology_add_fact",
)  # fmt: skip
"""Besides these and :data:`TEAM_TOOLS`, every host registers the core's delegation
tools (task runs, teammates, ask_agent, transfer_to_agent)."""


def tool(name):
    return Tool(name=name, description=name, parameters={"type": "object"}, function=lambda: "")


class SomeTools:
    @staticmethod
    @hookimpl
    def toolang_register_tools(register):
        for name in (*SOME_TOOLS, *TEAM_TOOLS):
            register(tool(name))


def UserAgents(*definitions):
    return AgentsPlugin(*definitions, name="test-user")


@pytest.fixture
def runtime(toolang_runtime):
    def make(*plugins):
        named = {"agents-builtin": toolang_agents_builtin, "some-tools": SomeTools()}
        named.update({f"extra-{i}": p for i, p in enumerate(plugins)})
        return toolang_runtime("[runtime]\nexecutor = 'agent'\n", plugins=named)

    return make


def test_the_eight_roles_load_with_the_scopes_the_design_lists(runtime):
    registry = runtime().agents.registry
    builtin = {d.name: d for d in registry.active() if d.source == "builtin" and d.prefixes}
    builtin["planner"] = registry.get("planner")
    assert {name: d.prefixes for name, d in builtin.items()} == ROLE_SCOPES
    assert not registry.diagnostics


def test_every_role_has_an_instruction_keywords_and_a_description(runtime):
    for name in ROLE_SCOPES:
        role = runtime().agents.registry.get(name)
        assert role.instruction and role.keywords and role.description, name


def test_every_role_advertises_capabilities_the_pool_selects_team_workers_by(runtime):
    import toolang_agent_pool

    built = runtime(toolang_agent_pool)
    registry = built.agents.registry
    assert {name: registry.get(name).capabilities for name in ROLE_SCOPES} == ROLE_CAPABILITIES
    store = built.open_store()
    try:
        pool = built.agents.pool(store)
        research = pool.select("research", 3)
        web = pool.select("Web-Browsing", 3)
    finally:
        store.close()
    assert [m.name for m in research.chosen] == ["librarian"]
    assert [m.name for m in web.chosen] == ["navigator"]
    assert dict((e.name, e.reason) for e in research.excluded)["navigator"] == (
        "does not advertise 'research'"
    )


def test_planner_and_chronicler_stay_on_the_parent_thread(runtime):
    registry = runtime().agents.registry
    isolated = {name for name in ROLE_SCOPES if registry.get(name).session_isolation}
    assert isolated == set(ROLE_SCOPES) - {"planner", "chronicler"}


def test_each_tool_goes_to_its_role(runtime):
    owners = {t: c.agent for t, c in runtime().agents.assignment.owners.items()}
    assert owners == {
        "exec_run": "operator",
        "fs_read": "operator",
        "browser_open": "navigator",
        "crypto_sign": "vault",
        "save_knowledge": "librarian",
        "web_fetch": "librarian",
        "cron_add": "automator",
        "observe_turn": "chronicler",
        "ontology_add_fact": "ontologist",
        **{name: "automator" for name in (*TASK_RUN_TOOLS, *AGENT_RUN_TOOLS, *TEAM_TOOLS)},
    }


def test_the_automator_owns_the_core_task_run_and_teammate_tools(runtime):
    catalog = runtime().agents
    scope = catalog.scope(catalog.agent("automator"))
    assert {*TASK_RUN_TOOLS, *AGENT_RUN_TOOLS, *TEAM_TOOLS} <= scope
    # The router's hand-over tools are the embedded assistant's, not a role's.
    assert {"ask_agent", "transfer_to_agent"} <= set(catalog.assignment.unmatched)


def test_the_planner_has_no_tools(runtime):
    catalog = runtime().agents
    assert catalog.scope(catalog.agent("planner")) == frozenset()


def test_a_user_agent_cannot_take_a_built_in_name(runtime):
    impostor = AgentDefinition(name="operator", prefixes=("exec_",), origin="/x/operator/AGENT.md")
    registry = runtime(UserAgents(impostor)).agents.registry
    assert registry.get("operator").source == "builtin"
    (problem,) = registry.errors
    assert str(problem).startswith("/x/operator/AGENT.md: agent name 'operator' is reserved")


def test_a_user_agent_with_the_same_prefix_does_not_take_a_roles_tools(runtime):
    shell = AgentDefinition(name="aaa-shell", prefixes=("exec_*",))
    catalog = runtime(UserAgents(shell)).agents
    assert catalog.assignment.owners["exec_run"].agent == "operator"


@pytest.mark.parametrize(
    ("request_text", "agent"),
    [
        ("please break down the migration into steps", "planner"),
        ("run the test command in a shell", "operator"),
        ("schedule a recurring backup every night", "automator"),
        ("do you remember what we said about it", "chronicler"),
        ("I need some research on caching", "librarian"),
    ],
)
def test_requests_are_routed_to_the_role_whose_keywords_they_use(runtime, request_text, agent):
    proposal = asyncio.run(runtime().agents.route(request_text, router="assistant"))
    assert proposal.agent == agent
    assert proposal.router == "route-keywords"


def test_a_greeting_is_routed_nowhere(runtime):
    assert asyncio.run(runtime().agents.route("hello there!", router="assistant")) is None


def test_agents_list_shows_the_roles(toolang_cli):
    result = toolang_cli("agents", "list", "--json")
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    for name in ROLE_SCOPES:
        assert (rows[name]["source"], rows[name]["status"]) == ("builtin", "active")
        assert rows[name]["origin"] == "toolang-agents-builtin"


def test_roles_with_no_installed_tool_are_idle_and_the_planner_is_kept(toolang_runtime):
    """Lango: sub-agents with no matching tools are skipped, except the planner."""
    catalog = toolang_runtime(
        "[runtime]\nexecutor = 'agent'\n", plugins={"agents-builtin": toolang_agents_builtin}
    ).agents
    idle = {d.name for d in catalog.registry.active() if catalog.idle_reason(d) is not None}
    assert {"navigator", "vault", "ontologist"} <= idle
    assert "planner" not in idle and "automator" not in idle  # no scope; the core's tools
    offered = {d.name for d in catalog.candidates("assistant")}
    assert "planner" in offered and not offered & idle
    proposal = asyncio.run(catalog.route("please encrypt this secret password", "assistant"))
    assert proposal is None or proposal.agent != "vault"


def test_agents_list_marks_an_idle_role_and_says_why(toolang_cli):
    env = {"TOOLANG_LOAD_PLUGINS": "agents-builtin"}
    listed = toolang_cli("agents", "list", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert rows["vault"]["status"] == "active"
    assert rows["vault"]["idle"].startswith(
        "no installed tool falls in its tool scope (crypto_*, secrets_*, payment_*)"
    )
    assert rows["planner"]["idle"] is None
    text = toolang_cli("agents", "list", env=env).stdout
    assert "vault: idle, not offered to routing or delegation: no installed tool" in text
    assert "planner: idle" not in text
