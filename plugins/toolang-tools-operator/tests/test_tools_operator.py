"""toolang-tools-operator, alone: confinement, limits, and real turns through the chain."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

import toolang_tools_operator as plugin
from toolang_core.store.types import NewTurnRequest, TurnStatus
from toolang_tools_operator import tools
from toolang_tools_operator.workspace import OutsideWorkspace


class Ctx:
    """The slice of a ToolCallContext these tools read: the runtime's settings."""

    def __init__(self, runtime):
        self.runtime = runtime


@pytest.fixture
def ctx(toolang_runtime, tmp_path):
    runtime = toolang_runtime(
        f'[plugins.tools-operator]\nworkspace = "{tmp_path / "ws"}"\nexec_timeout_seconds = 5\n'
        "max_output_chars = 200\n",
        plugins={"tools-operator": plugin},
    )
    return Ctx(runtime)


def ws(ctx) -> Path:
    return Path(ctx.runtime.settings["tools-operator"].workspace)


def test_files_round_trip_inside_the_workspace(ctx):
    assert tools.fs_write("notes/a.txt", "hello", context=ctx) == {
        "path": "notes/a.txt",
        "bytes": 5,
    }
    tools.fs_write("notes/a.txt", " world", append=True, context=ctx)
    assert tools.fs_read("notes/a.txt", context=ctx) == "hello world"
    assert tools.fs_list("notes", context=ctx) == [{"name": "a.txt", "type": "file", "size": 11}]
    assert tools.fs_search("wor", context=ctx) == [
        {"path": "notes/a.txt", "line": 1, "text": "hello world"}
    ]


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "a/../../x", "/tmp"])
def test_paths_outside_the_workspace_are_refused(ctx, path):
    with pytest.raises(OutsideWorkspace, match="outside the workspace"):
        tools.fs_read(path, context=ctx)
    with pytest.raises(OutsideWorkspace):
        tools.fs_write(path, "x", context=ctx)


def test_symlinks_that_lead_out_are_refused(ctx, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read")
    ws(ctx).mkdir(parents=True, exist_ok=True)
    os.symlink(secret, ws(ctx) / "link.txt")
    os.symlink(tmp_path, ws(ctx) / "escape")
    with pytest.raises(OutsideWorkspace):
        tools.fs_read("link.txt", context=ctx)
    with pytest.raises(OutsideWorkspace):
        tools.fs_write("escape/new.txt", "x", context=ctx)
    assert not (tmp_path / "new.txt").exists()
    assert tools.fs_search("do not", context=ctx) == []


def exec_run(*args, **kwargs):
    return asyncio.run(tools.exec_run(*args, **kwargs))


def test_exec_runs_in_the_workspace_with_a_timeout_and_a_cap(ctx):
    tools.fs_write("sub/x.txt", "", context=ctx)
    result = exec_run("pwd && echo err >&2 && exit 3", cwd="sub", context=ctx)
    assert result["exit_code"] == 3
    assert result["stdout"].strip() == str(ws(ctx).resolve() / "sub")
    assert result["stderr"] == "err\n"
    slow = exec_run("echo started; sleep 30", timeout_seconds=0.3, context=ctx)
    assert slow["timed_out"] is True
    assert slow["stdout"] == "started\n"  # what it wrote before the limit is kept
    long = exec_run("yes | head -c 500", context=ctx)
    assert "more characters cut" in long["stdout"]
    with pytest.raises(OutsideWorkspace):
        exec_run("ls", cwd="..", context=ctx)


def test_the_schema_leaves_out_the_context(toolang_host, toolang_register):
    toolang_register(plugin, "tools-operator")
    registered = toolang_host.components.tools
    assert sorted(registered) == ["exec_run", "fs_list", "fs_read", "fs_search", "fs_write"]
    schema = registered["fs_write"].tool.parameters
    assert set(schema["properties"]) == {"path", "text", "append"}
    assert schema["required"] == ["path", "text"]


def test_a_real_turn_writes_a_file_and_an_escape_comes_back_as_an_error(
    toolang_runtime, toolang_scripted_model, tmp_path
):
    from toolang_core.testing.models import text, tool_call

    model = toolang_scripted_model(
        [
            tool_call("fs_write", {"path": "out.txt", "text": "from the agent"}),
            tool_call("fs_read", {"path": "../../etc/passwd"}),
            text("done"),
        ]
    )
    runtime = toolang_runtime(
        '[models]\ndefault = "scripted"\n'
        f'[plugins.tools-operator]\nworkspace = "{tmp_path / "w"}"\n',
        plugins={"tools-operator": plugin, "scripted": model.plugin()},
    )
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:t", input="go")).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    assert inbox.get(turn_id).status is TurnStatus.COMPLETED
    assert (tmp_path / "w" / "out.txt").read_text() == "from the agent"
    escape = inbox.store.steps(turn_id)[4].data["result"]
    assert (escape["ok"], escape["error_type"]) == (False, "OutsideWorkspace")
