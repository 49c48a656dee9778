"""A SecurityFilter in a real runtime, asked through its hook implementations."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, settings

import toolang_hook_security_filter as plugin
from toolang_core import ToolCall, ToolCallContext, ToolResult

NAME = plugin.NAME

# Hypothesis's time-based checks (a 200 ms deadline per example, "input generation is
# slow") fail when the machine is busy, and a combined run makes it busy; what these
# properties check does not depend on speed, so the suite turns both off.
settings.register_profile("toolang", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("toolang")


class Filter:
    """The plugin's two hooks over one runtime (and so one compiled policy)."""

    def __init__(self, runtime: Any) -> None:
        self.runtime = runtime

    def context(self, call: ToolCall) -> ToolCallContext:
        return ToolCallContext(
            call=call,
            turn_id="turn-1",
            thread_id="test:1",
            run_id="run-1",
            agent="assistant",
            runtime=self.runtime,
        )

    def call(self, params: dict[str, Any], tool: str = "exec_run") -> object:
        call = ToolCall("c1", tool, params)
        return plugin.toolang_filter_tool_call(call, self.context(call))

    def result(self, output: Any, *, tool: str = "fs_read", error: str | None = None) -> object:
        call = ToolCall("c1", tool, {"path": "notes.txt"})
        result = ToolResult(ok=error is None, output=output, error=error, duration_ms=1.5)
        return plugin.toolang_filter_tool_result(call, result, self.context(call))


@pytest.fixture
def security_filter(toolang_runtime):
    """``make(settings_toml)`` → a :class:`Filter` with those ``[plugins.…]`` settings."""

    def make(settings: str = "") -> Filter:
        config = f"[plugins.{NAME}]\n{settings}" if settings else ""
        return Filter(toolang_runtime(config, plugins={NAME: plugin}))

    return make


@pytest.fixture
def default_filter(security_filter) -> Filter:
    return security_filter()
