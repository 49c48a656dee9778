"""A SecurityFilter's AskApproval: the gate asks a person whatever its policy says, the
trace names the rule, and without a gate the call does not run (issue #17)."""

from __future__ import annotations

import attrs
from approval_gate_kit import (
    AGENT_CONFIG,
    Tools,
    approve,
    approve_always,
    deny,
    gate_stage,
    make_runtime,
    run_turn,
    tool_message,
    tool_steps,
)

from toolang_core import AskApproval, Tool, ToolCall, ToolCallContext, TurnStatus, hookimpl
from toolang_core.testing.models import text, tool_call

TEARDOWN = {"path": "terraform destroy -auto-approve"}
EVERYDAY = {"path": "notes.txt"}


class AskingFilter:
    """A SecurityFilter with one rule: a path naming ``destroy`` needs a person."""

    @staticmethod
    @hookimpl
    def toolang_filter_tool_call(call: ToolCall, ctx: ToolCallContext) -> AskApproval | None:
        if "destroy" in str(call.params.get("path", "")):
            return AskApproval("this call tears infrastructure down", "cloud-teardown")
        return None


def runtime_with_filter(make, model, tools, settings=""):
    runtime = make_runtime(make, model, tools, settings)
    runtime.host.register(AskingFilter(), "asking-filter")
    return runtime


def test_an_asked_call_waits_for_a_person_even_when_the_policy_allows_the_tool(
    toolang_runtime, toolang_scripted_model
):
    # fs_read is in no list and default = "allow": the gate alone would let it run.
    model = toolang_scripted_model([tool_call("fs_read", TEARDOWN, call_id="c1"), text("done")])
    tools = Tools()
    seen = []

    def look_then_approve(book, approval):
        seen.append(approval)
        approve(book, approval)

    runtime = runtime_with_filter(toolang_runtime, model, tools, 'auto_approve = ["fs_read"]\n')
    turn, steps = run_turn(runtime, look_then_approve)
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "done")
    (asked,) = seen
    assert "cloud-teardown" in asked.prompt
    assert tools.ran == [("fs_read", TEARDOWN)]
    (step,) = tool_steps(steps)
    chain = [(s["stage"], s["verdict"]) for s in step.data["chain"]]
    assert chain == [
        ("SecurityFilter", "ask"),
        ("ApprovalGate", "pending"),
        ("ApprovalGate", "granted"),
        ("execute", "ok"),
    ]
    assert "rule cloud-teardown" in step.data["chain"][0]["detail"]


def test_an_asked_call_a_person_denies_does_not_run(toolang_runtime, toolang_scripted_model):
    model = toolang_scripted_model([tool_call("fs_read", TEARDOWN), text("understood")])
    tools = Tools()
    turn, steps = run_turn(runtime_with_filter(toolang_runtime, model, tools), deny)
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "understood")
    assert tools.ran == []
    assert tool_message(model.calls[1])["error_type"] == "denied"
    assert gate_stage(tool_steps(steps)[0])["verdict"] == "denied"


def test_a_grant_always_for_the_tool_does_not_cover_what_a_rule_asked_about(
    toolang_runtime, toolang_scripted_model
):
    model = toolang_scripted_model(
        [
            tool_call("fs_write", EVERYDAY, call_id="c1"),
            tool_call("fs_write", TEARDOWN, call_id="c2"),
            text("both"),
        ]
    )
    tools = Tools()
    asked = []

    def remember(book, approval):
        asked.append(approval.tool)
        (approve_always if len(asked) == 1 else approve)(book, approval)

    turn, _ = run_turn(runtime_with_filter(toolang_runtime, model, tools), remember)
    assert turn.status is TurnStatus.COMPLETED
    # The first fs_write was granted --always; the second still asked, for its rule.
    assert asked == ["fs_write", "fs_write"]
    assert [name for name, _ in tools.ran] == ["fs_write", "fs_write"]


def test_without_an_approval_gate_an_asked_call_does_not_run(
    toolang_runtime, toolang_scripted_model
):
    model = toolang_scripted_model([tool_call("fs_read", TEARDOWN), text("understood")])
    tools = Tools()
    runtime = toolang_runtime(
        AGENT_CONFIG,
        plugins={"scripted": model.plugin(), "tools": tools, "asking-filter": AskingFilter()},
    )
    turn, steps = run_turn(runtime)
    assert turn.status is TurnStatus.COMPLETED
    assert tools.ran == []
    told = tool_message(model.calls[1])
    assert told["error_type"] == "denied"
    assert "cloud-teardown" in str(told["error"])
    assert ("ApprovalGate", "denied") in [
        (s["stage"], s["verdict"]) for s in tool_steps(steps)[0].data["chain"]
    ]


class DeclaredTools(Tools):
    """``Tools`` whose ``fs_read`` declares that every call needs a person (a tool's own
    :attr:`Tool.asks_approval`, as tools-mcp sets for a destructive MCP tool)."""

    def _tool(self, name: str) -> Tool:
        tool = super()._tool(name)
        if name != "fs_read":
            return tool
        return attrs.evolve(tool, asks_approval=AskApproval("it reads the vault", "vault-read"))


def test_a_tool_that_asks_for_approval_waits_for_a_person_even_when_the_policy_allows_it(
    toolang_runtime, toolang_scripted_model
):
    model = toolang_scripted_model([tool_call("fs_read", EVERYDAY, call_id="c1"), text("done")])
    tools = DeclaredTools()
    seen = []

    def look_then_approve(book, approval):
        seen.append(approval)
        approve(book, approval)

    runtime = make_runtime(toolang_runtime, model, tools, 'auto_approve = ["fs_read"]\n')
    turn, steps = run_turn(runtime, look_then_approve)
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "done")
    (asked,) = seen
    assert "vault-read" in asked.prompt
    assert tools.ran == [("fs_read", EVERYDAY)]
    (step,) = tool_steps(steps)
    chain = [(s["stage"], s["verdict"], s["plugin"]) for s in step.data["chain"]]
    assert chain[0] == ("SecurityFilter", "ask", "tools")
    assert [c[:2] for c in chain[1:]] == [
        ("ApprovalGate", "pending"),
        ("ApprovalGate", "granted"),
        ("execute", "ok"),
    ]


def test_a_tool_that_asks_for_approval_does_not_run_without_a_gate(
    toolang_runtime, toolang_scripted_model
):
    model = toolang_scripted_model(
        [tool_call("fs_read", EVERYDAY), tool_call("fs_write", EVERYDAY), text("understood")]
    )
    tools = DeclaredTools()
    runtime = toolang_runtime(AGENT_CONFIG, plugins={"scripted": model.plugin(), "tools": tools})
    turn, _ = run_turn(runtime)
    assert turn.status is TurnStatus.COMPLETED
    assert tools.ran == [("fs_write", EVERYDAY)]  # the undeclared tool still runs
    told = tool_message(model.calls[1])
    assert told["error_type"] == "denied"
    assert "vault-read" in str(told["error"])
