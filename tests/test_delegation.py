"""Agent-as-tool (ask_agent) and transfer_to_agent inside one turn, under the
delegation-round limit enforced in code (Lango's was only prompt text)."""

from __future__ import annotations

import attrs
from taskrun_helpers import DEFAULT_AGENTS, make_runtime, with_delegation
from test_taskrun_tools import outputs, results, run_turn

from toolang_core import AgentDefinition, ToolCall, TurnStatus, hookimpl
from toolang_core.config.model import AgentsConfig
from toolang_core.models.types import ModelResponse
from toolang_core.testing.cast import Cast
from toolang_core.testing.models import error, text, tool_call

ASK = {"agent": "researcher", "request": "what moves the tides?"}
RESEARCH = [
    tool_call("lookup_fact", {"topic": "tides"}, call_id="r1"),
    text("the moon does"),
]


RESEARCH_WITH_A_NOTE = [
    ModelResponse(text="let me look", tool_calls=(ToolCall("r1", "lookup_fact", {"topic": "t"}),)),
    text("the moon does"),
]


def test_ask_agent_returns_every_assistant_message_by_default(tmp_path):
    """tRPC agenttool ResponseModeDefault: the non-empty assistant messages of the
    child, joined."""
    cast = Cast(
        assistant=[tool_call("ask_agent", ASK), text("asked")],
        researcher=RESEARCH_WITH_A_NOTE,
    )
    turn = run_turn(make_runtime(tmp_path, cast))
    (answer,) = outputs(cast)
    assert turn.status is TurnStatus.COMPLETED
    assert answer == "let me look\n\nthe moon does"


def test_ask_agent_final_only_returns_the_last_message(tmp_path):
    """tRPC agenttool ResponseModeFinalOnly: only the last complete assistant message."""
    cast = Cast(
        assistant=[tool_call("ask_agent", {**ASK, "response_mode": "final_only"}), text("ok")],
        researcher=RESEARCH_WITH_A_NOTE,
    )
    run_turn(make_runtime(tmp_path, cast))
    assert outputs(cast) == ["the moon does"]


def test_the_default_response_mode_is_configured(tmp_path):
    cast = Cast(
        assistant=[tool_call("ask_agent", ASK), text("ok")],
        researcher=RESEARCH_WITH_A_NOTE,
    )
    runtime = make_runtime(
        tmp_path, cast, delegation=with_delegation(agent_tool_response="final_only")
    )
    run_turn(runtime)
    assert outputs(cast) == ["the moon does"]


def test_the_asked_agent_sees_only_the_request_with_its_own_instruction_and_tools(tmp_path):
    """The specialist runs in the turn but not in its conversation: none of the
    thread's history, its own instruction and its own tool scope."""
    cast = Cast(
        assistant=[text("hello"), tool_call("ask_agent", ASK), text("asked")],
        researcher=RESEARCH,
    )
    runtime = make_runtime(tmp_path, cast)
    run_turn(runtime, "earlier question")
    cast.scripts["assistant"] = [tool_call("ask_agent", ASK), text("asked")]
    run_turn(runtime, "now ask")
    first = cast.requests_of("researcher")[0]
    assert [m.role for m in first.messages] == ["system", "user"]
    assert first.messages[1].content == "what moves the tides?"
    assert "- agent: researcher" in first.messages[0].content
    assert "Agent 'assistant' asks you this" in first.messages[0].content
    assert [spec.name for spec in first.tools] == ["lookup_fact", "lookup_source"]


class Watch:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str, int]] = []

    @hookimpl
    def toolang_filter_tool_call(self, call, ctx):
        self.seen.append((call.name, ctx.agent, ctx.spawn_depth))


def test_the_asked_agents_calls_pass_the_chain_one_level_deeper_and_are_steps_of_the_turn(
    tmp_path,
):
    """Every delegated call passes the chain (here: the filter sees it as the
    researcher's, at spawn depth 1); its model and tool calls are steps of the same
    turn under their own idempotency keys, so a resumed turn replays them."""
    watch = Watch()
    cast = Cast(
        assistant=[tool_call("ask_agent", ASK, call_id="a1"), text("ok")], researcher=RESEARCH
    )
    runtime = make_runtime(tmp_path, cast, plugins=[("watch", watch)])
    turn = run_turn(runtime)
    assert watch.seen == [("ask_agent", "assistant", 0), ("lookup_fact", "researcher", 1)]
    store = runtime.open_store()
    keys = [s.idempotency_key for s in store.steps(turn.id) if s.idempotency_key]
    store.close()
    assert keys == [
        f"{turn.id}:model:0",
        f"{turn.id}:tool:a1",  # its intent comes first: the asked agent works inside it
        f"{turn.id}:ask:a1:model:0",
        f"{turn.id}:ask:a1:tool:a1/r1",
        f"{turn.id}:ask:a1:model:1",
        f"{turn.id}:model:1",
    ]


def test_an_asked_agent_that_fails_is_a_tool_error(tmp_path):
    """tRPC agenttool: a child error becomes the tool error "agent error: <msg>"."""
    cast = Cast(
        assistant=[tool_call("ask_agent", ASK), text("it failed")],
        researcher=[error("quota exceeded")],
    )
    turn = run_turn(make_runtime(tmp_path, cast))
    (failed,) = outputs(cast)
    assert turn.status is TurnStatus.COMPLETED
    assert failed.startswith("DelegationError: agent error: model 'scripted' failed:")
    assert "quota exceeded" in failed


