"""What an agent registry source provides."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Protocol

import attrs

if TYPE_CHECKING:
    from toolang_core.plugins.context import PluginContext

SourceLabel = Literal["builtin", "embedded", "user", "remote"]
"""Where a definition comes from; also its precedence (builtin 0 … remote 3)."""

SOURCE_PRIORITY: dict[SourceLabel, int] = {"builtin": 0, "embedded": 1, "user": 2, "remote": 3}


@attrs.frozen
class AgentDefinition:
    """A named agent: its instruction, model and tool scope.

    ``prefixes`` and ``tools`` bound the tools the agent may use; ``origin`` is the
    file path or URL the definition was read from.
    """

    name: str
    description: str = ""
    instruction: str = ""
    model: str | None = None
    prefixes: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    capabilities: tuple[str, ...] = ()
    status: Literal["active", "disabled"] = "active"
    source: SourceLabel = "builtin"
    origin: str = ""


@attrs.frozen
class AgentLoad:
    """What one source yielded: definitions, plus one diagnostic line per problem."""

    definitions: tuple[AgentDefinition, ...] = ()
    diagnostics: tuple[str, ...] = ()


class AgentSource(Protocol):
    """A source of agent definitions, returned by ``toolang_agent_sources``."""

    @property
    def label(self) -> SourceLabel: ...

    @property
    def name(self) -> str: ...

    def load(self, context: PluginContext) -> AgentLoad:
        """Read the definitions now; never raise for one bad definition."""
        ...
