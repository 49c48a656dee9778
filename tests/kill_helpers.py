"""What the kill-and-restart tests share: a tool with a side effect a test can count,
the scripted model's steps, and waiting on a condition across processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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


EFFECT_TOOL_MODULE = '''
import os
import random
import time
from pathlib import Path

from toolang_core import Tool, ToolCallContext, hookimpl


def _effect(file: str, label: str, context: ToolCallContext | None) -> str:
    """Wait while $EFFECT_DIR/gate-<label> exists (having created
    $EFFECT_DIR/at-gate-<label>: the function is running), append one line (turn, label,
    idempotency key) to $EFFECT_DIR/<file>, then linger $EFFECT_LINGER_SECONDS: the
    window in which a crash leaves the call in doubt with its effect done."""
    assert context is not None
    folder = Path(os.environ["EFFECT_DIR"])
    (folder / f"at-gate-{label}").touch()
    deadline = time.monotonic() + 120
    while (folder / f"gate-{label}").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(random.uniform(0, float(os.environ.get("EFFECT_JITTER_SECONDS", "0"))))
    with open(folder / file, "a", encoding="utf-8") as f:
        f.write(f"{context.turn_id}\\t{label}\\t{context.idempotency_key}\\n")
    time.sleep(float(os.environ.get("EFFECT_LINGER_SECONDS", "0")))
    return f"{label} done"


def append_once(label: str, context: ToolCallContext | None = None) -> str:
    """Append a line to once.txt: an effect that must not happen twice.

    :param label: what to write
    """
    return _effect("once.txt", label, context)


def append_idempotent(label: str, context: ToolCallContext | None = None) -> str:
    """Append a line to idem.txt, keyed by the call's idempotency key.

    :param label: what to write
    """
    return _effect("idem.txt", label, context)


@hookimpl
def toolang_register_tools(register):
    register(Tool.from_function(append_once))
    register(Tool.from_function(append_idempotent, idempotent=True))
'''
"""Two tools with a side effect a test can count per turn: ``append_once`` (not
idempotent) and ``append_idempotent`` (declared idempotent)."""


def install_effects_kit(site: Path) -> None:
    """A real distribution in ``site``: the file-scripted model and the effect tools."""
    make_distribution(
        site,
        "toolang-test-effects",
        entry_points={
            "toolang": {
                "scripted": "toolang_core.testing.script_file_plugin",
                "effect-tools": "effect_tools",
            }
        },
        modules={"effect_tools": EFFECT_TOOL_MODULE},
    )


def effect_lines(path: Path) -> list[tuple[str, str, str]]:
    """``(turn id, label, idempotency key)`` per line an effect tool wrote to ``path``."""
    if not path.exists():
        return []
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]
    return [(r[0], r[1], r[2]) for r in rows if len(r) == 3]


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


def kit_environment(home: Path, site: Path, **extra: str) -> dict[str, str]:
    """This process's environment without its ``TOOLANG_*`` settings, loading the kit in
    ``site`` (the file-scripted model reading ``home/script.json``, the counting tool
    writing ``home/counter.txt``); ``extra`` adds or replaces variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    env.update(
        TOOLANG_LOAD_PLUGINS="scripted,counter-tool",
        TOOLANG_SCRIPT=str(home / "script.json"),
        COUNTER_FILE=str(home / "counter.txt"),
        PYTHONPATH=os.pathsep.join([str(site), env.get("PYTHONPATH", "")]),
    )
    env.update(extra)
    return env


def start_kit_runtime(
    home: Path, env: dict[str, str], *extra: str, stdout: int | None = subprocess.PIPE
) -> subprocess.Popen[str]:
    """A real ``toolang run --no-sources`` in ``home`` with ``env`` (see
    :func:`kit_environment`); ``extra`` are more arguments (``--until-idle``)."""
    return subprocess.Popen(
        [sys.executable, "-m", "toolang_core", "run", "--no-sources", *extra],
        cwd=home,
        env=env,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
    )
