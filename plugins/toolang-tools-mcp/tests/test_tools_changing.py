"""The tools of a server whose list changes while the runtime serves, and the
configuration the plugin reads its servers from (issue #34): real MCP servers, real
runtimes, a scripted model."""

from __future__ import annotations

import asyncio
import json

from tools_mcp_kit import finished, offered_tools, serving, stdio_server, wait_for

import toolang_tools_mcp
from toolang_core.config import load_config
from toolang_core.runtime import Runtime
from toolang_core.store.types import NewTurnRequest
from toolang_core.testing.models import text, tool_call

FAST = '[models]\ndefault = "scripted"\n[runtime]\npoll_seconds = 0.05\n'


def growing(tmp_path) -> str:
    return stdio_server("growing", "growing_server.py", str(tmp_path / "ledger"))


def serve_turns(runtime, *inputs: str) -> list[dict]:
    """Serve one turn per input, in order, on one thread; every tool result."""
    inbox = runtime.open_inbox()
    ids = [
        inbox.submit(NewTurnRequest(source="chat", thread_id="cli:t", input=i)).id for i in inputs
    ]
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    return [s.data["result"] for t in ids for s in inbox.store.steps(t) if "result" in s.data]


def growing_runtime(toolang_runtime, model, tmp_path):
    plugins = {"tools-mcp": toolang_tools_mcp, "scripted": model.plugin()}
    return toolang_runtime(FAST + growing(tmp_path), plugins=plugins)


def chat(inbox, text_in: str) -> str:
    return inbox.submit(NewTurnRequest(source="chat", thread_id="cli:t", input=text_in)).id


def tool_results(inbox, turn_id) -> list[dict]:
    return [s.data["result"] for s in inbox.store.steps(turn_id) if "result" in s.data]


def test_a_tool_the_server_adds_at_run_time_is_called_by_the_agent(
    toolang_runtime, toolang_home, toolang_scripted_model, tmp_path
):
    model = toolang_scripted_model(
        [
            tool_call("growing_grow", {"name": "fresh"}),
            text("grown"),
            tool_call("growing_fresh", {}),
            text("used it"),
        ]
    )
    runtime = toolang_runtime(
        FAST + growing(tmp_path),
        plugins={"tools-mcp": toolang_tools_mcp, "scripted": model.plugin()},
    )
    inbox = runtime.open_inbox()
    with serving(runtime):
        assert "growing_fresh" not in runtime.components.tools
        first = chat(inbox, "grow a tool")
        finished(inbox, first)
        # the server announced its new tool; the plugin listed its tools again
        wait_for("growing_fresh", lambda: "growing_fresh" in runtime.components.tools)
        second = chat(inbox, "use it")
        finished(inbox, second)
    (grew,) = tool_results(inbox, first)
    assert grew["ok"] is True, grew
    assert "growing_fresh" not in {s.name for s in model.calls[0].tools}
    assert "growing_fresh" in {s.name for s in model.calls[2].tools}  # the next turn's list
    (fresh,) = tool_results(inbox, second)
    assert fresh["ok"] is True, fresh
    assert fresh["output"]["text"] == "fresh was made at run time"


def test_a_tool_the_server_removes_at_run_time_fails_naming_the_server(
    toolang_runtime, toolang_home, toolang_scripted_model, tmp_path
):
    model = toolang_scripted_model(
        [
            tool_call("growing_doomed", {}),
            tool_call("growing_shrink", {"name": "doomed"}),
            text("shrunk"),
            tool_call("growing_doomed", {}),
            text("done"),
        ]
    )
    runtime = toolang_runtime(
        FAST + growing(tmp_path),
        plugins={"tools-mcp": toolang_tools_mcp, "scripted": model.plugin()},
    )
    inbox = runtime.open_inbox()
    with serving(runtime):
        first = chat(inbox, "shrink")
        finished(inbox, first)
        wait_for(
            "growing_doomed withdrawn", lambda: "growing_doomed" not in runtime.components.tools
        )
        second = chat(inbox, "call it")
        finished(inbox, second)
    before, shrunk = tool_results(inbox, first)
    assert before["output"]["text"] == "still here"
    assert shrunk["ok"] is True, shrunk
    (after,) = tool_results(inbox, second)
    assert (after["ok"], after["error_type"]) == (False, "unknown_tool")
    assert after["error"] == (
        "tool 'growing_doomed' was withdrawn by plugin 'tools-mcp' while the runtime ran "
        "(MCP server 'growing' no longer lists it)"
    )


def test_servers_come_from_the_runtimes_own_configuration_not_the_working_directory(
    toolang_home, toolang_scripted_model, tmp_path, monkeypatch
):
    """``toolang --config elsewhere.toml``: the runtime's configuration is elsewhere;
    ``./toolang.toml`` (the working directory's) names no server."""
    monkeypatch.delenv("TOOLANG_CONFIG", raising=False)
    monkeypatch.chdir(toolang_home.path)
    toolang_home.write_config("")  # ./toolang.toml: no MCP servers
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "toolang.toml").write_text(
        '[models]\ndefault = "scripted"\n' + growing(tmp_path), encoding="utf-8"
    )
    model = toolang_scripted_model([tool_call("growing_doomed", {}), text("done")])
    runtime = Runtime.with_plugins(
        load_config(elsewhere / "toolang.toml", env={}),
        [("tools-mcp", toolang_tools_mcp), ("scripted", model.plugin())],
        env={},
    )
    assert "growing_doomed" in offered_tools(runtime)
    (result,) = serve_turns(runtime, "call it")
    assert result["output"]["text"] == "still here", result


def test_mcp_list_reads_the_configuration_given_with_config(toolang_home, toolang_cli, tmp_path):
    toolang_home.write_config("")  # ./toolang.toml: no MCP servers
    elsewhere = tmp_path / "elsewhere.toml"
    elsewhere.write_text(growing(tmp_path), encoding="utf-8")
    done = toolang_cli(
        "--config",
        str(elsewhere),
        "mcp",
        "list",
        "--json",
        env={"TOOLANG_LOAD_PLUGINS": "tools-mcp"},
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)
    assert (row["server"], row["state"]) == ("growing", "available")
    assert {t["name"] for t in row["tools"]} == {"growing_grow", "growing_shrink", "growing_doomed"}
