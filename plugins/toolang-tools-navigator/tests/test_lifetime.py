"""A thread's browser context lives until its idle timeout; without Chromium the tools
say what to install."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from navigator_site import served_runtime, serving_site

import toolang_tools_navigator as plugin
from toolang_core.testing.models import tool_call
from toolang_core.testing.runtimes import tool_results
from toolang_tools_navigator.allow import AllowList
from toolang_tools_navigator.browser import BrowserHost
from toolang_tools_navigator.errors import NavigatorError


def test_a_threads_context_is_closed_after_its_idle_timeout(tmp_path):
    with serving_site() as site, served_runtime(tmp_path, plugin, "idle_seconds = 0.5\n") as served:
        host = served.runtime.plugin_state(plugin.NAME, BrowserHost)

        async def until_closed():
            deadline = time.monotonic() + 120
            while host.has_session(("alice", "cli:alice")):
                assert time.monotonic() < deadline, "the idle context was never closed"
                await asyncio.sleep(0.05)

        def agent():
            yield tool_call("browser_open", {"url": f"{site}/"})
            yield until_closed
            yield tool_call("browser_observe", {})

        opened, observed = tool_results(served.runtime, served.turn(agent))
    assert opened["ok"]
    assert "no page is open in this thread: call browser_open first" in observed["error"]
    assert "recovery" not in str(observed)  # nothing to recover: the model must open one


def test_without_chromium_a_call_says_what_to_install():
    host = BrowserHost()
    settings = plugin.NavigatorSettings(executable_path=Path("/nonexistent/chromium"))
    host.configure(settings, AllowList(("loopback",)))
    try:
        with pytest.raises(NavigatorError) as raised:
            asyncio.run(host.run(host.open, ("alice", "cli:alice"), "http://127.0.0.1:9/"))
    finally:
        host.close()
    assert str(raised.value) == (
        "Chromium is not installed at /nonexistent/chromium: install Debian's package "
        "(apt-get install chromium) or set [plugins.tools-navigator] executable_path"
    )
