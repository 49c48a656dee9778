"""The runtime as the agents reach it (:class:`AgentsRuntime`).

The :class:`~toolang_core.agents.catalog.AgentCatalog` reads the agent sources, the
tools, the services and the configuration of the runtime it serves, and calls two
hooks: the routers and the agent pool provider. It names this protocol — just what it
uses — not :class:`~toolang_core.runtime_parts.CoreRuntime` nor
:class:`~toolang_core.runtime_view.RuntimeView`: ``RuntimeView.agents`` names the
catalog, and the type checker's graph would otherwise lead from the view back to
itself (and, through ``CoreRuntime.hooks``, to the hook specifications). The runtime
implements it.

A leaf module: the types it names are imported for type checking only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from toolang_core.agents.routing import RouteProposal
    from toolang_core.agents.types import AgentDefinition
    from toolang_core.config.model import ToolangConfig
    from toolang_core.hookspecs.rules import HookFailure
    from toolang_core.plugins.context import PluginContext
    from toolang_core.plugins.registrations import AgentSourceRegistration, ToolRegistration
    from toolang_core.store.protocol import ExecutionStore


class AgentHooks(Protocol):
    """The hooks the agents call (the runtime's hook facade has them)."""

    async def route(
        self, request: str, agents: Sequence[AgentDefinition]
    ) -> tuple[RouteProposal | None, tuple[HookFailure, ...]]:
        """Ask every router; the highest score wins."""
        ...

    def agent_pool(self, runtime: Any, records: Any, hooks: Any) -> Any:
        """The first ``toolang_agent_pool`` answer (``None``: no plugin provides one)."""
        ...


class AgentComponents(Protocol):
    """What the plugins registered, as far as the agents read it."""

    @property
    def tools(self) -> Mapping[str, ToolRegistration]:
        """Every tool a model may be offered, by name."""

    @property
    def agent_sources(self) -> Sequence[AgentSourceRegistration]:
        """The agent sources the plugins returned, in registration order."""


class AgentsRuntime(Protocol):
    """The runtime as the agents see it (the runtime, a ``CoreRuntime``, is one)."""

    @property
    def config(self) -> ToolangConfig:
        """The runtime's validated configuration (``config.agents``)."""

    @property
    def components(self) -> AgentComponents:
        """The tools and agent sources the plugins registered."""

    @property
    def store(self) -> ExecutionStore | None:
        """The execution store while the runtime serves (``None`` before)."""

    @property
    def hooks(self) -> AgentHooks:
        """The hooks the agents call."""

    def service_available(self, name: str) -> bool:
        """Whether the runtime service ``name`` (``"memory"``, ``"delegation"``) is up."""
        ...

    def plugin_context(self, plugin_name: str, **services: Any) -> PluginContext:
        """The context handed to ``plugin_name``'s agent source."""
        ...
