"""Helpers for this plugin's tests: a runtime with the plugin and two tools, its database."""

from __future__ import annotations

import sqlite3

import toolang_hook_learning_observer as plugin
from toolang_core import Tool, ToolCall, ToolCallContext, ToolResult, hookimpl
from toolang_core.testing.runtimes import plugin_runtime, serve_turns


def flaky_write(path: str) -> str:
    """Write to ``path`` — refused for paths under ``locked/``."""
    if path.startswith("locked/"):
        raise PermissionError(f"[Errno 13] Permission denied: {path!r}")
    return f"wrote {path}"


def echo(text: str) -> str:
    """Say ``text`` back."""
    return text


class Tools:
    @staticmethod
    @hookimpl
    def toolang_register_tools(register):
        register(Tool.from_function(flaky_write, blocking=False))
        register(Tool.from_function(echo, blocking=False))


def make_runtime(toolang_runtime, settings: str = "", model=None, *, config="", plugins=None):
    """A runtime (from the ``toolang_runtime`` fixture) with this plugin and the tools."""
    return plugin_runtime(
        toolang_runtime,
        plugin.NAME,
        plugin,
        settings=settings,
        model=model,
        plugins={"tools": Tools(), **(plugins or {})},
        config=config,
    )


serve = serve_turns  # one chat turn per input on cli:t, served until idle; their ids


def db_path(runtime):
    return runtime.config.home / "plugins" / f"{plugin.NAME}.db"


def rows(runtime, where: str = "1", params=()):
    if not db_path(runtime).exists():
        return []
    with sqlite3.connect(db_path(runtime)) as conn:
        conn.row_factory = sqlite3.Row
        return [
            dict(r)
            for r in conn.execute(f"SELECT * FROM tool_outcomes WHERE {where} ORDER BY id", params)
        ]


def observe(runtime, tool: str, *, ok: bool = True, agent: str = "assistant", **result):
    """Pass one outcome to the hook the way the chain does (no model, no turn)."""
    call = ToolCall(f"c-{tool}", tool, {})
    ctx = ToolCallContext(
        call=call, turn_id="turn-1", thread_id="cli:t", run_id="run-1", agent=agent,
        runtime=runtime,
    )  # fmt: skip
    if not ok:
        result.setdefault("error_type", "PermissionError")
        result.setdefault("error", "PermissionError: denied")
    plugin.toolang_observe_tool_result(call, ToolResult(ok=ok, **result), ctx)
