"""Routing a request to an agent: the keyword router and the toolang_route hook."""

from __future__ import annotations

import asyncio

import pytest

from toolang_core import AgentLoad, RouteProposal, hookimpl
from toolang_core.agents.routing import propose
from toolang_core.agents.types import AgentDefinition


def agent(name, *keywords, source="user", **kw):
    return AgentDefinition(name=name, keywords=keywords, source=source, **kw)


def test_a_multi_word_keyword_matches_only_its_words_in_order():
    planner = agent("planner", "break down")
    assert propose("please break down the plan", [planner]).agent == "planner"
    assert propose("the plan is down, break it", [planner]) is None


def test_a_multi_word_keyword_outweighs_single_words():
    agents = [agent("a", "break"), agent("b", "break down")]
    proposal = propose("break down this task", agents)
    assert (proposal.agent, proposal.score) == ("b", 2.0)


def test_case_and_plurals_do_not_matter():
    assert propose("Read these FILES", [agent("ops", "file")]).agent == "ops"


def test_capabilities_match_like_keywords():
    reviewer = AgentDefinition(name="reviewer", capabilities=("code-review",))
    proposal = propose("I need a code review", [reviewer])
    assert (proposal.agent, proposal.reason) == ("reviewer", "matched 'code-review'")


def test_a_tie_goes_to_the_higher_priority_source_then_the_name():
    agents = [agent("zed", "deploy", source="builtin"), agent("abe", "deploy", source="user")]
    assert propose("deploy it", agents).agent == "zed"
    assert propose("deploy it", [agent("b", "deploy"), agent("a", "deploy")]).agent == "a"


def test_no_match_is_no_proposal():
    assert propose("hello!", [agent("ops", "shell")]) is None


class Agents:
    @staticmethod
    @hookimpl
    def toolang_agent_sources():
        class Source:
            label = "user"
            name = "test"

            def load(self, context):
                return AgentLoad(
                    definitions=(
                        agent("assistant"),
                        agent("shell", "shell"),
                        agent("billing", "invoice"),
                    )
                )

        return Source()


class Confident:
    @staticmethod
    @hookimpl
    def toolang_route(request, agents):
        return RouteProposal("billing", 99.0, "always billing")


class Broken:
    @staticmethod
    @hookimpl
    def toolang_route(request, agents):
        raise RuntimeError("router down")


class Stranger:
    @staticmethod
    @hookimpl
    def toolang_route(request, agents):
        return RouteProposal("nobody", 1000.0)


@pytest.fixture
def route(toolang_runtime):
    def run(text, **plugins):
        runtime = toolang_runtime(plugins={"agents": Agents(), **plugins})
        return asyncio.run(runtime.agents.route(text, router="assistant"))

    return run


def test_the_built_in_router_proposes_by_keywords(route):
    proposal = route("open a shell please")
    assert (proposal.agent, proposal.router) == ("shell", "route-keywords")


def test_the_highest_score_wins_across_routers(route):
    assert route("open a shell please", confident=Confident()).router == "confident"


def test_a_router_that_raises_is_skipped(route):
    assert route("open a shell please", broken=Broken()).agent == "shell"


def test_a_proposal_for_an_agent_that_is_not_a_candidate_is_ignored(route):
    assert route("open a shell please", stranger=Stranger()).agent == "shell"


def test_the_router_itself_is_never_proposed(toolang_runtime):
    runtime = toolang_runtime(plugins={"agents": Agents()})
    assert "assistant" not in {a.name for a in runtime.agents.candidates("assistant")}


def test_the_candidates_follow_the_router_asking_and_a_reload(toolang_runtime):
    catalog = toolang_runtime(plugins={"agents": Agents()}).agents

    def names(router):
        return [a.name for a in catalog.candidates(router)]

    assert names("assistant") == ["billing", "shell"]
    assert names("shell") == ["assistant", "billing"]
    assert names("assistant") == ["billing", "shell"]
    before = catalog.candidates("assistant")
    catalog.reload()  # a new registry: its candidates are worked out again
    assert catalog.candidates("assistant") is not before
    assert names("assistant") == ["billing", "shell"]


def reference_propose(request, agents):
    """Routing as specified: every agent scored on its own (what the index must equal)."""
    from toolang_core.agents.routing import score

    scored = []
    for a in agents:
        points, matched = score(request, a)
        if points:
            scored.append((-points, a.priority, a.name, matched))
    if not scored:
        return None
    points, _, name, matched = min(scored)
    return RouteProposal(name, float(-points), f"matched {', '.join(map(repr, matched))}")


VOCABULARY = ["file", "files", "box", "boxes", "bus", "buses", "break", "down", "code", "review",
              "plan", "s", "es", "deploy", "the", "a"]  # fmt: skip


def test_the_phrase_index_routes_exactly_as_scoring_every_agent():
    from hypothesis import given, settings, strategies as st

    phrase = st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=3).map(" ".join)
    definition = st.builds(
        AgentDefinition,
        name=st.sampled_from(["a", "b", "c", "d"]),
        keywords=st.lists(phrase, max_size=4).map(tuple),
        capabilities=st.lists(phrase, max_size=2).map(tuple),
        source=st.sampled_from(["user", "embedded", "remote"]),
    )
    request = st.lists(st.sampled_from([*VOCABULARY, "Files", "BOX,"]), max_size=12).map(" ".join)

    @settings(max_examples=400, deadline=None)
    @given(st.lists(definition, max_size=5), request)
    def check(agents, text):
        expected = reference_propose(text, agents)
        assert propose(text, agents) == expected
        together = tuple(agents)  # a tuple asked twice: the second finds its index at once
        assert propose(text, together) == expected
        assert propose(text, together) == expected

    check()
