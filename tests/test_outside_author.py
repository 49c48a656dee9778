"""The outside plugin author's path, end to end, outside the repository's tree.

Done means (issue 22): from the wheelhouse (conftest's ``wheelhouse``, built once per
session), an author with no toolang checkout scaffolds a standalone plugin of each
family with the ``toolang`` and toolang-authoring installed from that wheelhouse, runs
the plugin's own tox env — tox makes a fresh virtual environment, installs toolang-core from
``TOOLANG_FIND_LINKS`` and the plugin's built wheel, and runs the plugin's tests with the
shipped fixtures and conformance suites — and then uses the installed plugin in real
``toolang`` processes of that environment: the tool called by its agent through a turn
(scripted model), the source placing a turn that ``toolang run`` completes, the memory
remembering a turn's exchange, the model answering.

One runner environment (toolang-core from the wheelhouse, tox and tox-uv from the
package index) is shared by every family; each family gets its own tox environment.
It needs the package index for everything that is not toolang.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import venv
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import toolang_core
from toolang_core.testing import make_distribution

pytestmark = pytest.mark.slow

OUTER = ("TOOLANG_", "VIRTUAL_ENV", "PYTHONPATH", "TOX_", "PIP_", "UV_")
"""Environment variables of this test's own environment (and of the tox running it,
whose TOX_WORK_DIR and the like the plugin's tox would obey) that must not reach the
outside author's commands."""

STANDALONE_FAMILIES = ("tools", "hook", "events", "source", "memory", "model")
"""toolang-authoring's ``STANDALONE_FAMILIES`` (checked against the installed one below):
written out because the core's own env, which runs this test, does not have the plugin."""

SERIES = "toolang{}{}".format(*toolang_core.__version__.split(".")[:2])
"""The core's release series as the standalone tox.ini's factor (``toolang02``)."""

NAME = "demo"
"""The plugins' short name: toolang-<family>-demo, entry point <family>-demo, ident demo."""


