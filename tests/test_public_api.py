"""Plugins use only toolang_core's public API, and that API is importable."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import pkgutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

import toolang_core
import toolang_core.cli
import toolang_core.memory
import toolang_core.memory.kit
import toolang_core.store
import toolang_core.store.backend
import toolang_core.testing

ROOT = Path(__file__).resolve().parents[1]
# toolang_core.store: the execution-store contract, for every plugin;
# toolang_core.store.backend: what the built-in backends share, for store backends only;
# toolang_core.memory.kit: what the built-in memory plugins share, for memory plugins only.
PUBLIC_MODULES = {
    "toolang_core",
    "toolang_core.models",
    "toolang_core.memory",
    "toolang_core.memory.kit",
    "toolang_core.cli",
    "toolang_core.store",
    "toolang_core.store.backend",
}
PUBLIC_PACKAGES = ("toolang_core.testing",)  # the plugin-author kit, for plugins' tests


def _private_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules = [node.module]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            continue
        for module in modules:
            if not module.startswith("toolang_core"):
                continue
            if module in PUBLIC_MODULES or module.startswith(PUBLIC_PACKAGES):
                continue
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {module}")
    return found


def test_plugins_import_only_the_public_api():
    sources = sorted(ROOT.glob("plugins/*/toolang_*/**/*.py"))
    assert sources, "no plugin sources found"
    private = [hit for path in sources for hit in _private_imports(path)]
    assert private == [], "plugins import private toolang_core modules:\n" + "\n".join(private)


@pytest.mark.parametrize(
    "module",
    [
        toolang_core,
        toolang_core.cli,
        toolang_core.memory,
        toolang_core.memory.kit,
        toolang_core.store,
        toolang_core.store.backend,
    ],
    ids=lambda m: m.__name__,
)
def test_every_public_name_resolves_to_its_object_even_after_every_module_is_imported(module):
    # A submodule named like an export would replace it on the package once imported.
    for path in sorted((ROOT / "toolang_core").rglob("*.py")):
        dotted = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        if not dotted.endswith("__main__"):
            importlib.import_module(dotted.removesuffix(".__init__"))
    for name in module.__all__:
        value = getattr(module, name)
        assert not isinstance(value, types.ModuleType), f"{module.__name__}.{name} is a module"


STORE_CONTRACT = [
    # The protocol and its values.
    "ACTIVE",
    "TERMINAL",
    "CancelResult",
    "ExecutionStore",
    "Finish",
    "GroupCount",
    "Heartbeat",
    "NewTurnRequest",
    "Overflow",
    "PastTurn",
    "Record",
    "RecordWrite",
    "Recovery",
    "RunRecord",
    "StepRecord",
    "Strategy",
    "SubmitResult",
    "SubmitRules",
    "ThreadInfo",
    "TurnFilter",
    "TurnRequest",
    "TurnStatus",
    "Usage",
    "UsageFilter",
    "Waker",
    "rank_for",
    # Its errors.
    "NotThreadOwner",
    "RecordConflict",
    "StoreBusy",
    "StoreCorrupt",
    "StoreError",
    "StoreMissing",
    "StoreNeedsMigration",
    "StoreReplaced",
    "StoreSchemaTooNew",
    "StoreUnavailable",
    "SubmitRejected",
    "TurnNotFound",
    # The owner rules (toolang_core.store.owners).
    "check_thread",
    "is_own",
    "may_see",
    "sees_every_owner",
    "threads_seen_by",
]


def test_the_store_contract_every_plugin_sees_is_this_list_and_no_more():
    # Issue #32: helpers exported for one backend grew this namespace from 32 names to
    # 77. A backend's helpers belong in toolang_core.store.backend; a name added here is
    # a contract every plugin may come to rely on, so it is added to this list on purpose.
    assert sorted(toolang_core.store.__all__) == sorted(STORE_CONTRACT)
    assert not set(toolang_core.store.__all__) & set(toolang_core.store.backend.__all__)


def test_a_name_moved_to_the_backend_namespace_still_imports_from_the_old_place_and_warns():
    with pytest.warns(DeprecationWarning, match=r"toolang_core\.store\.backend") as caught:
        from toolang_core.store import plan_submit
    assert plan_submit is toolang_core.store.backend.plan_submit
    assert "removed in 0.3" in str(caught[0].message)
    for name in toolang_core.store.backend.__all__:
        with pytest.warns(DeprecationWarning, match=name):
            assert getattr(toolang_core.store, name) is getattr(toolang_core.store.backend, name)
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        toolang_core.store.no_such_name


# -- The API snapshot (api/toolang_core.api.txt, tools/api_snapshot.py) ---------------

SNAPSHOT = ROOT / "api" / "toolang_core.api.txt"
PROBE = "toolang_core.api_probe"  # a throwaway module, only ever in sys.modules


def _load_tool() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(
        "api_snapshot", ROOT / "tools" / "api_snapshot.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


tool = _load_tool()


def test_the_public_api_is_the_checked_in_snapshot():
    problem = tool.compare(SNAPSHOT.read_text(encoding="utf-8"), tool.snapshot())
    if problem:
        pytest.fail(problem, pytrace=False)


def test_the_snapshot_was_taken_at_the_version_the_package_carries():
    recorded = tool.recorded_version(SNAPSHOT.read_text(encoding="utf-8"))
    assert recorded == toolang_core.__version__, (
        f"{SNAPSHOT.relative_to(ROOT)} was taken at {recorded}; toolang_core is "
        f"{toolang_core.__version__}: regenerate it ({tool.COMMAND})"
    )


def test_the_snapshot_covers_every_module_plugins_may_import():
    testing = {
        f"toolang_core.testing.{info.name}"
        for info in pkgutil.iter_modules(toolang_core.testing.__path__)
    }
    missing = (PUBLIC_MODULES | set(PUBLIC_PACKAGES) | testing) - set(tool.NAMESPACES)
    assert missing == set(), "public modules the snapshot leaves out (add them to NAMESPACES)"


def test_docs_name_every_namespace_the_snapshot_lists():
    text = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    unnamed = [
        name
        for name in tool.NAMESPACES
        if not name.startswith("toolang_core.testing.")
        and f"`{name}`" not in text
        and f"`{name.removeprefix('toolang_core')}`" not in text
    ]
    assert unnamed == [], "docs/plugins.md, 'What exactly is public', does not name these"


def test_the_snapshot_is_the_same_in_a_fresh_process_with_another_hash_seed():
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    printed = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "api_snapshot.py")],
        capture_output=True, text=True, check=True, env=env, cwd=ROOT.parent,
    ).stdout  # fmt: skip
    assert printed == tool.snapshot()


RESOLVED_FIRST = """
import attrs, runpy, sys
import toolang_core, toolang_core.config
for module in (toolang_core, toolang_core.config):
    for value in vars(module).values():
        if isinstance(value, type) and attrs.has(value):
            attrs.resolve_types(value)  # as cattrs does when it first structures a class
