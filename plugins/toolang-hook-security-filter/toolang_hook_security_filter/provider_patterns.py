"""The regexes of detect-secrets' provider-key plugins, without importing detect-secrets
when their source states them plainly.

Importing ``detect_secrets.plugins.<name>`` runs ``detect_secrets/__init__.py``, which
brings in its scanner, ``requests`` and ``urllib3`` — more than everything else a
one-shot ``toolang chat`` imports, for nine regular expressions. Each plugin class states
them as ``denylist = [re.compile(r"…"), …]``; when every one of those is a string
literal, the strings are read from the installed source with :mod:`ast`. Otherwise
(another detect-secrets release written differently) the plugins are imported and the
patterns taken from them as before: either way the installed detect-secrets decides.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
from collections.abc import Iterable
from pathlib import Path


def detect_secrets_patterns(plugins: Iterable[str]) -> list[str]:
    """The pattern strings of each ``"module.ClassName"`` of ``detect_secrets.plugins``,
    in order."""
    plugins = tuple(plugins)
    read = _read_from_source(plugins)
    return read if read is not None else _imported(plugins)


def _imported(plugins: tuple[str, ...]) -> list[str]:
    patterns: list[str] = []
    for dotted in plugins:
        module, name = dotted.rsplit(".", 1)
        plugin = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)
        patterns.extend(p.pattern for p in plugin.denylist)
    return patterns


def _read_from_source(plugins: tuple[str, ...]) -> list[str] | None:
    """The patterns read from the plugins' source; ``None`` when any is not stated as
    literals in its class body (or the source cannot be found or read)."""
    try:
        spec = importlib.util.find_spec("detect_secrets")  # finds, does not import
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / "plugins"
    patterns: list[str] = []
    for dotted in plugins:
        module, name = dotted.rsplit(".", 1)
        try:
            tree = ast.parse((folder / f"{module}.py").read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            return None
        found = _denylist(tree, name)
        if found is None:
            return None
        patterns.extend(found)
    return patterns


def _denylist(tree: ast.Module, class_name: str) -> list[str] | None:
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name]
    if len(classes) != 1:
        return None
    assigned = [
        statement.value
        for statement in classes[0].body
        if isinstance(statement, ast.Assign)
        and [ast.unparse(t) for t in statement.targets] == ["denylist"]
    ]
    if len(assigned) != 1 or not isinstance(assigned[0], ast.List | ast.Tuple):
        return None
    patterns = []
    for item in assigned[0].elts:
        if not (
            isinstance(item, ast.Call)
            and ast.unparse(item.func) == "re.compile"
            and len(item.args) == 1
            and not item.keywords
            and isinstance(item.args[0], ast.Constant)
            and isinstance(item.args[0].value, str)
        ):
            return None
        patterns.append(item.args[0].value)
    return patterns
