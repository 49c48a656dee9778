"""The plugin host as its collectors and its hook facade use it (:class:`CollectingHost`,
:class:`RouteHost`, :class:`FacadeHost`).

:mod:`toolang_core.plugins.components` and :mod:`toolang_core.plugins.routes` ask each
plugin's registration hooks in turn and report a plugin that fails. They name these
protocols, not :class:`~toolang_core.plugins.host.PluginHost`, which imports them to
collect: the type checker's graph would otherwise make the host and its collectors one
cycle. The host implements them.

A leaf module: the types it names are imported for type checking only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Iterable

    from toolang_core.hookspecs.rules import HookFailure
    from toolang_core.plugins.manager import ToolangPluginManager
    from toolang_core.plugins.records import PluginRecord
    from toolang_core.plugins.required import RequiredProblem


class RegistrationHooks(Protocol):
    """The hook calls a collector makes (the host's hook facade has them)."""

    def implementations(self, hook: str) -> list[str]:
        """Names of the plugins implementing ``hook``, in the order they are called."""
        ...

    def registration(
        self, hook: str, plugin: str, /, **kwargs: Any
    ) -> tuple[list[Any], HookFailure | None]:
        """Call ``plugin``'s implementation of registration ``hook``."""
        ...


class RouteHost(Protocol):
    """The host as the route collector uses it: its hooks."""

    @property
    def hooks(self) -> RegistrationHooks:
        """The typed facade the core calls hooks through."""


class CollectingHost(RouteHost, Protocol):
    """The host as the component collector uses it: its hooks, its plugins' records,
    the configured tool providers, and where a failure or a problem is reported."""

    @property
    def active_names(self) -> list[str]:
        """Names of the plugins currently registered (loaded or built in)."""

    @property
    def tool_providers(self) -> Mapping[str, str]:
        """``[tools.providers]``: whose a contested tool name is."""

    def record(self, name: str) -> PluginRecord:
        """Plugin ``name``'s record."""
        ...

    def fail(
        self, name: str, stage: str, error: BaseException | str, *, hook: str | None = None
    ) -> None:
        """Record that plugin ``name`` failed, unregister it, and raise if strict."""
        ...

    def warn(self, name: str | None, message: str, *, event: str = ...) -> None:
        """Record a problem that left plugin ``name`` (or every plugin) working."""
        ...

    def report_error(self, message: str, *, plugins: Iterable[str] = ..., event: str) -> None:
        """Record a problem that withheld something while ``plugins`` stayed loaded."""
        ...


class FacadeHost(RouteHost, Protocol):
    """The host as its hook facade uses it: its plugin manager, its hooks (to collect
    routes) and its required plugins."""

    @property
    def pm(self) -> ToolangPluginManager:
        """The host's pluggy plugin manager."""

    def required_problems(self) -> list[RequiredProblem]:
        """Each required plugin that is missing, failed, or broke in a hook."""
        ...

    def is_required(self, name: str) -> bool:
        """Whether plugin ``name`` is required."""
        ...
