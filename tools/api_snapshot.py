#!/usr/bin/env python3
"""The public API of toolang_core as a checked-in text file, one line per item.

    python tools/api_snapshot.py            # print the snapshot of the code as it is
    python tools/api_snapshot.py --write    # rewrite api/toolang_core.api.txt
    python tools/api_snapshot.py --check    # exit 1 with a unified diff when they differ

Every name of each public namespace (:data:`NAMESPACES`: ``toolang_core`` and the
documented modules, their ``__all__`` or, without one, the names their source defines)
is listed with what a plugin relies on: function and method signatures (annotations as
the source writes them), attrs fields with their types and defaults, Protocol members,
enum members, constants' types (and values, when made of plain values); then every
calling rule and every hook specification with its signature, family, calling rule and
pluggy options. A name exported from several namespaces is described once, at its first
(``toolang_core`` first), and named an alias elsewhere.

The snapshot records the version it was taken at. A diff in it is a public contract
change: CHANGELOG.md ("Versions") says what that needs. This module chooses what is
listed and runs the file; tools/api_describe.py writes each object as a line (sorted,
free of memory addresses and of reprs that differ between Pythons, so the file is the
same on every run). Standard library and attrs only.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import re
import sys
import types
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # api_describe, beside this file
from api_describe import (
    annotations_of,
    declared_final,
    declared_type,
    describe,
    members,
    public_names,
    signature,
)

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOT = ROOT / "api" / "toolang_core.api.txt"
COMMAND = "python tools/api_snapshot.py --write"

NAMESPACES: tuple[str, ...] = (
    "toolang_core",
    "toolang_core.cli",
    "toolang_core.config",
    "toolang_core.hookspecs",
    "toolang_core.hookspecs.rules",
    "toolang_core.memory",
    "toolang_core.memory.kit",
    "toolang_core.models",
    "toolang_core.redaction",
    "toolang_core.runtime_view",
    "toolang_core.store",
    "toolang_core.store.backend",
    "toolang_core.testing",
    "toolang_core.testing.agents",
    "toolang_core.testing.approvals",
    "toolang_core.testing.cast",
    "toolang_core.testing.cli",
    "toolang_core.testing.delegation",
    "toolang_core.testing.dists",
    "toolang_core.testing.embeddings",
    "toolang_core.testing.list_memory",
    "toolang_core.testing.live_server",
    "toolang_core.testing.memory_calls",
    "toolang_core.testing.memory_conformance",
    "toolang_core.testing.models",
    "toolang_core.testing.parked_turns",
    "toolang_core.testing.plugin_db_conformance",
    "toolang_core.testing.pool",
    "toolang_core.testing.processes",
    "toolang_core.testing.pytest_plugin",
    "toolang_core.testing.races",
    "toolang_core.testing.runtimes",
    "toolang_core.testing.script_file_plugin",
    "toolang_core.testing.store_conformance",
    "toolang_core.testing.usage_conformance",
)
"""The public namespaces: what plugins and their tests may import (docs/plugins.md,
"Versions and what may change"; tests/test_public_api.py holds plugins to them)."""


# -- namespaces and hooks -------------------------------------------------------------


def namespace_lines(namespaces: Sequence[str]) -> list[str]:
    """One line per public name of each namespace and per member of each class."""
    lines: list[str] = []
    described: dict[int, str] = {}
    for namespace in sorted(namespaces):
        module = importlib.import_module(namespace)
        hints = annotations_of(module)
        for name in public_names(module):
            value = getattr(module, name)
            full = f"{namespace}.{name}"
            if (isinstance(value, type) or callable(value)) and id(value) in described:
                lines.append(f"{full}: alias of {described[id(value)]}")
                continue
            if isinstance(value, type) or callable(value):
                described[id(value)] = full
            declaration = _declaration(module, hints, name, value)
            declared = declared_type(declaration, name, value)
            final = declared_final(declaration, name)
            lines.append(f"{full}: {describe(value, declared, final=final)}")
            if isinstance(value, type):
                lines.extend(f"{full}.{attr}: {text}" for attr, text in members(value))
    return lines


def _declaration(
    module: types.ModuleType, hints: Mapping[str, Any], name: str, value: Any
) -> Mapping[str, Any]:
    """The annotations that declare ``name``: its namespace's, or, for a re-exported
    constant, those of the toolang module that defines it (the first, by name)."""
    if name in hints:
        return hints
    for other, found in sorted(sys.modules.items()):
        if not (other == "toolang_core" or other.startswith("toolang_core.")) or found is module:
            continue
        # vars(), not getattr(): a package's __getattr__ may import or warn.
        if vars(found).get(name) is value and name in (elsewhere := annotations_of(found)):
            return elsewhere
    return {}


def hook_lines(
    hook_modules: Iterable[tuple[str, types.ModuleType]], declared: Mapping[str, Any]
) -> list[str]:
    """The calling rules in use, then one line per hook specification: signature,
    family, calling rule, whether awaited, and its pluggy options."""
    hooks: list[str] = []
    rules: dict[str, Any] = {}
    for family, module in hook_modules:
        for name, spec in vars(module).items():
            options = getattr(spec, "toolang_spec", None)
            if not name.startswith("toolang_") or options is None:
                continue
            how = declared.get(name)
            rule = how.rule.name if how is not None else "undeclared"
            if how is not None:
                rules[how.rule.name] = how.rule
            flags = [
                f"family={family}",
                f"rule={rule}",
                f"awaited={_yes(how is not None and how.awaited)}",
                f"firstresult={_yes(options.get('firstresult'))}",
                f"historic={_yes(options.get('historic'))}",
            ]
            if options.get("warn_on_impl") is not None:
                flags.append("warns on implementation")
            hooks.append(f"hook {name}{signature(spec)}  [{'; '.join(flags)}]")
    described = [
        f"calling rule {name!r}: combiner={rule.combiner.__qualname__}; "
        f"fail_closed={_yes(rule.fail_closed)}; awaited by default={_yes(rule.awaited)}"
        for name, rule in rules.items()
    ]
    return sorted(described) + sorted(hooks)


def _yes(flag: object) -> str:
    return "yes" if flag else "no"


def render(namespaces: Sequence[str], hook_lines: Sequence[str], version: str) -> str:
    """The snapshot's text: its header (with ``version``), then the sorted lines."""
    header = [
        "# The public API of toolang_core: the names of its public namespaces with their",
        "# signatures, fields and members, then its calling rules and hook specifications.",
        "# Generated by tools/api_snapshot.py -- do not edit. A change to this file is a public",
        '# contract change: CHANGELOG.md ("Versions") says what it needs. Regenerate with',
        f"#     {COMMAND}",
        f"version: {version}",
        "",
    ]
    return "\n".join([*header, *namespace_lines(namespaces), "", *hook_lines]) + "\n"


