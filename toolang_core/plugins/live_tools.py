"""Tools a plugin offers while a runtime serves (``toolang_offer_tools``).

Registered tools are fixed when the plugins are collected; an offered tool depends on
the run — the plugin's settings, an outside server's current tool list — and may come
and go while the runtime serves. Both kinds share one table, the runtime's
``components.tools``, and one set of name rules (:mod:`toolang_core.plugins.tool_names`),
with one difference forced by time: a registration arriving while turns run cannot
withhold a tool those turns already use, so an offer that clashes is *refused* (an error
naming both plugins) and the standing tool stays.

The table is copy-on-write: every change publishes a new snapshot and a reader never
sees one half-made. A turn keeps the tool list it started with; a tool offered meanwhile
is offered from the next turn on, and a call to a tool withdrawn meanwhile fails with an
error naming the plugin that withdrew it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import structlog

from toolang_core.plugins.tool_names import refused_offer
from toolang_core.tools.types import Tool

if TYPE_CHECKING:
    from toolang_core.plugins.components import Components, ToolRegistration
    from toolang_core.plugins.records import PluginRecord

log = structlog.get_logger("toolang.plugins")


class ToolClash(ValueError):
    """An offered tool's name is another plugin's, or ``[tools.providers]`` gives it to
    another plugin; the message names both and what to write in ``toolang.toml``."""


class OfferClosed(RuntimeError):
    """The run this offer belongs to has ended; its tools were withdrawn."""


class OfferedTools:
    """The tools plugins offer in one run, over the runtime's :class:`Components`.

    Changes may come from any thread; they are serialised here and each publishes new
    ``components.tools`` and ``components.withheld_tools`` snapshots."""

    def __init__(
        self,
        components: Components,
        providers: Mapping[str, str],
        record: Callable[[str], PluginRecord],
    ) -> None:
        self._components = components
        self._providers = providers
        self._record = record
        self._lock = threading.Lock()
        # what collection decided: a close goes back to it
        self._collected = dict(components.tools.current)
        self._collected_withheld = dict(components.withheld_tools.current)
        self._offers: list[PluginToolOffer] = []

    def offer_for(self, plugin: str) -> PluginToolOffer:
        """The handle ``plugin``'s ``toolang_offer_tools`` implementation gets."""
        offer = PluginToolOffer(self, plugin)
        self._offers.append(offer)
        return offer

    def add(self, plugin: str, tool: Tool) -> None:
        from toolang_core.plugins.components import ToolRegistration, check_tool

        tool = check_tool(tool)
        mine = ToolRegistration(tool, plugin)
        with self._lock:
            components = self._components
            standing = components.tools.get(tool.name)
            if standing is not None and standing.plugin == plugin:
                self._publish({tool.name: mine}, ())  # the plugin's newer version of it
                return
            claims = list(components.tool_claims.get(tool.name, ()))
            if standing is not None and self._offered(tool.name):
                claims.append(standing)  # another plugin's offer
            claims.append(mine)
            refusal = refused_offer(tool.name, claims, self._providers, self._record)
            if refusal is not None:
                log.error("plugin.tool_clash", plugin=plugin, tool=tool.name, error=refusal)
                raise ToolClash(refusal)
            self._publish({tool.name: mine}, ())
        log.info("plugin.tool_offered", plugin=plugin, tool=tool.name)

    def remove(self, plugin: str, name: str, why: str = "") -> bool:
        with self._lock:
            standing = self._components.tools.get(name)
            if standing is None or standing.plugin != plugin or not self._offered(name):
                return False
            reason = f"tool {name!r} was withdrawn by plugin {plugin!r} while the runtime ran"
            self._publish({}, (name,), reason + (f" ({why})" if why else ""))
        log.info("plugin.tool_withdrawn", plugin=plugin, tool=name, why=why)
        return True

    def names(self, plugin: str) -> frozenset[str]:
        return frozenset(
            name
            for name, registration in self._components.tools.items()
            if registration.plugin == plugin and self._offered(name)
        )

    def close(self) -> None:
        """End of the run: withdraw every offered tool."""
        with self._lock:
            for offer in self._offers:
                offer.closed = True
            self._components.withheld_tools.publish(self._collected_withheld)
            self._components.tools.publish(self._collected)

    def _offered(self, name: str) -> bool:
        """Whether the tool named ``name`` now is an offered one (not collected)."""
        standing = self._components.tools.get(name)
        return standing is not None and self._collected.get(name) is not standing

    def _publish(
        self, added: Mapping[str, ToolRegistration], removed: Iterable[str], why: str = ""
    ) -> None:
        tools = dict(self._components.tools.current)
        withheld = dict(self._components.withheld_tools.current)
        for name in removed:
            tools.pop(name, None)
            withheld[name] = why
        for name, registration in added.items():
            tools[name] = registration
            withheld.pop(name, None)
        # withheld first: a reader that misses a tool finds why
        self._components.withheld_tools.publish(withheld)
        self._components.tools.publish(tools)


class PluginToolOffer:
    """What a plugin's ``toolang_offer_tools`` gets: its tools for this run.

    Keep it for the run: :meth:`add` and :meth:`remove` may be called
    at any time until the run ends (from any thread), after which they raise
    :class:`OfferClosed`. Each change goes through the same name rules as registered
    tools; the next turn sees it."""

    def __init__(self, offered: OfferedTools, plugin: str) -> None:
        self._offered = offered
        self.plugin = plugin
        self.closed = False

    def add(self, tool: Tool | Callable[..., Any]) -> None:
        """Offer ``tool`` (a :class:`~toolang_core.tools.Tool` or a plain function);
        offering a name this plugin already offers replaces that tool.

        :raises ToolClash: when another plugin has the name or ``[tools.providers]``
            gives it to another plugin (the standing tool stays).
        :raises RegistrationError: for an invalid tool or name.
        """
        self._open()
        self._offered.add(self.plugin, tool if isinstance(tool, Tool) else _as_tool(tool))

    def remove(self, name: str, why: str = "") -> bool:
        """Withdraw this plugin's offered tool ``name``; later calls to it fail with an
        error naming the plugin (and ``why``). ``False`` when it offers no such tool."""
        self._open()
        return self._offered.remove(self.plugin, name, why)

    @property
    def names(self) -> frozenset[str]:
        """The names of the tools this plugin offers now."""
        return self._offered.names(self.plugin)

    def _open(self) -> None:
        if self.closed:
            raise OfferClosed(
                f"plugin {self.plugin!r}: the run this tool offer belongs to has ended; "
                "toolang_offer_tools gives a new one to the next run"
            )


def _as_tool(function: Callable[..., Any]) -> Tool:
    from toolang_core.plugins.components import check_tool

    return check_tool(function)
