"""What every automator tool needs: its runtime, the caller's owner, strict schemas."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from toolang_core import Tool, tool_owner, tool_runtime
from toolang_tools_automator.settings import NAME, AutomatorSettings

if TYPE_CHECKING:
    from toolang_core import RuntimeView, ToolCallContext


class AutomatorError(ValueError):
    """An automator tool cannot do what it was asked; the message names the parameter."""


def runtime_of(context: ToolCallContext | None) -> RuntimeView:
    runtime = tool_runtime(context, AutomatorError)
    if runtime.store is None:
        raise AutomatorError("this tool runs only inside a turn of a serving runtime")
    return runtime


def owner_of(context: ToolCallContext | None) -> str:
    """Whose chores, task runs and workflows the call may touch: its turn's owner."""
    return tool_owner(context, AutomatorError)


def settings_of(runtime: RuntimeView) -> AutomatorSettings:
    return runtime.settings_for(NAME, AutomatorSettings)


def call_digest(context: ToolCallContext, length: int = 20) -> str:
    """A digest of the call (turn id + call id): ids made from it make a replayed call
    find what it created the first time instead of creating it again."""
    return hashlib.sha256(f"{context.turn_id}:{context.call_id}".encode()).hexdigest()[:length]


def owner_digest(owner: str) -> str:
    return hashlib.sha256(owner.encode()).hexdigest()[:16]


def constrained(function: Callable[..., Any], **properties: Mapping[str, Any]) -> Tool:
    """``Tool.from_function(function)`` with extra JSON Schema keywords per parameter."""
    return Tool.from_function(function).constrain(**properties)


def check_agent(runtime: RuntimeView, name: str, where: str, allowed_tools: Any = None) -> None:
    """:raises AutomatorError: naming ``where`` when the agent is unknown or disabled, or
    ``allowed_tools`` reaches outside its scope."""
    try:
        agent = runtime.agents.agent(name)
        runtime.agents.scope(agent, allowed_tools)
    except Exception as exc:  # AgentError, ToolScopeError, PatternError: all say why
        raise AutomatorError(f"{where}: {exc}") from None
