"""Tool partitioning and spawn-time narrowing."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from toolang_core.agents.partition import (
    PatternError,
    ToolScopeError,
    assign_tools,
    narrow_tools,
    normalise_pattern,
)
from toolang_core.agents.types import AgentDefinition


def agent(name, *prefixes, source="user", **kw):
    return AgentDefinition(name=name, prefixes=prefixes, source=source, **kw)


def owners(tools, *agents):
    return {t: c.agent for t, c in assign_tools(tools, agents).owners.items()}


@pytest.mark.parametrize(("pattern", "prefix"), [("fs_*", "fs_"), ("fs_", "fs_"), ("*", "")])
def test_globs_and_bare_prefixes_are_the_same_pattern(pattern, prefix):
    assert normalise_pattern(pattern) == prefix


@pytest.mark.parametrize("pattern", ["", "f*s", "fs_?", "fs_[ab]", "fs read", "**"])
def test_other_patterns_are_refused(pattern):
    with pytest.raises(PatternError, match="must be a tool name or prefix"):
        normalise_pattern(pattern)


def test_the_longest_matching_prefix_wins():
    assert owners(["fs_read", "fs_write"], agent("files", "fs_"), agent("reader", "fs_read")) == {
        "fs_read": "reader",
        "fs_write": "files",
    }


def test_a_tie_goes_to_the_higher_priority_source():
    assert owners(
        ["exec_run"], agent("aaa", "exec_", source="user"), agent("zzz", "exec_", source="builtin")
    ) == {"exec_run": "zzz"}


def test_a_tie_within_one_source_goes_to_the_name_that_sorts_first():
    assert owners(["exec_run"], agent("beta", "exec_"), agent("alpha", "exec_*")) == {
        "exec_run": "alpha"
    }


def test_disabled_agents_claim_nothing():
    assert owners(["exec_run"], agent("off", "exec_", status="disabled")) == {}


def test_a_prefix_is_a_prefix_not_a_word():
    # Documented: `exec` also matches `execute_plan`; write `exec_` to mean the family.
    assert owners(["execute_plan"], agent("ops", "exec")) == {"execute_plan": "ops"}


def test_tools_no_prefix_covers_are_unmatched():
    assignment = assign_tools(["fs_read", "zz_other"], [agent("files", "fs_")])
    assert assignment.unmatched == ("zz_other",)


def test_a_grant_adds_to_scope_without_taking_ownership_or_matching():
    assignment = assign_tools(
        ["fs_read", "zz_other"],
        [agent("files", "fs_"), agent("reviewer", tools=("fs_read",)), agent("all", tools=("*",))],
    )
    assert assignment.owners["fs_read"].agent == "files"
    assert assignment.scope("reviewer") == {"fs_read"}
    assert assignment.scope("all") == {"fs_read", "zz_other"}
    assert assignment.unmatched == ("zz_other",)
    assert assignment.granted["fs_read"] == ("all", "reviewer")


def test_an_agent_without_prefixes_or_grants_has_no_tools():
    assert assign_tools(["fs_read"], [agent("planner")]).scope("planner") == frozenset()


agents_strategy = st.lists(
    st.builds(
        agent,
        st.sampled_from(["a", "b", "c", "d"]),
        st.sampled_from(["f", "fs", "fs_", "fs_r", "x"]),
        source=st.sampled_from(["builtin", "embedded", "user", "remote"]),
    ),
    max_size=6,
    unique_by=lambda a: a.name,
)
tools_strategy = st.lists(st.sampled_from(["fs_read", "fs_write", "xray", "other"]), unique=True)


@given(agents_strategy, tools_strategy, st.randoms())
def test_the_assignment_does_not_depend_on_the_order_of_agents_or_tools(agents, tools, rnd):
    shuffled_agents, shuffled_tools = list(agents), list(tools)
    rnd.shuffle(shuffled_agents)
    rnd.shuffle(shuffled_tools)
    assert assign_tools(tools, agents) == assign_tools(shuffled_tools, shuffled_agents)


@given(agents_strategy, tools_strategy)
def test_every_tool_is_owned_once_or_unmatched(agents, tools):
    assignment = assign_tools(tools, agents)
    assert sorted([*assignment.owners, *assignment.unmatched]) == sorted(tools)
    for tool, claim in assignment.owners.items():
        assert tool in assignment.scope(claim.agent)


def test_allowed_tools_narrow_to_the_intersection():
    assert narrow_tools({"fs_read", "fs_write", "exec_run"}, ["fs_*"], agent="op") == {
        "fs_read",
        "fs_write",
    }
    assert narrow_tools({"fs_read", "exec_run"}, ["exec_run"], agent="op") == {"exec_run"}


def test_no_allowed_tools_keeps_the_whole_scope():
    assert narrow_tools({"fs_read"}, None, agent="op") == {"fs_read"}


def test_allowed_tools_can_never_widen_the_scope():
    with pytest.raises(ToolScopeError) as raised:
        narrow_tools({"fs_read"}, ["fs_read", "exec_run", "browser_*"], agent="op")
    assert str(raised.value) == (
        "allowed_tools asks for 'exec_run', 'browser_*' outside agent 'op''s scope (fs_read); "
        "allowed_tools can only narrow an agent's scope"
    )


def test_an_exact_name_in_allowed_tools_is_not_a_prefix():
    with pytest.raises(ToolScopeError):
        narrow_tools({"fs_read_all"}, ["fs_read"], agent="op")


def test_a_tool_no_prefix_claims_goes_to_the_owner_its_plugin_declared():
    assignment = assign_tools(
        ["weather_lookup", "fs_read"],
        [agent("files", "fs_"), agent("forecaster")],
        declared={"weather_lookup": "forecaster"},
    )
    assert {t: (c.agent, c.via) for t, c in assignment.owners.items()} == {
        "fs_read": ("files", "prefix"),
        "weather_lookup": ("forecaster", "owner"),
    }
    assert assignment.unmatched == ()
    assert assignment.scope("forecaster") == {"weather_lookup"}


def test_a_prefix_claim_beats_the_declared_owner():
    assignment = assign_tools(
        ["weather_lookup"],
        [agent("forecaster"), agent("meteo", "weather_")],
        declared={"weather_lookup": "forecaster"},
    )
    assert assignment.owners["weather_lookup"].agent == "meteo"


def test_a_declared_owner_that_is_not_active_is_ignored():
    assignment = assign_tools(
        ["weather_lookup"],
        [agent("forecaster", status="disabled")],
        declared={"weather_lookup": "forecaster"},
    )
    assert assignment.unmatched == ("weather_lookup",)


def test_the_fallback_agent_owns_what_nothing_else_claims():
    assignment = assign_tools(
        ["fs_read", "weather_lookup", "gamma"],
        [agent("files", "fs_"), agent("assistant"), agent("forecaster")],
        declared={"weather_lookup": "forecaster"},
        fallback="assistant",
    )
    claims = {t: (c.agent, c.pattern) for t, c in assignment.owners.items()}
    assert claims == {
        "fs_read": ("files", "fs_*"),
        "weather_lookup": ("forecaster", "owner="),
        "gamma": ("assistant", "unmatched_tools"),
    }
    assert assignment.unmatched == ()