def test_asking_an_unknown_agent_or_oneself_is_an_error(tmp_path):
    cast = Cast(
        assistant=[
            tool_call("ask_agent", {"agent": "ghost", "request": "x"}),
            tool_call("ask_agent", {"agent": "assistant", "request": "x"}),
            text("no"),
        ]
    )
    run_turn(make_runtime(tmp_path, cast))
    unknown, itself = outputs(cast)
    assert unknown.startswith("DelegationError: agent 'ghost' is unknown (agents: ")
    assert itself == "DelegationError: agent 'assistant' cannot ask itself"


def test_asking_deeper_than_the_spawn_depth_limit_is_refused(tmp_path):
    """Depth is enforced in code: with max_spawn_depth 1 the asked agent may not ask."""
    asker = AgentDefinition(name="researcher", prefixes=("lookup_",), tools=("ask_agent",))
    cast = Cast(
        assistant=[tool_call("ask_agent", ASK), text("ok")],
        researcher=[
            tool_call("ask_agent", {"agent": "writer", "request": "x"}),
            lambda r: text(f"inner: {results(cast, 'researcher')[-1]['error']}"),
        ],
    )
    runtime = make_runtime(
        tmp_path,
        cast,
        agents=[DEFAULT_AGENTS[0], asker, *DEFAULT_AGENTS[2:]],
        delegation=with_delegation(max_spawn_depth=1),
    )
    run_turn(runtime)
    (answer,) = outputs(cast)
    assert answer == (
        "inner: DelegationError: ask_agent: spawn depth limit reached "
        "([delegation] max_spawn_depth = 1)"
    )


def test_transfer_hands_the_rest_of_the_turn_to_another_agent(tmp_path):
    """transfer_to_agent: the target continues the same turn with its instruction and
    tools; its answer is the turn's; the events stay in the turn (a transfer step)."""
    writer = AgentDefinition(name="writer", prefixes=("draft_",), instruction="You are the writer.")
    cast = Cast(
        assistant=[
            tool_call("transfer_to_agent", {"agent_name": "writer", "message": "draft a poem"}),
        ],
        writer=lambda r: (
            tool_call("draft_text", {"text": "poem"})
            if r.messages[-1].name == "transfer_to_agent"
            else text("here is your poem")
        ),
    )
    runtime = make_runtime(tmp_path, cast, agents=[DEFAULT_AGENTS[0], DEFAULT_AGENTS[1], writer])
    turn = run_turn(runtime, "write me a poem")
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "here is your poem")
    handoff, drafted = results(cast, "writer")  # the writer reads the transfer's result
    assert drafted == {"ok": True, "output": "draft: poem"}
    assert handoff["output"] == {
        "success": True,
        "message": "draft a poem",
        "target_agent": "writer",
        "transfer_type": "agent_handoff",
    }
    after = cast.requests_of("writer")[0]
    assert after.messages[0].content.startswith("You are the writer.")
    assert "transferred this turn to you" in after.messages[0].content
    assert [spec.name for spec in after.tools] == ["draft_text"]
    assert after.messages[1].content == "write me a poem"  # the same conversation goes on
    store = runtime.open_store()
    steps = store.steps(turn.id)
    (moved,) = [s for s in steps if s.kind == "transfer"]
    assert (moved.data["from"], moved.data["to"]) == ("assistant", "writer")
    assert store.get_record("toolang.prompt_trace", turn.id).data["answered_by"] == "writer"
    assert len(store.list_turns()) == 1  # no other turn: the same one went on
    store.close()


def test_a_transfer_to_an_unknown_agent_is_an_error_result_and_the_turn_goes_on(tmp_path):
    """tRPC transfer_to_agent never errors: an unknown agent gives success false,
    transfer_type "error" and a message listing the agents."""
    cast = Cast(assistant=[tool_call("transfer_to_agent", {"agent_name": "ghost"}), text("I stay")])
    turn = run_turn(make_runtime(tmp_path, cast))
    (refused,) = outputs(cast)
    assert (refused["success"], refused["transfer_type"]) == (False, "error")
    assert refused["message"].startswith("agent 'ghost' is unknown (agents: ")
    assert turn.output == "I stay"


class Audit:
    def __init__(self) -> None:
        self.refusals: list[tuple[str, str, str]] = []

    @hookimpl
    def toolang_observe_tool_result(self, call, result, ctx):
        if result.refusal is not None:
            self.refusals.append((call.name, result.refusal.stage, result.refusal.verdict))


def test_delegation_rounds_are_limited_in_code(tmp_path):
    """[agents] max_delegation_rounds: the call past the limit is refused before the
    chain runs (error_type limit), audited like the chain's refusals, and the turn goes
    on."""
    asks = [tool_call("ask_agent", {**ASK, "request": f"q{n}"}) for n in range(3)]
    cast = Cast(assistant=[*asks, text("done")], researcher=lambda r: text("a"))
    audit = Audit()
    turn = run_turn(
        make_runtime(
            tmp_path,
            cast,
            agents_config=AgentsConfig(max_delegation_rounds=2),
            plugins=[("audit", audit)],
        )
    )
    first, second, third = results(cast)
    assert (first["ok"], second["ok"], turn.output) == (True, True, "done")
    assert third["error_type"] == "limit"
    assert third["error"].startswith("delegation round limit reached: this turn already used 2")
    assert len(cast.requests_of("researcher")) == 2
    assert audit.refusals == [("ask_agent", "limit", "refused")]


def test_an_agents_own_delegation_limit_overrides_the_configured_one(tmp_path):
    router = attrs.evolve(DEFAULT_AGENTS[0], max_delegation_rounds=0)
    cast = Cast(
        assistant=[tool_call("transfer_to_agent", {"agent_name": "writer"}), text("I stayed")]
    )
    turn = run_turn(make_runtime(tmp_path, cast, agents=[router, *DEFAULT_AGENTS[1:]]))
    (refused,) = results(cast)
    assert (refused["error_type"], turn.output) == ("limit", "I stayed")
