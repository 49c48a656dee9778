"""Agents with nothing to act with are not offered to routing or delegation (Lango:
"Sub-agents with no matching tools are skipped (not created), except for the planner
which is always included").

An agent that declares a tool scope (``prefixes`` or ``tools``) in which no installed
tool falls is *idle*; one that declares no scope at all reasons only (the planner) and
is always offered.
"""

from __future__ import annotations

from toolang_core import AgentDefinition, Tool, TurnStatus, hookimpl
from toolang_core.testing.cast import Cast
from toolang_core.testing.delegation import ROUTER, make_runtime, results, run_turn
from toolang_core.testing.models import text, tool_call

VAULT = AgentDefinition(
    name="vault",
    prefixes=("crypto_*", "secrets_*"),
    keywords=("encrypt", "secret", "password"),
    description="encryption and secrets",
)
PLANNER = AgentDefinition(name="planner", keywords=("plan", "steps"), description="plans")
AGENTS = (ROUTER, VAULT, PLANNER)
SECRET = "please encrypt this secret password"


def crypto_hash(text: str) -> str:
    """Hash a text.

    :param text: what to hash
    """
    return "hashed"


class CryptoTools:
    @staticmethod
    @hookimpl
    def toolang_register_tools(register):
        register(Tool.from_function(crypto_hash, blocking=False))


def system_prompt(cast: Cast, agent: str = "assistant") -> str:
    return cast.requests_of(agent)[0].messages[0].content


def test_a_role_with_no_installed_tool_is_not_routed_to_nor_asked(tmp_path):
    cast = Cast(
        assistant=[
            tool_call("ask_agent", {"agent": "vault", "request": SECRET}),
            text("I cannot encrypt here"),
        ]
    )
    runtime = make_runtime(tmp_path, cast, agents=AGENTS)
    turn = run_turn(runtime, SECRET)
    assert turn.status is TurnStatus.COMPLETED
    assert "Routing:" not in system_prompt(cast)  # vault matched 3 keywords, not proposed
    (refused,) = results(cast)
    assert "agent 'vault' has nothing to act with" in refused["error"]
    assert "crypto_*, secrets_*" in refused["error"]
    assert cast.requests_of("vault") == []  # its model was never called
    assert runtime.agents.idle_reason(VAULT) is not None


def test_the_same_role_is_routed_to_once_a_tool_falls_in_its_scope(tmp_path):
    cast = Cast(
        assistant=[tool_call("ask_agent", {"agent": "vault", "request": SECRET}), text("done")],
        vault=[text("encrypted")],
    )
    runtime = make_runtime(tmp_path, cast, agents=AGENTS, plugins=[("crypto", CryptoTools())])
    run_turn(runtime, SECRET)
    assert "this request fits agent 'vault'" in system_prompt(cast)
    (asked,) = results(cast)
    assert asked == {"ok": True, "output": "encrypted"}
    assert [r.messages[-1].content for r in cast.requests_of("vault")] == [SECRET]


def test_a_reasoning_agent_without_any_tool_scope_is_always_offered(tmp_path):
    cast = Cast(assistant=[text("planning")])
    runtime = make_runtime(tmp_path, cast, agents=AGENTS)
    run_turn(runtime, "make a plan in steps")
    assert "this request fits agent 'planner'" in system_prompt(cast)
    assert [a.name for a in runtime.agents.candidates("assistant")] == ["planner"]


def test_transfer_and_task_runs_refuse_an_idle_agent_naming_why(tmp_path):
    cast = Cast(
        assistant=[
            tool_call("transfer_to_agent", {"agent_name": "vault"}, call_id="t1"),
            tool_call("start_task_run", {"task": SECRET, "agent_name": "vault"}, call_id="s1"),
            tool_call("agent_spawn", {"instruction": SECRET, "agent": "vault"}, call_id="a1"),
            text("none of them can"),
        ]
    )
    runtime = make_runtime(tmp_path, cast, agents=AGENTS)
    turn = run_turn(runtime, "hand it over")
    assert turn.status is TurnStatus.COMPLETED
    transfer, start, spawn = results(cast)
    assert transfer["output"]["success"] is False
    assert "agent 'vault' has nothing to act with" in transfer["output"]["message"]
    for refused in (start, spawn):
        assert "agent 'vault' has nothing to act with" in refused["error"], refused
    assert cast.requests_of("vault") == []
