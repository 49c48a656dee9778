"""toolang's pytest plugin: ``toolang_*`` fixtures for testing plugins and the core.

Loaded automatically (``pytest11`` entry point) wherever toolang-core is installed.
It imports nothing from toolang at collection time and defines no autouse fixtures,
so it never changes a test suite that does not ask for its fixtures.

Fixtures:

``toolang_pm``
    A fresh plugin manager with every toolang hook specification and no plugins.
``toolang_host``
    A fresh :class:`~toolang_core.plugins.PluginHost` that loaded no entry points.
``toolang_register``
    ``register(plugin, name)`` registers a plugin in ``toolang_host`` for one test
    and unregisters it afterwards; returns the plugin's record. A plugin the host
    refuses (a misspelled hook, an ``async def`` registration hook, …) raises
    :class:`~toolang_core.errors.PluginError` saying why — to test a refusal, call
    ``toolang_host.register`` and read the record.
``toolang_home``
    A temporary directory with a ``toolang.toml``: ``write_config(text)``,
    ``load()`` → the validated configuration.
``toolang_distribution``
    ``make(name, version, entry_points=…, modules=…)`` creates a real distribution on a
    temporary ``sys.path`` entry, for entry-point tests.
``toolang_runtime``
    ``make(config_text, plugins={name: plugin})`` builds a real runtime over a temporary
    home (SQLite store, built-in plugins plus ``plugins``, no entry points).
``toolang_cli``
    ``run(*args, env=…)`` runs the real ``toolang`` command in a subprocess in the
    ``toolang_home`` directory and returns the completed process.
``toolang_scripted_model``
    ``make(steps)`` returns a :class:`~toolang_core.testing.models.ScriptedModel`
    (``model.plugin()`` offers it as model provider ``scripted``) and checks after the
    test that every step was used.

Real model calls are blocked for the test session (``TOOLANG_ALLOW_MODEL_REQUESTS=0``)
unless the ini option ``toolang_block_model_requests`` is ``false``. After each test, the
redaction policy in effect is reset to the core's own rules: a policy a test put in
effect (``toolang_core.redaction.use_policy`` / ``use_detectors``) and did not undo never
changes what a later test sees. (A runtime's own policy is in effect only while it
serves.)
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    import subprocess

    from toolang_core.config.model import ToolangConfig
    from toolang_core.plugins.host import PluginHost
    from toolang_core.plugins.manager import ToolangPluginManager
    from toolang_core.plugins.records import PluginRecord
    from toolang_core.runtime import Runtime
    from toolang_core.tools.types import ToolCallContext


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        "toolang_block_model_requests",
        "block real (networked, paid) model calls in this test session",
        type="bool",
        default=True,
    )


def pytest_configure(config: pytest.Config) -> None:
    import os

    if config.getini("toolang_block_model_requests"):
        os.environ.setdefault("TOOLANG_ALLOW_MODEL_REQUESTS", "0")


def pytest_runtest_teardown(item: pytest.Item) -> None:
    redaction = sys.modules.get("toolang_core.redaction")
    if redaction is not None:  # imported by the test: it may have left a policy in effect
        redaction.use_policy(redaction.CORE_RULES)


@pytest.fixture
def toolang_scripted_model() -> Iterator[Callable[..., Any]]:
    """``make(script, attachment_types=…)``: a :class:`ScriptedModel` whose every step
    must be used by the end of the test."""
    from toolang_core.testing.models import ScriptedModel

    made: list[ScriptedModel] = []

    def make(script: Any, **options: Any) -> ScriptedModel:
        model = ScriptedModel(script, **options)
        made.append(model)
        return model

    yield make
    for model in made:
        model.assert_complete()


@pytest.fixture
def toolang_pm() -> ToolangPluginManager:
    from toolang_core.plugins.manager import create_plugin_manager

    return create_plugin_manager()


@pytest.fixture
def toolang_host() -> PluginHost:
    from toolang_core.plugins.host import PluginHost

    return PluginHost()


@pytest.fixture
def toolang_register(toolang_host: PluginHost) -> Iterator[Callable[..., PluginRecord]]:
    undo: list[Callable[[], None]] = []

    def register(plugin: object, name: str | None = None) -> PluginRecord:
        from toolang_core.errors import PluginError
        from toolang_core.plugins.records import PluginStatus

        plugin_name = name or getattr(plugin, "__name__", None) or type(plugin).__name__
        undo.append(toolang_host.register(plugin, plugin_name))
        record = toolang_host.record(plugin_name)
        if record.status is PluginStatus.FAILED:  # never a failed plugin reported as loaded
            raise PluginError(record.failure_message())
        return record

    yield register
    for step in reversed(undo):
        step()


class ToolangHome:
    """A temporary toolang home: a directory holding ``toolang.toml`` and ``.toolang/``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.config_path = path / "toolang.toml"

    def write_config(self, text: str) -> Path:
        self.config_path.write_text(text, encoding="utf-8")
        return self.config_path

    def load(self, env: Mapping[str, str] | None = None) -> ToolangConfig:
        from toolang_core.config.loader import load_config

        return load_config(
            self.config_path, env=env if env is not None else {"HOME": str(self.path)}
        )


