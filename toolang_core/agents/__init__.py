"""Agent definitions, the registry that merges their sources, tool partitioning and
routing."""

from toolang_core.agents.types import (
    AgentDefinition,
    AgentDiagnostic,
    AgentHealth,
    AgentLoad,
    AgentSource,
    SourceLabel,
)

__all__ = [
    "AgentDefinition",
    "AgentDiagnostic",
    "AgentHealth",
    "AgentLoad",
    "AgentSource",
    "SourceLabel",
]
