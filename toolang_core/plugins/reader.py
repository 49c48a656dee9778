"""The plugin host as a hook or a tool may read it (:class:`HostReader`).

The runtime hands it out as ``RuntimeView.plugins``: the records, the failures and who
implements which hook — and no way to register a plugin, call a hook or reach the
plugin manager.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolang_core.plugins.host import PluginHost
    from toolang_core.plugins.records import PluginRecord


class HostReader:
    """Read-only access to one plugin host (implements
    :class:`~toolang_core.runtime_view.PluginsReader`)."""

    __slots__ = ("_host",)

    def __init__(self, host: PluginHost) -> None:
        self._host = host

    @property
    def records(self) -> list[PluginRecord]:
        """Every plugin offered to the host, sorted by name (shadowed duplicates too)."""
        return self._host.records

    @property
    def active_names(self) -> list[str]:
        """Names of the plugins whose hooks are called (loaded or built in)."""
        return self._host.active_names

    @property
    def failures(self) -> list[PluginRecord]:
        """The plugins that failed to import or register, or lost to a duplicate."""
        return self._host.failures

    def record(self, name: str) -> PluginRecord:
        """Plugin ``name``'s record (:raises KeyError: when the host has none)."""
        return self._host.record(name)

    def implementations(self, hook: str) -> list[str]:
        """Names of the plugins implementing ``hook``, in the order they are called."""
        return self._host.hooks.implementations(hook)

    def chain(self) -> list[tuple[str, str, list[str]]]:
        """The tool-call chain as registered: ``(stage, hook, plugins in call order)``."""
        return self._host.hooks.chain()
