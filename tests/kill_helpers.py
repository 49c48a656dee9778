"""What the kill-and-restart tests share: a tool with a side effect a test can count,
the scripted model's steps, and waiting on a condition across processes."""

from __future__ import annotations

import json
import time
from pathlib import Path

from toolang_core.testing.dists import make_distribution

TOOL_MODULE = '''
import os
from toolang_core import Tool, hookimpl


def count_visit(label: str) -> str:
    """Append a line to $COUNTER_FILE: a side effect a test can count.

    :param label: what to write
    """
    with open(os.environ["COUNTER_FILE"], "a", encoding="utf-8") as f:
        f.write(label + "\\n")
    return f"visited {label}"


@hookimpl
def toolang_register_tools(register):
    register(Tool.from_function(count_visit))
'''


def write_script(path: Path, final_delay: float) -> None:
    steps = [
        {"tool_calls": [{"id": "c1", "name": "count_visit", "params": {"label": "side-effect"}}]},
        {"text": "the visit is done", "delay": final_delay},
    ]
    path.write_text(json.dumps(steps), encoding="utf-8")


def install_kit(site: Path) -> None:
    """A real distribution in ``site``: the file-scripted model and the counting tool."""
    make_distribution(
        site,
        "toolang-test-kit",
        entry_points={
            "toolang": {
                "scripted": "toolang_core.testing.script_file_plugin",
                "counter-tool": "counter_tool",
            }
        },
        modules={"counter_tool": TOOL_MODULE},
    )


def wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")
