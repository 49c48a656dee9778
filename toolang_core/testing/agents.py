"""Agents for a test, without AGENT.md files: a plugin offering one agent source."""

from __future__ import annotations

from typing import Any

from toolang_core.agents.types import AgentDefinition, AgentLoad
from toolang_core.markers import hookimpl


class AgentsPlugin:
    """A plugin whose ``toolang_agent_sources`` offers itself: an agent source (label
    ``user`` unless told otherwise, name ``test-agents``) loading ``definitions``.

        runtime = toolang_runtime(plugins={"agents": AgentsPlugin(AgentDefinition(...))})
    """

    label = "user"
    name = "test-agents"

    def __init__(
        self, *definitions: AgentDefinition, label: str | None = None, name: str | None = None
    ) -> None:
        self.definitions = definitions
        if label is not None:
            self.label = label
        if name is not None:
            self.name = name

    def load(self, context: Any) -> AgentLoad:
        """The definitions, every time (the source never fails)."""
        return AgentLoad(definitions=list(self.definitions))

    @hookimpl
    def toolang_agent_sources(self) -> AgentsPlugin:
        return self
