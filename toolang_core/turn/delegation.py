"""Agent-as-tool and hand-off: ``ask_agent`` and ``transfer_to_agent``.

``ask_agent`` calls a specialist synchronously, like any tool: the agent answers the
request inside the current turn (its own instruction and tools, none of the turn's
history, one spawn level deeper) and the tool returns its answer — every assistant
message, or only the final one. There is no run id; for tracked background work use
``start_task_run``.

``transfer_to_agent`` hands the rest of the current turn to another agent: after the
call the target answers, with its instruction and tools, and every event stays in the
same turn. Both count as delegation rounds (``[agents] max_delegation_rounds``).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, cast

import structlog

from toolang_core.agents.catalog import AgentError
from toolang_core.agents.routing import reroute_hint
from toolang_core.tools.types import ToolCallContext  # the hints make the schema
from toolang_core.turn.running import DelegationError, ResponseMode, SpecialistFailed

if TYPE_CHECKING:
    from toolang_core.runtime_parts import CoreRuntime

log = structlog.get_logger("toolang.delegation")


async def ask_agent(
    agent: str,
    request: str,
    response_mode: str = "",
    context: ToolCallContext | None = None,
) -> str:
    """Ask another agent (a specialist) and wait for its answer, like calling a tool.

    :param agent: the agent to ask, e.g. "reviewer"
    :param request: what to ask, complete and self-contained
    :param response_mode: "all_messages" (every message it wrote) or "final_only" (its
        last one); default: [delegation] agent_tool_response
    """
    if context is None or context.turn is None:
        raise DelegationError("ask_agent works only inside an agent turn")
    if not request.strip():
        raise DelegationError("ask_agent: request is required")
    settings = context.runtime.config.delegation
    mode = response_mode.strip() or settings.agent_tool_response
    if mode not in ("all_messages", "final_only"):
        raise DelegationError(
            f'ask_agent: unsupported response_mode "{response_mode}" (all_messages or final_only)'
        )
    if context.spawn_depth + 1 > settings.max_spawn_depth:
        raise DelegationError(
            f"ask_agent: spawn depth limit reached ([delegation] max_spawn_depth = "
            f"{settings.max_spawn_depth})"
        )
    chosen: ResponseMode = "final_only" if mode == "final_only" else "all_messages"
    started = time.monotonic()
    try:
        answer = await context.turn.ask(context, agent.strip(), request, chosen)
    except SpecialistFailed as exc:  # it took the request: tell the model to reroute
        _report(context, agent.strip(), started, str(exc))
        raise DelegationError(f"{exc}. {reroute_hint(agent.strip())}") from None
    except DelegationError as exc:
        _report(context, agent.strip(), started, str(exc))
        raise
    _report(context, agent.strip(), started, None)
    return answer


def _report(context: ToolCallContext, agent: str, started: float, error: str | None) -> None:
    """Tell the agent pool how the asked agent did (never fails the call)."""
    if context.turn is None:
        return
    # The agent executor's turn: its runtime is the core's (the pool calls a hook).
    runtime = cast("CoreRuntime", context.turn.runtime)
    if runtime.store is None or not runtime.agents.registry.get(agent):
        return
    try:
        runtime.agents.report_outcome(
            agent,
            ok=error is None,
            latency_ms=(time.monotonic() - started) * 1000,
            error=error or "",
            call=context.idempotency_key or "",
        )
    except Exception as exc:  # statistics must never break the delegation itself
        log.warning("pool.record_failed", agent=agent, error=str(exc))


def transfer_to_agent(
    agent_name: str, message: str = "", context: ToolCallContext | None = None
) -> dict[str, Any]:
    """Hand the rest of this turn to another agent, which then answers the user itself.

    :param agent_name: the agent to take over
    :param message: what the agent should know or do (optional)
    """
    target = agent_name.strip()

    def refused(why: str) -> dict[str, Any]:
        return {
            "success": False,
            "message": why,
            "target_agent": target,
            "transfer_type": "error",
        }

    if context is None or context.turn is None:
        return refused("transfer_to_agent works only inside an agent turn")
    try:
        agent = context.runtime.agents.delegate(target)
    except AgentError as exc:
        return refused(str(exc))
    if agent.name == context.agent:
        return refused(f"this turn is already answered by agent {target!r}")
    return {
        "success": True,
        "message": message,
        "target_agent": agent.name,
        "transfer_type": "agent_handoff",
    }


TOOLS = (ask_agent, transfer_to_agent)
