"""The runtime as the core's own parts below it use it (:class:`CoreRuntime`).

The agents, the models, the task runs and the agent turn need a little more
of the runtime than a plugin does — they call hooks and build plugin contexts — but
not the concrete :class:`~toolang_core.runtime.Runtime`: importing it, even for type
checking only, would tie everything below the runtime back to it. They name this
protocol instead; the runtime implements it. Plugins use
:class:`~toolang_core.runtime_view.RuntimeView`.

A leaf module: the types it names are imported for type checking only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from toolang_core.runtime_view import RuntimeView

if TYPE_CHECKING:
    from toolang_core.inbox.policy import AdmissionPolicy
    from toolang_core.plugins.context import PluginContext
    from toolang_core.plugins.facade import Hooks
    from toolang_core.store.protocol import ExecutionStore
    from toolang_core.tools.threads import ToolThreads


class CoreRuntime(RuntimeView, Protocol):
    """The runtime as the core's parts below it see it: the view, and calling hooks."""

    @property
    def hooks(self) -> Hooks:
        """The typed facade the core calls hooks through."""

    @property
    def tool_threads(self) -> ToolThreads:
        """Blocking tools' worker threads, counted (see :mod:`toolang_core.tools.threads`)."""

    @property
    def policy(self) -> AdmissionPolicy:
        """The admission policy (each thread group's priority, budget and overflow)."""

    def plugin_context(self, plugin_name: str, **services: Any) -> PluginContext:
        """The context handed to ``plugin_name``'s component factories."""
        ...

    def admit_spawned(self, store: ExecutionStore, parent_turn_id: str, turn_id: str) -> None:
        """A one-shot run serving ``store`` admits only its own requests: also admit
        ``turn_id``, spawned by ``parent_turn_id`` (its task runs must run for it to
        finish). Nothing happens otherwise."""
        ...