# -- the real snapshot and the command line -------------------------------------------


def snapshot() -> str:
    """The snapshot of toolang_core as imported now."""
    import toolang_core
    from toolang_core.hookspecs import FAMILIES
    from toolang_core.hookspecs.rules import DECLARED

    hooks = hook_lines(((family.key, family.module) for family in FAMILIES), DECLARED)
    return render(NAMESPACES, hooks, toolang_core.__version__)


def recorded_version(text: str) -> str | None:
    """The version a snapshot's text says it was taken at."""
    found = re.search(r"^version: (\S+)$", text, flags=re.MULTILINE)
    return found.group(1) if found else None


def compare(recorded: str, current: str, path: str = "api/toolang_core.api.txt") -> str:
    """``""`` when the two agree, else what to tell a person: the unified diff (``-``: the
    checked-in snapshot, ``+``: the code) and how to change the contract on purpose."""
    if recorded == current:
        return ""
    if not recorded:
        return f"there is no snapshot at {path}: write it with\n    {COMMAND}\n"
    diff = "".join(
        difflib.unified_diff(
            recorded.splitlines(keepends=True),
            current.splitlines(keepends=True),
            fromfile=f"{path} (checked in)",
            tofile=f"{path} (the code now)",
        )
    )
    was, now = recorded_version(recorded), recorded_version(current)
    if _api(recorded) == _api(current):
        return (
            f"{path} was taken at version {was}; toolang_core is now {now}. The API is the "
            f"same: regenerate the snapshot so its header records {now}:\n    {COMMAND}\n"
        )
    return (
        f"toolang_core's public API differs from {path}:\n\n{diff}\n"
        "A public contract changed. If that was not meant, change the code back. If it was:\n"
        f"  1. regenerate the snapshot: {COMMAND}\n"
        '  2. check the version against the policy (CHANGELOG.md, "Versions"): a change here\n'
        "     rules out a patch release -- while 0.x it ships in the next minor (0.2 -> 0.3);\n"
        "     after 1.0 an addition needs a minor, a change or removal a major. If version\n"
        f"     {now} (pyproject.toml, toolang_core.__version__) was released already, the\n"
        "     version moves (with the plugins': tests/test_versions.py), then regenerate;\n"
        "  3. add a bullet at the top of CHANGELOG.md's '## Unreleased', starting with its area,\n"
        "     saying what changed and what a plugin author must do.\n"
    )


def _api(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith(("#", "version: "))]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", action="store_true", help="rewrite the snapshot file")
    group.add_argument("--check", action="store_true", help="exit 1 with a diff when it differs")
    parser.add_argument(
        "--file", type=Path, default=SNAPSHOT, help="the snapshot file (default: %(default)s)"
    )
    args = parser.parse_args(argv)
    path: Path = args.file
    shown = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
    current = snapshot()
    if args.write:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(current, encoding="utf-8")
        print(f"wrote {shown} ({current.count(chr(10))} lines)")
        return 0
    if args.check:
        recorded = path.read_text(encoding="utf-8") if path.is_file() else ""
        problem = compare(recorded, current, shown)
        if problem:
            print(problem, file=sys.stderr)
            return 1
        print(f"{shown} matches the code")
        return 0
    sys.stdout.write(current)
    return 0


if __name__ == "__main__":
    sys.exit(main())
