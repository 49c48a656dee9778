"""Write a new plugin distribution: pyproject with its entry point, a hook, a test.

In-tree (the default) it is a directory under a toolang checkout's ``plugins/``;
``standalone`` makes it a repository of its own (:mod:`toolang_authoring.scaffold.standalone`).
"""

from __future__ import annotations

import re
import string
from pathlib import Path

import attrs

from toolang_authoring.scaffold import standalone as standalone_files, templates, working
from toolang_core import UsageError

FAMILY_TEMPLATES: dict[str, tuple[str, str]] = {
    "tools": (templates.TOOLS_MODULE, templates.TOOLS_TEST),
    "hook": (templates.HOOK_MODULE, templates.HOOK_TEST),
    "events": (templates.EVENTS_MODULE, templates.EVENTS_TEST),
    "source": (working.SOURCE_MODULE, working.SOURCE_TEST),
    "memory": (working.MEMORY_MODULE, working.MEMORY_TEST),
    "model": (working.MODEL_MODULE, working.MODEL_TEST),
    "store": templates.STORE,
}
FAMILIES: tuple[str, ...] = tuple(FAMILY_TEMPLATES)
STANDALONE_FAMILIES: tuple[str, ...] = tuple(f for f in FAMILIES if f != "store")
"""A store stub cannot work as generated (an execution store is a large contract):
start a store from toolang-store-postgres instead."""
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


def scaffold_plugin(plugins_dir: Path, family: str, name: str, *, standalone: bool = False) -> Path:
    """Create ``plugins_dir/toolang-<family>-<name>/`` and return its path.

    ``standalone`` adds what a repository of its own needs: a pyproject pinning the
    running toolang-core's release series, a tox.ini, a CI workflow, a README and a
    .gitignore.

    :raises UsageError: for an unknown family, a malformed name, an existing directory,
        or a family that has no standalone template.
    """
    if family not in FAMILY_TEMPLATES:
        raise UsageError(f"unknown plugin family {family!r}; choose one of {', '.join(FAMILIES)}")
    if standalone and family not in STANDALONE_FAMILIES:
        raise UsageError(
            f"--standalone does not support the {family!r} family (choose one of "
            f"{', '.join(STANDALONE_FAMILIES)}); start a store from toolang-store-postgres"
        )
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
    module, test = FAMILY_TEMPLATES[family]
    files = {"pyproject.toml": templates.PYPROJECT, "README.md": templates.README}
    # Both kinds pin the release series of the toolang-core running this command.
    values |= standalone_files.values(standalone_files.Series.installed())
    if standalone:
        files = standalone_files.files()
    files |= {f"{names.package}/__init__.py": module, f"tests/test_{names.package}.py": test}
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(string.Template(text).substitute(values), encoding="utf-8")
    return root
