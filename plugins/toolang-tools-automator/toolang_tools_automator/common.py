"""What every automator tool needs: its runtime, the caller's owner, strict schemas."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from toolang_core import Tool
from toolang_tools_automator.settings import NAME, AutomatorSettings

if TYPE_CHECKING:
    from toolang_core import RuntimeView, ToolCallContext


class AutomatorError(ValueError):
    """An automator tool cannot do what it was asked; the message names the parameter."""


def runtime_of(context: ToolCallContext | None) -> RuntimeView:
    runtime = context.runtime if context is not None else None
    if runtime is None or runtime.store is None:
        raise AutomatorError("this tool runs only inside a turn of a serving runtime")
    return runtime


def owner_of(context: ToolCallContext | None) -> str:
    """Whose chores, task runs and workflows the call may touch: its turn's owner."""
    turn = context.turn if context is not None else None
    if turn is None:
        raise AutomatorError("this tool needs the turn it is called from (its owner)")
    return turn.owner


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
    tool = Tool.from_function(function)
    schema = dict(tool.parameters)
    props = {name: dict(value) for name, value in schema["properties"].items()}
    for name, extra in properties.items():
        if "anyOf" in props[name]:  # an optional parameter: tighten its non-null branch
            props[name]["anyOf"] = [
                {**branch, **extra} if branch.get("type") != "null" else branch
                for branch in props[name]["anyOf"]
            ]
        else:
            props[name].update(extra)
    schema["properties"] = props
    return attrs.evolve(tool, parameters=schema)


def check_agent(runtime: RuntimeView, name: str, where: str, allowed_tools: Any = None) -> None:
    """:raises AutomatorError: naming ``where`` when the agent is unknown or disabled, or
    ``allowed_tools`` reaches outside its scope."""
    try:
        agent = runtime.agents.agent(name)
        runtime.agents.scope(agent, allowed_tools)
    except Exception as exc:  # AgentError, ToolScopeError, PatternError: all say why
        raise AutomatorError(f"{where}: {exc}") from None
