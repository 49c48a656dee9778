"""Tool hooks: the tools agents may call."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

from toolang_core.hookspecs.rules import BROADCAST, REGISTRATION, calling_rule
from toolang_core.markers import hookspec

if TYPE_CHECKING:
    from toolang_core.plugins.registrars import RegisterTool
    from toolang_core.runtime_view import RuntimeView
    from toolang_core.tools.types import ToolOffer


@calling_rule(REGISTRATION)
@hookspec
def toolang_register_tools(register: RegisterTool) -> None:
    """Offer tools.

    Call ``register(tool)`` with a :class:`~toolang_core.tools.Tool` for each tool.
    Tool names are global: a name another plugin already registered is reported
    against this plugin and skipped. Return nothing.
    """


@calling_rule(BROADCAST)
@hookspec
def toolang_offer_tools(runtime: RuntimeView, tools: ToolOffer) -> Awaitable[None] | None:
    """Offer tools that depend on this run: your settings, an outside server's list.

    Called once per plugin when a runtime starts serving, before ``toolang_startup``;
    ``runtime.settings_for(...)`` is the configuration the runtime was started with.
    ``tools`` is this plugin's :class:`~toolang_core.ToolOffer` for the run: call
    ``tools.add(tool)`` now or keep it and call ``add`` or ``remove(name)`` at any
    time (from any thread) until the run ends, when your offered tools are withdrawn
    and the offer is closed.

    Offered tools follow the registered tools' name rules: a name another plugin has,
    or one ``[tools.providers]`` gives to another plugin, is refused
    (:class:`~toolang_core.ToolClash` naming both; the standing tool stays). A turn
    keeps the tools it started with: a new tool is offered from the next turn on; a
    call to a withdrawn tool fails with an error naming your plugin. Return ``None``
    or an awaitable the runtime awaits before admitting work; an exception is logged
    against the plugin and the runtime goes on.
    """
