"""toolang-tools-navigator: the navigator role's tools and BrowserRecovery.

``browser_open``, ``browser_observe``, ``browser_click``, ``browser_type``,
``browser_extract``, ``browser_screenshot`` and ``browser_close`` drive a real browser
(Playwright with the system's Chromium), one context per turn thread, refused in code
anything outside the allow-list of hosts. BrowserRecovery (a result filter: the chain's
post-execute stage) recovers a failed browser call once and retries it once. This
module stays import-light: Playwright loads on the first browser call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolang_core import hookimpl
from toolang_tools_navigator.errors import ElementGone, NavigationRefused, NavigatorError
from toolang_tools_navigator.settings import NAME, NavigatorSettings

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from toolang_core import (
        RegisterSettings,
        RegisterTool,
        RuntimeView,
        ToolCall,
        ToolCallContext,
        ToolResult,
    )

__all__ = ["NAME", "ElementGone", "NavigationRefused", "NavigatorError", "NavigatorSettings"]


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(NavigatorSettings)


@hookimpl
def toolang_register_tools(register: RegisterTool) -> None:
    from toolang_tools_navigator.tools import TOOLS

    for tool in TOOLS:
        register(tool)


@hookimpl(tryfirst=True)
def toolang_filter_tool_result(
    call: ToolCall, result: ToolResult, ctx: ToolCallContext
) -> Awaitable[ToolResult | None] | None:
    """BrowserRecovery (see :mod:`.recovery`). First of the result filters, so the others
    (masking, say) see the result the model will get — the retried one included. Any
    other call costs one name check (no coroutine)."""
    if result.ok or not call.name.startswith("browser_"):
        return None
    from toolang_tools_navigator.recovery import recover

    return recover(call, result, ctx)


@hookimpl
def toolang_shutdown(runtime: RuntimeView) -> None:
    """Close every context and the browser with the runtime."""
    from toolang_tools_navigator.browser import BrowserHost

    runtime.plugin_state(NAME, BrowserHost).close()
