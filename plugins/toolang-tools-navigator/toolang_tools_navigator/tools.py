"""The navigator's tools with their JSON Schemas.

Each acts on the calling turn thread's browser context (its owner and thread: never a
parameter), on the runtime's browser (:class:`.browser.BrowserHost`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from toolang_core import Tool, ToolCallContext
from toolang_tools_navigator.allow import AllowList
from toolang_tools_navigator.browser import BrowserHost
from toolang_tools_navigator.errors import NavigatorError
from toolang_tools_navigator.session import Key
from toolang_tools_navigator.settings import NAME, NavigatorSettings

if TYPE_CHECKING:
    from toolang_core import RuntimeView

SCREENSHOT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
SAFE_OWNER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}")


def runtime_of(context: ToolCallContext | None) -> RuntimeView:
    runtime = context.runtime if context is not None else None
    if runtime is None:
        raise NavigatorError("this tool runs only inside a turn of a runtime")
    return runtime


def key_of(context: ToolCallContext | None) -> Key:
    """The session's key: the turn's owner and thread."""
    turn = context.turn if context is not None else None
    if context is None or turn is None:
        raise NavigatorError("this tool needs the turn it is called from (its thread)")
    return (turn.owner, context.thread_id)


def host_for(context: ToolCallContext | None) -> tuple[BrowserHost, Key]:
    """The runtime's browser host and the calling thread's key; the first call gives
    the host the call's sandbox (hidden paths) to launch the browser in."""
    host, key = host_of(runtime_of(context)), key_of(context)
    host.sandbox_from(context)
    return host, key


def host_of(runtime: RuntimeView) -> BrowserHost:
    """The runtime's browser host, configured from ``[plugins.tools-navigator]``."""
    host = runtime.plugin_state(NAME, BrowserHost)
    settings = runtime.settings_for(NAME, NavigatorSettings)
    if host.settings is not settings:
        files = settings.files_dir
        if files is not None and not files.is_absolute():
            files = Path(runtime.config.base_dir) / files
        host.configure(settings, AllowList(settings.allow_hosts, files))
    return host


async def browser_open(url: str, context: ToolCallContext | None = None) -> dict[str, Any]:
    """Open a URL in this thread's browser (only hosts of the allow-list) and wait for
    it to load; returns the page's URL and title.

    :param url: an http(s) URL of an allowed host, or a file URL under the files directory
    """
    host, key = host_for(context)
    return await host.run(host.open, key, url)


async def browser_observe(context: ToolCallContext | None = None) -> dict[str, Any]:
    """List the page's visible actionable elements (links, buttons, fields), each with
    a reference such as e12 that browser_click and browser_type take. A reference stays
    with its element while the page lives."""
    host, key = host_for(context)
    return await host.run(host.observe, key)


async def browser_click(ref: str, context: ToolCallContext | None = None) -> dict[str, Any]:
    """Click an element (a reference from browser_observe) and wait for what it loads.

    :param ref: the element's reference, e.g. e12
    """
    host, key = host_for(context)
    return await host.run(host.click, key, ref)


async def browser_type(
    ref: str, text: str, submit: bool = False, context: ToolCallContext | None = None
) -> dict[str, Any]:
    """Type into a field (replacing its value), pressing Enter after it when submit.

    :param ref: the field's reference from browser_observe, e.g. e7
    :param text: what to type
    :param submit: press Enter afterwards (submits the field's form)
    """
    host, key = host_for(context)
    return await host.run(host.type, key, ref, text, submit)


async def browser_extract(context: ToolCallContext | None = None) -> dict[str, Any]:
    """The page's structured content: title, URL, headings, text, links, forms with
    their values, and tables as rows of cells."""
    host, key = host_for(context)
    return await host.run(host.extract, key)


async def browser_screenshot(
    name: str | None = None, full_page: bool = False, context: ToolCallContext | None = None
) -> dict[str, Any]:
    """Save a PNG screenshot of the page under the toolang home; returns its path.

    :param name: the file's name without .png (letters, digits, - and _; default: the call id)
    :param full_page: the whole page, not only the visible part
    """
    runtime = runtime_of(context)
    host, key = host_for(context)
    assert context is not None
    default = "shot-" + re.sub(r"[^A-Za-z0-9_-]", "-", context.call_id)[:59]
    path = screenshot_path(runtime, key[0], name or default)
    return await host.run(host.screenshot, key, path, full_page)


async def browser_close(context: ToolCallContext | None = None) -> dict[str, Any]:
    """Close this thread's browser context (its pages, cookies and storage)."""
    host, key = host_for(context)
    return await host.run(host.close_thread, key)


def screenshot_path(runtime: RuntimeView, owner: str, name: str) -> Path:
    """``<home>/plugins/tools-navigator/screenshots/<owner>/<name>.png``; a name that is
    not a plain file name is refused, an owner that is not one is hashed."""
    if not SCREENSHOT_NAME.fullmatch(name):
        raise NavigatorError(
            f"screenshot name {name!r}: expected letters, digits, '-' and '_' "
            "(at most 64, no path, no extension)"
        )
    folder = (
        owner
        if SAFE_OWNER.fullmatch(owner) and ".." not in owner
        else "owner-" + hashlib.sha256(owner.encode()).hexdigest()[:16]
    )
    root = Path(runtime.config.home) / "plugins" / NAME / "screenshots"
    return root / folder / f"{name}.png"


def constrained(function: Callable[..., Any], **properties: Mapping[str, Any]) -> Tool:
    """A navigator tool of ``function`` with extra JSON Schema keywords per parameter."""
    tool = Tool.from_function(function)
    schema = dict(tool.parameters)
    props = {name: dict(value) for name, value in schema["properties"].items()}
    for name, extra in properties.items():
        if "anyOf" in props[name]:  # an optional parameter: tighten its non-null branch
            props[name]["anyOf"] = [
                {**branch, **extra} if branch.get("type") != "null" else branch
                for branch in props[name]["anyOf"]
            ]
        else:
            props[name].update(extra)
    schema["properties"] = props
    return attrs.evolve(tool, parameters=schema)


REF = {"pattern": r"^e[0-9]{1,7}$"}

TOOLS = (
    constrained(browser_open, url={"minLength": 1, "maxLength": 4_000}),
    constrained(browser_observe),
    constrained(browser_click, ref=REF),
    constrained(browser_type, ref=REF, text={"maxLength": 20_000}),
    constrained(browser_extract),
    constrained(browser_screenshot, name={"pattern": "^" + SCREENSHOT_NAME.pattern + "$"}),
    constrained(browser_close),
)

FUNCTIONS: dict[str, Callable[..., Any]] = {tool.name: tool.function for tool in TOOLS}
"""What BrowserRecovery calls again, by tool name."""
