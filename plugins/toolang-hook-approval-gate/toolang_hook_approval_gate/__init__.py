"""toolang-hook-approval-gate: tool calls that need a person's approval wait for one.

The ApprovalGate stage of the tool-call chain. The policy (``[plugins.hook-approval-gate]``)
says which tools need approval; such a call parks its turn in ``awaiting_approval``
with a durable request until someone decides — ``toolang approvals approve|deny ID``
from any process, or the prompt of ``toolang chat -i``. A call a SecurityFilter rule
sent to approval (``AskApproval``) is asked about whatever the policy says.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolang_core import hookimpl
from toolang_hook_approval_gate.policy import (
    NAME,
    ApprovalGateSettings,
    asked_verdict,
    verdict_for,
)

if TYPE_CHECKING:
    import click

    from toolang_core import Denied, Granted, Pending, RegisterSettings, ToolCall, ToolCallContext

__all__ = ["NAME", "ApprovalGateSettings"]


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(ApprovalGateSettings)


@hookimpl
def toolang_approve_tool_call(
    call: ToolCall, ctx: ToolCallContext
) -> Granted | Denied | Pending | None:
    if ctx.approvals_asked:  # a security filter rule asked: a person decides, always
        verdict = asked_verdict(ctx.approvals_asked)
    else:
        verdict = verdict_for(ctx.runtime, call.name)
    if verdict.action == "abstain":  # most tools: nothing more to load or ask
        return None
    from toolang_hook_approval_gate.gate import decide

    return decide(call, ctx, verdict)


@hookimpl
def toolang_register_commands(cli: click.Group) -> None:
    from toolang_hook_approval_gate.cli import approvals

    cli.add_command(approvals)