sys.argv = ["api_snapshot.py"]
runpy.run_path({tool!r}, run_name="__main__")
"""


def test_the_snapshot_is_the_same_after_attrs_resolved_the_types():
    # A process that has structured configuration (cattrs) holds resolved field types:
    # the snapshot is written from the annotations as the source spells them.
    script = RESOLVED_FIRST.format(tool=str(ROOT / "tools" / "api_snapshot.py"))
    printed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT.parent
    ).stdout
    assert printed == SNAPSHOT.read_text(encoding="utf-8")


def test_check_exits_non_zero_with_the_diff_and_how_to_change_the_contract(tmp_path):
    lines = SNAPSHOT.read_text(encoding="utf-8").splitlines(keepends=True)
    removed = next(line for line in lines if line.startswith("toolang_core.redact: "))
    stale = tmp_path / "api.txt"
    stale.write_text("".join(line for line in lines if line != removed), encoding="utf-8")
    command = [sys.executable, str(ROOT / "tools" / "api_snapshot.py"), "--check", "--file"]
    checked = subprocess.run([*command, str(stale)], check=False, capture_output=True, text=True)
    assert checked.returncode == 1
    assert f"\n+{removed}" in checked.stderr
    assert "python tools/api_snapshot.py --write" in checked.stderr
    assert "CHANGELOG.md" in checked.stderr
    current = subprocess.run([*command, str(SNAPSHOT)], check=False, capture_output=True, text=True)
    assert current.returncode == 0, current.stderr


def test_a_removed_public_name_is_caught(monkeypatch):
    before = tool.snapshot()
    monkeypatch.setattr(toolang_core, "__all__", [n for n in toolang_core.__all__ if n != "redact"])
    problem = tool.compare(before, tool.snapshot())
    assert "\n-toolang_core.redact: function(value: Any, *, key: str | None = None)" in problem
    assert "A public contract changed" in problem
    assert "python tools/api_snapshot.py --write" in problem
    assert "'## Unreleased'" in problem


def _probe(tmp_path, monkeypatch, tag: str, source: str) -> types.ModuleType:
    """Module ``PROBE`` made from ``source``, written under ``tmp_path/tag``."""
    path = tmp_path / tag / "api_probe.py"
    path.parent.mkdir()
    path.write_text("from __future__ import annotations\nimport attrs\n" + source)
    spec = importlib.util.spec_from_file_location(PROBE, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, PROBE, module)
    spec.loader.exec_module(module)
    return module


def _probe_snapshot(tmp_path, monkeypatch, tag: str, source: str) -> str:
    _probe(tmp_path, monkeypatch, tag, source)
    return tool.render([PROBE], [], toolang_core.__version__)


PROBE_API = """
__all__ = ["Job", "fetch"]

@attrs.frozen
class Job:
    name: str
    retries: int = 0

    def run(self, *, dry: bool = False) -> str:
        return self.name

def fetch(key: str, *, timeout: float = 1.0) -> bytes:
    return b""