def run(
    *args: str | Path, cwd: Path, env: Mapping[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(OUTER)}
    return subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, f"{result.args}\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Path) -> Path:
    """The author's own environment: toolang from the wheelhouse, tox from the index."""
    env_dir = tmp_path_factory.mktemp("author") / "venv"
    venv.create(env_dir, with_pip=True)
    work = env_dir.parent
    ok(run(env_dir / "bin" / "python", "-m", "pip", "install", "-q", "uv", cwd=work))
    ok(
        run(
            env_dir / "bin" / "uv", "pip", "install", "-q", "--python", env_dir / "bin" / "python",
            "--find-links", wheelhouse, "toolang-core", "toolang-authoring", "tox", "tox-uv",
            cwd=work,
        )
    )  # fmt: skip
    return env_dir / "bin"


class Plugin:
    """One scaffolded plugin, tested by its own tox, and the environment tox made."""

    def __init__(self, root: Path, family: str, tox_output: str) -> None:
        self.root = root
        self.family = family
        self.tox_output = tox_output
        self.bin = root / ".tox" / SERIES / "bin"
        self.home = root.parent / f"home-{family}"
        self.home.mkdir()
        self.site = root.parent / f"site-{family}"
        self.env: dict[str, str] = {}

    def toolang(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        env = {**self.env, "PYTHONPATH": str(self.site)} if self.site.is_dir() else self.env
        return run(self.bin / "toolang", *args, cwd=self.home, env=env, timeout=timeout)

    def json(self, *args: str) -> Any:
        return json.loads(ok(self.toolang(*args, "--json")))

    def configure(self, text: str) -> None:
        (self.home / "toolang.toml").write_text(text, encoding="utf-8")

    def use_scripted_model(self, steps: list[dict[str, Any]]) -> None:
        """The scripted model of toolang_core.testing, offered through an entry point of a
        distribution on PYTHONPATH (the model is the one fake: it stands for a paid API)."""
        make_distribution(
            self.site,
            "toolang-test-scripted",
            entry_points={"toolang": {"scripted": "toolang_core.testing.script_file_plugin"}},
        )
        script = self.home / "script.json"
        script.write_text(json.dumps(steps), encoding="utf-8")
        self.env["TOOLANG_SCRIPT"] = str(script)

    def submit(self, text: str, *args: str) -> str:
        submitted = ok(self.toolang("submit", text, "--thread", "t1", "--source", "outside", *args))
        return str(json.loads(submitted)["id"])

    def run_until_idle(self) -> None:
        ok(self.toolang("run", "--no-sources", "--until-idle", timeout=120))

    def turn(self, turn_id: str) -> dict[str, Any]:
        shown: dict[str, Any] = self.json("turns", "show", turn_id)["turn"]
        return shown


@pytest.fixture(scope="module")
def plugins(runner: Path, wheelhouse: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """``plugins(family)``: that family's plugin, scaffolded and tested by its tox (once)."""
    made: dict[str, Plugin] = {}

    def get(family: str) -> Plugin:
        if family not in made:
            where = tmp_path_factory.mktemp(f"outside-{family}")
            ok(
                run(
                    runner / "toolang", "plugin", "new", NAME, "--family", family, "--standalone",
                    cwd=where,
                )
            )  # fmt: skip
            root = where / f"toolang-{family}-{NAME}"
            tox = run(
                runner / "tox", "-e", SERIES, cwd=root,
                env={"TOOLANG_FIND_LINKS": str(wheelhouse)}, timeout=900,
            )  # fmt: skip
            made[family] = Plugin(root, family, ok(tox))
        return made[family]

    return get


def test_the_families_tried_here_are_every_standalone_family(runner):
    code = (
        "from toolang_authoring.scaffold import STANDALONE_FAMILIES as F; "
        "from toolang_authoring.scaffold.standalone import Series; "
        "print(' '.join(F), Series.installed().factor)"
    )
    shown = ok(run(runner / "python", "-c", code, cwd=runner)).split()
    assert shown == [*STANDALONE_FAMILIES, SERIES]


@pytest.mark.parametrize("family", STANDALONE_FAMILIES)
def test_a_standalone_plugin_passes_its_own_tox_env_against_the_wheelhouse(plugins, family):
    plugin = plugins(family)
    assert " passed" in plugin.tox_output and " failed" not in plugin.tox_output
    # tox's environment is fresh and outside the tree: toolang-core is the wheelhouse's.
    where = ok(
        run(plugin.bin / "python", "-c", "import toolang_core; print(toolang_core.__file__)",
            cwd=plugin.home)
    )  # fmt: skip
    assert where.startswith(str(plugin.root / ".tox")), where
    listed = json.loads(ok(plugin.toolang("plugins")))  # JSON when not on a terminal
    (row,) = [r for r in listed if r["name"] == f"{family}-{NAME}"]
    assert (row["distribution"], row["version"], row["status"]) == (
        f"toolang-{family}-{NAME}",
        "0.1.0",
        "loaded",
    )


def test_the_installed_tool_is_called_by_its_agent_through_a_turn(plugins):
    plugin = plugins("tools")
    plugin.configure(
        '[models]\ndefault = "scripted"\n[runtime]\npoll_seconds = 0.05\n'
        "[scheduler.groups.outside]\nmax_running = 1\n"
    )
    plugin.use_scripted_model(
        [
            {"tool_calls": [{"id": "c1", "name": "demo_hello", "params": {"name": "Ada"}}]},
            {"text": "I greeted Ada."},
        ]
    )
    owners = plugin.json("agents", "tools")["tools"]
    assert (owners["demo_hello"]["agent"], owners["demo_hello"]["via"]) == (NAME, "prefix")
    doctor = plugin.toolang("doctor")
    assert "no agent owns: demo_hello" not in doctor.stdout, doctor.stdout
    turn_id = plugin.submit("greet Ada", "--agent", NAME)
    plugin.run_until_idle()
    turn = plugin.turn(turn_id)
    assert (turn["status"], turn["output"]) == ("completed", "I greeted Ada."), turn
    trace = json.dumps(plugin.json("turns", "trace", turn_id))
    assert "demo_hello" in trace and "Hello, Ada!" in trace


def test_the_installed_source_places_a_turn_that_toolang_run_completes(plugins):
    plugin = plugins("source")
    plugin.configure(
        '[runtime]\nexecutor = "echo"\npoll_seconds = 0.05\nshutdown_grace_seconds = 0\n'
        f'[plugins.source-{NAME}]\ninput = "the morning summary"\n'
    )
    proc = subprocess.Popen(
        [str(plugin.bin / "toolang"), "run", "--source", NAME],
        cwd=plugin.home,
        env={k: v for k, v in os.environ.items() if not k.startswith(OUTER)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        done: list[dict[str, Any]] = []
        while not done:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the source placed no completed turn in 60 s"
            listed = plugin.toolang("turns", "list", "--json")
            turns = json.loads(listed.stdout) if listed.returncode == 0 else []
            done = [t for t in turns if t["source"] == NAME and t["status"] == "completed"]
            time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert "source.failed" not in stderr and "source.invalid" not in stderr
    (turn,) = done
    assert (turn["thread_id"], turn["output"]) == (f"{NAME}:main", "the morning summary")


def test_the_installed_memory_remembers_a_turns_exchange(plugins):
    plugin = plugins("memory")
    plugin.configure(
        '[models]\ndefault = "scripted"\n[runtime]\npoll_seconds = 0.05\n'
        f'[memory]\nplugin = "{NAME}"\nsave_turns = ["outside"]\n'
        "[scheduler.groups.outside]\nmax_running = 1\n"
    )
    plugin.use_scripted_model([{"text": "Noted: the quokka likes figs."}])
    turn_id = plugin.submit("remember that the quokka likes figs")
    plugin.run_until_idle()
    assert plugin.turn(turn_id)["status"] == "completed"
    found = plugin.json("memory", "search", "quokka")
    assert any("quokka likes figs" in item["text"] for item in found["items"]), found
    assert (plugin.home / ".toolang" / f"{NAME}-memory.json").is_file()
    health = plugin.json("memory", "stats")
    assert health["status"] == "ok", health


def test_the_installed_model_answers_a_turn(plugins):
    plugin = plugins("model")
    plugin.configure(
        f'[models]\ndefault = "{NAME}"\n[runtime]\npoll_seconds = 0.05\n'
        "[scheduler.groups.outside]\nmax_running = 1\n"
    )
    turn_id = plugin.submit("hello there")
    plugin.run_until_idle()
    turn = plugin.turn(turn_id)
    assert (turn["status"], turn["output"]) == ("completed", f"({NAME}) hello there")