@pytest.fixture
def toolang_home(tmp_path: Path) -> ToolangHome:
    home = ToolangHome(tmp_path / "home")
    home.path.mkdir()
    home.write_config("")
    return home


@pytest.fixture
def toolang_distribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[..., Path]]:
    from toolang_core.testing.dists import make_distribution

    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    before = set(sys.modules)

    def make(name: str, version: str = "1.0", **kwargs: Any) -> Path:
        info = make_distribution(root, name, version, **kwargs)
        importlib.invalidate_caches()
        return info

    make.root = root  # type: ignore[attr-defined]
    yield make
    for module in set(sys.modules) - before:
        if getattr(sys.modules[module], "__file__", "") and str(root) in (
            sys.modules[module].__file__ or ""
        ):
            del sys.modules[module]


@pytest.fixture
def toolang_runtime(toolang_home: ToolangHome) -> Callable[..., Runtime]:
    from toolang_core.runtime import Runtime

    def make(
        config: str = "",
        *,
        plugins: Mapping[str, object] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> Runtime:
        toolang_home.write_config(config)
        environment = env if env is not None else {"HOME": str(toolang_home.path)}
        return Runtime.with_plugins(
            toolang_home.load(environment), (plugins or {}).items(), env=environment
        )

    return make


@pytest.fixture
def toolang_cli(toolang_home: ToolangHome) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``run(*args, env=…, input=…, timeout=120)``: the real ``toolang`` command in a
    subprocess, in ``toolang_home`` (see :func:`toolang_core.testing.cli.run_toolang`)."""
    from toolang_core.testing.cli import run_toolang

    def run(
        *args: str,
        env: Mapping[str, str] | None = None,
        input: str | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        return run_toolang(*args, cwd=toolang_home.path, env=env, input=input, timeout=timeout)

    return run


@pytest.fixture
def toolang_call_context(
    toolang_runtime: Callable[..., Runtime],
) -> Callable[..., ToolCallContext]:
    """``make(name="echo", params=None, *, runtime=None, **fields)``: the context of a
    call of tool ``name``, as a hook or a tool receives it, in ``runtime`` — by default
    one bare runtime (``toolang_runtime()``) made on first use."""
    from toolang_core.testing.runtimes import tool_call_context

    made: list[Runtime] = []

    def make(
        name: str = "echo",
        params: Mapping[str, Any] | None = None,
        *,
        runtime: Runtime | None = None,
        **fields: Any,
    ) -> ToolCallContext:
        if runtime is None:
            if not made:
                made.append(toolang_runtime())
            runtime = made[0]
        return tool_call_context(runtime, name, params, **fields)

    return make
