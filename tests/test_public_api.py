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

ROOT = Path(__file__).resolve().parents[1]
# toolang_core.store: the execution-store contract, for store backends.
PUBLIC_MODULES = {
    "toolang_core",
    "toolang_core.models",
    "toolang_core.memory",
    "toolang_core.cli",
    "toolang_core.store",
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
    [toolang_core, toolang_core.cli, toolang_core.memory, toolang_core.store],
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
