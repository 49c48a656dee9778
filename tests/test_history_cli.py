"""``toolang threads fork`` and ``toolang turns replay`` as a person runs them: the real
command in subprocesses, a real SQLite store, two scripted models and a tool whose side
effect leaves a marker file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolang_core.testing.cli import run_toolang
from toolang_core.testing.dists import make_distribution

CONFIG = """
[runtime]
executor = "agent"
poll_seconds = 0.05
shutdown_grace_seconds = 0.2

[models]
default = "scripted"
"""

MODULE = '''
import os
from pathlib import Path

from toolang_core import Tool, hookimpl
from toolang_core.testing.script_file_plugin import ScriptFileModel


def lookup(q: str) -> str:
    """Look something up.

    :param q: what
    """
    return f"found {q}"


def touch(path: str) -> str:
    """Leave a marker file (the side effect a replay must not have).

    :param path: where
    """
    Path(path).write_text("touched")
    return "touched"


class Other:
    def model(self, model_id):
        return ScriptFileModel(Path(os.environ["TOOLANG_SCRIPT_OTHER"]))


@hookimpl
def toolang_register_tools(register):
    register(Tool.from_function(lookup, blocking=False))
    register(Tool.from_function(touch, blocking=False))


@hookimpl
def toolang_register_models(register):
    register("other", lambda context: Other(), description="a second scripted model")
'''


@pytest.fixture
def home(tmp_path: Path) -> Path:
    make_distribution(
        tmp_path / "site",
        "toolang-test-history",
        entry_points={
            "toolang": {
                "scripted": "toolang_core.testing.script_file_plugin",
                "history-test": "history_test",
            }
        },
        modules={"history_test": MODULE},
    )
    home = tmp_path / "home"
    home.mkdir()
    (home / "toolang.toml").write_text(CONFIG)
    lookup = {"tool_calls": [{"id": "c1", "name": "lookup", "params": {"q": "x"}}]}
    (home / "script.json").write_text(json.dumps([lookup, {"text": "x is found"}]))
    touch = {"tool_calls": [{"id": "c2", "name": "touch", "params": {"path": "marker"}}]}
    (home / "other.json").write_text(json.dumps([lookup, touch, {"text": "done differently"}]))
    return home


def toolang(home: Path, *args: str, code: int = 0):
    ran = run_toolang(
        *args,
        cwd=home,
        pythonpath=[home.parent / "site"],
        env={
            "TOOLANG_LOAD_PLUGINS": "scripted,history-test",
            "TOOLANG_SCRIPT": str(home / "script.json"),
            "TOOLANG_SCRIPT_OTHER": str(home / "other.json"),
        },
        timeout=120,
    )
    assert ran.returncode == code, ran.stderr
    assert "Traceback" not in ran.stderr
    return ran


def test_replay_and_fork_from_the_command_line_and_owners_refused(home):
    turn_id = json.loads(
        toolang(home, "submit", "find x", "--thread", "cli:a", "--owner", "ada").stdout
    )["id"]
    toolang(home, "run", "--until-idle", "--no-sources")
    original = toolang(home, "turns", "show", turn_id, "--json").stdout

    replay = ("turns", "replay", turn_id, "--model", "other")
    refused = toolang(home, *replay, "--owner", "bob", code=5)
    assert "belongs to another owner" in refused.stderr
    refused = toolang(home, "threads", "fork", "cli:a", "--at", "1", code=5)  # the operator
    assert "belongs to another owner" in refused.stderr

    ran = toolang(home, *replay, "--owner", "ada", "--json")
    report = json.loads(ran.stdout)
    assert [(c["name"], c["answer"]) for c in report["calls"]] == [
        ("lookup", "recorded"),
        ("touch", "stopped"),
    ]
    assert [c["name"] for c in report["stopped"]] == ["touch"]
    assert (report["status"], report["output"]) == ("completed", "done differently")
    assert not (home / "marker").exists()  # the unrecorded call never ran
    assert toolang(home, "turns", "show", turn_id, "--json").stdout == original
    listed = json.loads(toolang(home, "turns", "list", "--thread", "cli:a", "--json").stdout)
    assert [t["id"] for t in listed] == [turn_id]  # no trace in the original thread

    ran = toolang(
        home, "threads", "fork", "cli:a", "--at", "1", "--edit-input", "find y",
        "--owner", "ada", "--json",
    )  # fmt: skip
    forked = json.loads(ran.stdout)
    assert forked["turn"]["status"] == "completed"
    assert (forked["turn"]["input"], forked["turn"]["owner"]) == ("find y", "ada")
    assert forked["fork"]["thread_id"].startswith("fork:")
    shown = toolang(home, "threads", "show", forked["fork"]["thread_id"]).stdout
    assert f"fork of cli:a at turn {turn_id}" in shown and "find y" in shown
    assert toolang(home, "turns", "show", turn_id, "--json").stdout == original
