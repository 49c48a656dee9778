"""Agent definitions and the registry that merges their sources."""

from toolang_core.agents.types import AgentDefinition, AgentLoad, AgentSource, SourceLabel

__all__ = ["AgentDefinition", "AgentLoad", "AgentSource", "SourceLabel"]
