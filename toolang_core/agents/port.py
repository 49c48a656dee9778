"""The runtime as the agents reach it (:class:`AgentsRuntime`).

The :class:`~toolang_core.agents.catalog.AgentCatalog` reads the agent sources, the
tools and the configuration of the runtime it serves, and calls two hooks: the routers
and the agent pool provider. It names this protocol, not
:class:`~toolang_core.runtime_parts.CoreRuntime`, whose ``hooks`` is the whole hook
facade: ``RuntimeView.agents`` names the catalog, and the type checker's graph would
otherwise lead from the view back through the facade to the hook specifications. The
runtime implements it.

A leaf module but for the view it extends: the types it names are imported for type
checking only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from toolang_core.runtime_view import RuntimeView

if TYPE_CHECKING:
    from toolang_core.agents.routing import RouteProposal
    from toolang_core.agents.types import AgentDefinition
    from toolang_core.hookspecs.rules import HookFailure
    from toolang_core.plugins.context import PluginContext


class AgentHooks(Protocol):
    """The hooks the agents call (the runtime's hook facade has them)."""

    async def route(
        self, request: str, agents: Sequence[AgentDefinition]
    ) -> tuple[RouteProposal | None, tuple[HookFailure, ...]]:
        """Ask every router; the highest score wins."""
        ...

    def agent_pool(self, runtime: RuntimeView, records: Any, hooks: Any) -> Any:
        """The first ``toolang_agent_pool`` answer (``None``: no plugin provides one)."""
        ...


class AgentsRuntime(RuntimeView, Protocol):
    """The runtime as the agents see it: the view, two hooks, and plugin contexts."""

    @property
    def hooks(self) -> AgentHooks:
        """The hooks the agents call."""

    def plugin_context(self, plugin_name: str, **services: Any) -> PluginContext:
        """The context handed to ``plugin_name``'s agent source."""
        ...
