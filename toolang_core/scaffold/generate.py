"""Write a new plugin distribution: pyproject with its entry point, a hook, a test."""

from __future__ import annotations

import re
from pathlib import Path

import attrs

from toolang_core.errors import UsageError
from toolang_core.scaffold import templates

FAMILIES: tuple[str, ...] = tuple(templates.FAMILY_TEMPLATES)
_NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


@attrs.frozen
class PluginNames:
    """The names one plugin goes by, all derived from its family and short name."""

    family: str
    name: str

    @property
    def distribution(self) -> str:
        return f"toolang-{self.family}-{self.name}"

    @property
    def entry_point(self) -> str:
        return f"{self.family}-{self.name}"

    @property
    def package(self) -> str:
        return self.distribution.replace("-", "_")

    @property
    def ident(self) -> str:
        return self.name.replace("-", "_")


def scaffold_plugin(plugins_dir: Path, family: str, name: str) -> Path:
    """Create ``plugins_dir/toolang-<family>-<name>/`` and return its path.

    :raises UsageError: for an unknown family, a malformed name or an existing directory.
    """
    if family not in templates.FAMILY_TEMPLATES:
        raise UsageError(f"unknown plugin family {family!r}; choose one of {', '.join(FAMILIES)}")
    if not _NAME.match(name):
        raise UsageError(
            f"plugin name {name!r} must be lowercase letters and digits, words joined by '-'"
        )
    names = PluginNames(family, name)
    root = plugins_dir / names.distribution
    if root.exists():
        raise UsageError(f"{root} already exists")
    values = {
        "distribution": names.distribution,
        "entry_point": names.entry_point,
        "package": names.package,
        "ident": names.ident,
        "family": family,
        "name": name,
        "class_name": "".join(part.title() for part in name.split("-")),
    }
    module, test = templates.FAMILY_TEMPLATES[family]
    files = {
        "pyproject.toml": templates.PYPROJECT,
        "README.md": templates.README,
        f"{names.package}/__init__.py": module,
        f"tests/test_{names.package}.py": test,
    }
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.format(**values), encoding="utf-8")
    return root
