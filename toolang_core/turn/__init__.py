"""One agent turn: prompt, model calls, tool calls through the chain, the outcome."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolang_core.turn.agent import AgentExecutor

__all__ = ["AgentExecutor"]


def __getattr__(name: str) -> Any:
    # Imported on first use, not with the package: every command imports the built-in
    # delegation plugin next door, only a turn needs the agent loop.
    if name == "AgentExecutor":
        from toolang_core.turn.agent import AgentExecutor

        return AgentExecutor
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
