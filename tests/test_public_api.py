"""Plugins use only toolang_core's public API, and that API is importable."""

from __future__ import annotations

import ast
import importlib
import types
from pathlib import Path

import pytest

import toolang_core
import toolang_core.cli
import toolang_core.memory
import toolang_core.store
import toolang_core.store.backend

ROOT = Path(__file__).resolve().parents[1]
# toolang_core.store: the execution-store contract, for every plugin;
# toolang_core.store.backend: what the built-in backends share, for store backends only.
PUBLIC_MODULES = {
    "toolang_core",
    "toolang_core.models",
    "toolang_core.memory",
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
