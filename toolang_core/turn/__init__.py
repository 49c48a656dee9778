"""One agent turn: prompt, model calls, tool calls through the chain, the outcome."""

from toolang_core.turn.agent import AgentExecutor

__all__ = ["AgentExecutor"]
