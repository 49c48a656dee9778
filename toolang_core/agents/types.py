"""What an agent registry source provides: definitions, diagnostics, health."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol

import attrs

if TYPE_CHECKING:
    from toolang_core.config.sandbox import SandboxOverride
    from toolang_core.plugins.context import PluginContext

SourceLabel = Literal["builtin", "embedded", "user", "remote"]
"""Where a definition comes from; also its precedence (builtin 0 … remote 3)."""

SOURCE_PRIORITY: Final[dict[str, int]] = {"builtin": 0, "embedded": 1, "user": 2, "remote": 3}

AgentStatus = Literal["active", "disabled"]


def _strings(values: Iterable[str]) -> tuple[str, ...]:
    # A YAML or JSON list arrives as a list; definitions keep tuples (they are values).
    return tuple(values)


@attrs.frozen
class AgentDefinition:
    """A named agent: its instruction, model, tool scope, routing hints and limits.

    Tool scope: ``prefixes`` *claim* tools — every registered tool goes to the agent
    with the longest prefix matching it (see :mod:`toolang_core.agents.partition`);
    ``tools`` *grant* tools without claiming them (exact names, or ``prefix*``; ``*``
    alone grants every tool). Both accept ``fs_*`` and ``fs_`` alike.

    ``fallback`` lists the models tried, in order, when ``model`` fails (``None``:
    ``[models] fallback``; empty: none). ``keywords`` (multi-word ones too) and
    ``capabilities`` route requests to the agent;
    ``skills`` are the skill names a remote agent's card advertises. ``max_steps``,
    ``max_delegation_rounds`` and ``context_tokens`` override ``[agents]`` limits for this
    agent (``None``: the configured ones). ``session_isolation`` asks for delegated work
    to run on an isolated child thread. ``sandbox`` changes ``[tools]``' sandbox settings for the
    programs its tools start (its working directory, network, limits;
    ``[tools.agent.<name>]`` in toolang.toml wins over it). ``output_schema`` asks
    for a typed answer: JSON matching that JSON Schema, an invalid answer sent back to
    the model up to ``output_retries`` times (``None``: ``[agents] output_retries``;
    see :mod:`toolang_core.turn.output`). ``origin`` is the file path or URL it was
    read from.
    """

    name: str
    description: str = ""
    instruction: str = ""
    model: str | None = None
    fallback: tuple[str, ...] | None = attrs.field(
        default=None, converter=attrs.converters.optional(_strings)
    )
    prefixes: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    tools: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    keywords: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    capabilities: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    skills: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    session_isolation: bool = False
    max_steps: int | None = None
    max_delegation_rounds: int | None = None
    context_tokens: int | None = None
    status: AgentStatus = "active"
    sandbox: SandboxOverride | None = None
    output_schema: Mapping[str, Any] | None = attrs.field(default=None, hash=False)
    output_retries: int | None = None
    source: SourceLabel = "builtin"
    origin: str = ""

    @property
    def priority(self) -> int:
        """The precedence of its source: 0 (builtin) … 3 (remote)."""
        return SOURCE_PRIORITY[self.source]


DiagnosticLevel = Literal["error", "warning", "info"]


@attrs.frozen
class AgentDiagnostic:
    """One finding about a source or a definition, for a person.

    ``error``: a definition (or a whole source) was not loaded; ``warning``: it was
    loaded but something was ignored (an unknown key); ``info``: nothing wrong, worth
    knowing (a missing optional directory). ``origin`` and ``line`` say where.
    """

    level: DiagnosticLevel
    message: str
    origin: str = ""
    line: int | None = None

    def __str__(self) -> str:
        where = self.origin + (f":{self.line}" if self.line is not None else "")
        return f"{where}: {self.message}" if where else self.message


def _diagnostics(values: Iterable[AgentDiagnostic | str]) -> tuple[AgentDiagnostic, ...]:
    # A plain string is an error: the shortest way for a source to report a problem.
    return tuple(
        v if isinstance(v, AgentDiagnostic) else AgentDiagnostic("error", str(v)) for v in values
    )


def _definitions(values: Iterable[AgentDefinition]) -> tuple[AgentDefinition, ...]:
    return tuple(values)


HealthState = Literal["ok", "unreachable"]


@attrs.frozen
class AgentHealth:
    """Whether a remote agent answered when its source last looked (``checked_at``)."""

    state: HealthState
    detail: str = ""
    checked_at: float | None = None


@attrs.frozen
class AgentLoad:
    """What one source yielded: definitions, diagnostics, and health by agent name.

    ``health`` is for agents that live elsewhere (remote); a local agent has none.
    """

    definitions: tuple[AgentDefinition, ...] = attrs.field(default=(), converter=_definitions)
    diagnostics: tuple[AgentDiagnostic, ...] = attrs.field(default=(), converter=_diagnostics)
    health: Mapping[str, AgentHealth] = attrs.field(factory=dict)


class AgentSource(Protocol):
    """A source of agent definitions, returned by ``toolang_agent_sources``."""

    @property
    def label(self) -> SourceLabel: ...

    @property
    def name(self) -> str: ...

    def load(self, context: PluginContext) -> AgentLoad:
        """Read the definitions now; never raise for one bad definition."""
        ...
