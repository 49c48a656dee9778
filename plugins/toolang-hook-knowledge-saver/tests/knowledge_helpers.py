"""Helpers for this plugin's tests: a runtime with the plugin and a few tools, its table."""

from __future__ import annotations

import sqlite3

import toolang_hook_knowledge_saver as plugin
from toolang_core import Tool, ToolCall, ToolCallContext, ToolResult, hookimpl
from toolang_core.testing.runtimes import plugin_runtime, serve_turns

KEY = "sk-proj-" + "k" * 32
LONG = "The deploy runbook: build with make, ship with rsync to the blue hosts, then flip. " * 2


def read_doc(name: str) -> str:
    """A document long enough to keep."""
    return f"{name}: {LONG}"


def read_secret(name: str) -> str:
    """A document that contains a credential."""
    return f"{name}: connect with api key {KEY} — {LONG}"


def status() -> str:
    """Too short to keep."""
    return "ok"


def lookup(host: str) -> dict:
    """A structured result."""
    return {"host": host, "owner": "platform team", "notes": LONG, "password": "hunter2"}


def broken_read(name: str) -> str:
    """Always fails, with a long message."""
    raise FileNotFoundError(f"{name} is gone; " + LONG)


class Tools:
    @staticmethod
    @hookimpl
    def toolang_register_tools(register):
        for function in (read_doc, read_secret, status, lookup, broken_read):
            register(Tool.from_function(function, blocking=False))


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


def entries(runtime):
    path = runtime.config.home / "plugins" / f"{plugin.NAME}.db"
    if not path.exists():
        return []
    with sqlite3.connect(path) as conn:
        conn.row_factory = sqlite3.Row
        return [dict(r) for r in conn.execute("SELECT * FROM knowledge ORDER BY id")]


def save(runtime, tool: str, result: ToolResult, *, agent: str = "assistant", params=None):
    """Pass one result to the hook the way the chain does, and write what it kept."""
    call = ToolCall(f"c-{tool}", tool, params or {})
    ctx = ToolCallContext(
        call=call, turn_id="turn-1", thread_id="cli:t", run_id="run-1", agent=agent,
        runtime=runtime,
    )  # fmt: skip
    plugin.toolang_save_knowledge(call, result, ctx)
    plugin.keeper_of(runtime).writer.flush()