"""


def test_the_probe_module_is_described_as_expected(tmp_path, monkeypatch):
    text = _probe_snapshot(tmp_path, monkeypatch, "a", PROBE_API)
    assert text.splitlines()[-6:] == [
        f"{PROBE}.Job: class [attrs frozen]",
        f"{PROBE}.Job.name: field: str",
        f"{PROBE}.Job.retries: field: int = 0",
        f"{PROBE}.Job.run: method(*, dry: bool = False) -> str",
        f"{PROBE}.fetch: function(key: str, *, timeout: float = 1.0) -> bytes",
        "",
    ]


def test_a_changed_signature_is_caught(tmp_path, monkeypatch):
    before = _probe_snapshot(tmp_path, monkeypatch, "before", PROBE_API)
    changed = PROBE_API.replace("timeout: float = 1.0", "timeout: float = 2.0")
    after = _probe_snapshot(tmp_path, monkeypatch, "after", changed)
    problem = tool.compare(before, after)
    assert f"\n-{PROBE}.fetch: function(key: str, *, timeout: float = 1.0) -> bytes\n" in problem
    assert f"\n+{PROBE}.fetch: function(key: str, *, timeout: float = 2.0) -> bytes\n" in problem


def test_a_new_attrs_field_is_caught(tmp_path, monkeypatch):
    before = _probe_snapshot(tmp_path, monkeypatch, "before", PROBE_API)
    grown = PROBE_API.replace("    retries: int = 0\n", "    retries: int = 0\n    tag: str = ''\n")
    after = _probe_snapshot(tmp_path, monkeypatch, "after", grown)
    added = [line for line in tool.compare(before, after).splitlines() if line.startswith("+")]
    assert added[1:] == [f"+{PROBE}.Job.tag: field: str = ''"]  # after the +++ header


def test_a_removed_name_of_a_module_is_caught(tmp_path, monkeypatch):
    before = _probe_snapshot(tmp_path, monkeypatch, "before", PROBE_API)
    after = _probe_snapshot(
        tmp_path, monkeypatch, "after", PROBE_API.replace('["Job", "fetch"]', '["Job"]')
    )
    removed = [line for line in tool.compare(before, after).splitlines() if line.startswith("-")]
    assert removed[1:] == [f"-{PROBE}.fetch: function(key: str, *, timeout: float = 1.0) -> bytes"]


def test_a_changed_calling_rule_is_caught(monkeypatch):
    from toolang_core.hookspecs import rules

    before = tool.snapshot()
    monkeypatch.setitem(rules.DECLARED, "toolang_on_event", rules.Declared(rules.FILTER, True))
    problem = tool.compare(before, tool.snapshot())
    assert "\n-hook toolang_on_event(event: Event, runtime: RuntimeView)" in problem
    changed = next(line for line in problem.splitlines() if line.startswith("+hook"))
    assert "rule=fail-closed filter; awaited=yes" in changed


PROBE_HOOKS = '''
from toolang_core.markers import hookspec

@hookspec
def toolang_probe_seen(item: str) -> None:
    """Called for each item."""
'''


def test_a_hookspec_that_becomes_firstresult_or_historic_is_caught(tmp_path, monkeypatch):
    from toolang_core.hookspecs.rules import BROADCAST, Declared

    declared = {"toolang_probe_seen": Declared(BROADCAST, True)}
    module = _probe(tmp_path, monkeypatch, "before", PROBE_HOOKS)
    before = tool.hook_lines([("probe", module)], declared)
    for option in ("firstresult", "historic"):
        after_source = PROBE_HOOKS.replace("@hookspec", f"@hookspec({option}=True)")
        module = _probe(tmp_path, monkeypatch, f"with-{option}", after_source)
        after = tool.hook_lines([("probe", module)], declared)
        assert f"{option}=no" in before[-1]
        assert after == [before[0], before[-1].replace(f"{option}=no", f"{option}=yes")]


def test_a_version_bump_without_a_new_snapshot_says_to_regenerate():
    text = SNAPSHOT.read_text(encoding="utf-8")
    bumped = text.replace(f"version: {toolang_core.__version__}\n", "version: 9.9.0\n")
    problem = tool.compare(text, bumped)
    assert f"was taken at version {toolang_core.__version__}; toolang_core is now 9.9.0" in problem
    assert "A public contract changed" not in problem
    assert "python tools/api_snapshot.py --write" in problem


def test_what_a_registry_holds_while_the_process_runs_is_not_in_the_snapshot(monkeypatch):
    # Module-level mutable state (the parked-turn kit's gates) fills as tests run; only
    # its type is listed, so the snapshot is the same in a process that used it.
    import asyncio

    from toolang_core.testing import parked_turns

    before = tool.snapshot()
    monkeypatch.setitem(parked_turns.GATES, "held", asyncio.Event())
    assert tool.snapshot() == before
    assert "parked_turns.GATES: constant: dict[str, Event]\n" in before
