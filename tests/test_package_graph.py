"""toolang_core's packages import each other one way only: no package-level cycle.

A node is a sub-package of ``toolang_core`` (``runtime``, ``turn`` …) or a top-level
module (``errors``, ``builtins`` …). An edge ``a -> b`` is any import in ``a`` of
something in ``b`` that runs when the code runs: at module level or inside a function.
Imports under ``if TYPE_CHECKING:`` are left out, since they never execute. The
direction the graph follows is described in docs/architecture.md.

The type checker's graph — the same imports *and* those under ``if TYPE_CHECKING:``,
module by module — is checked too, with a rule of its own: the concrete runtime
(``toolang_core.runtime``) sits on top of everything it drives. Nothing below it names
it, even for type checking (hooks and tools get ``RuntimeView``, the core's own parts
``CoreRuntime``), and no module of it is in an import cycle with a module outside it.
That graph still has one cycle below the runtime, among the hook specifications, the
view and the plugin host (the view names the agent catalog and the plugins'
registrations; the catalog calls hooks through the facade, which names the hook
specifications, which name the view), so its size is held where it is and may only
shrink.
"""

from __future__ import annotations

import ast
import itertools
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "toolang_core"

Edges = dict[str, dict[str, list[str]]]
"""``edges[a][b]``: the ``module:line`` places in ``a`` importing from ``b``."""


def _module_name(path: Path, base: Path) -> str:
    parts = path.relative_to(base).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _node_of(module: str) -> str | None:
    """The package-graph node a dotted ``toolang_core`` module belongs to."""
    parts = module.split(".")
    if parts[0] != PACKAGE:
        return None
    return parts[1] if len(parts) > 1 else "<root>"


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(sub) for stmt in node.body for sub in ast.walk(stmt))
    return skipped


def _imported_modules(node: ast.AST, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:  # relative: resolve against this module's package
        anchor = module.split(".") if is_package else module.split(".")[:-1]
        anchor = anchor[: len(anchor) - (node.level - 1)]
        base = ".".join([*anchor, node.module] if node.module else anchor)
    else:
        base = node.module or ""
    if base == PACKAGE:  # ``from toolang_core import turn`` names a sub-package
        return [f"{PACKAGE}.{alias.name}" for alias in node.names]
    return [base]


def package_graph(source_root: Path, *, typing: bool = False) -> Edges:
    """The package-level import graph of the package at ``source_root`` (with
    ``typing``, imports under ``if TYPE_CHECKING:`` count too)."""
    base = source_root.parent
    edges: Edges = defaultdict(lambda: defaultdict(list))
    for path in sorted(source_root.rglob("*.py")):
        module = _module_name(path, base)
        source = _node_of(module)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        skipped = set() if typing else _type_checking_nodes(tree)
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            for imported in _imported_modules(node, module, path.name == "__init__.py"):
                target = _node_of(imported)
                if target is None or target in (source, "<root>"):
                    continue
                edges[source][target].append(f"{path.relative_to(base)}:{node.lineno}")
    return edges


def module_graph(source_root: Path) -> Edges:
    """The module-level import graph of the package at ``source_root``, as the type
    checker reads it: every import counts, ``if TYPE_CHECKING:`` ones too.

    A node is a module (a package is its ``__init__``); ``from a.b import c`` is an edge
    to ``a.b.c`` when that is a module, else to ``a.b``. Imports of the package root
    (the public facade, which re-exports everything) are left out, as in the package
    graph.
    """
    base = source_root.parent
    paths = {_module_name(path, base): path for path in sorted(source_root.rglob("*.py"))}
    edges: Edges = defaultdict(lambda: defaultdict(list))
    for module, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        edges[module]  # every module is a node, importing or not
        for node in ast.walk(tree):
            for imported in _imported_modules(node, module, path.name == "__init__.py"):
                names = node.names if isinstance(node, ast.ImportFrom) else [None]
                for alias in names:
                    target = imported
                    if alias is not None and f"{imported}.{alias.name}" in paths:
                        target = f"{imported}.{alias.name}"
                    while target and target not in paths:
                        target = target.rpartition(".")[0]
                    if target in ("", PACKAGE, module):
                        continue
                    place = f"{path.relative_to(base)}:{node.lineno}"
                    if place not in edges[module][target]:
                        edges[module][target].append(place)
    return edges


def _strongly_connected(edges: Edges) -> list[list[str]]:
    """Tarjan's algorithm; components of more than one node, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, {})):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _one_cycle(edges: Edges, component: list[str]) -> list[str]:
    """A shortest closed path through the component's first node (breadth-first)."""
    start, members = component[0], set(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for target in sorted(edges[node]):
            if target not in members:
                continue
            if target == start:
                return [*paths[node], start]
            if target not in paths:
                paths[target] = [*paths[node], target]
                queue.append(target)
    raise AssertionError(f"no cycle through {start} in {component}")  # pragma: no cover


def describe_cycles(edges: Edges, *, nodes: str = "packages") -> list[str]:
    """One paragraph per cycle: the nodes in order and the imports making each edge."""
    reports = []
    for component in _strongly_connected(edges):
        cycle = _one_cycle(edges, component)
        lines = [f"cycle {' -> '.join(cycle)} ({nodes} {', '.join(component)})"]
        for source, target in itertools.pairwise(cycle):
            places = edges[source][target]
            lines.append(f"  {source} -> {target}: {', '.join(places[:5])}")
        reports.append("\n".join(lines))
    return reports


def test_toolang_core_has_no_package_level_import_cycle():
    cycles = describe_cycles(package_graph(ROOT / PACKAGE))
    assert cycles == [], (
        "toolang_core's packages import each other in a cycle; move the shared piece "
        "down (see docs/architecture.md):\n" + "\n".join(cycles)
    )


def test_the_graph_sees_imports_the_check_must_count():
    edges = package_graph(ROOT / PACKAGE)
    # function-local import (runtime's executor table builds the agent executor lazily)
    assert "turn" in edges["runtime"]
    # and leaves out what only the type checker reads (tools/chain.py names the facade)
    assert "plugins" not in edges["tools"]


ABOVE_THE_RUNTIME = frozenset(
    {"runtime", "cli", "doctor", "evals", "testing", "history", "__main__", "<root>"}
)
"""The packages that may name the concrete runtime: itself, what drives it (the CLI,
doctor, evals, the test kit, history: a fork or a replay waits for its turn), and the
public facade (``toolang_core``, which re-exports it)."""
LARGEST_CYCLE = 2
"""Modules in the type checker's largest import cycle (66 before #32 took the runtime
out of it; 28-32 while the view, the tool values, the hook specifications and the plugin
host were one cycle; 2 since #32's item 1 untied it). Leaves took the plain types out:
the registration records (plugins/registrations.py), Tool (tools/tool.py), TurnFailed
(turn/failure.py), Speaker (turn/speaker.py), DoctorContext (doctor/context.py). Small
protocols took the place of concrete classes named for annotations: agents/port.py
(not CoreRuntime), turn/guards.GuardHooks (not the hook facade), plugins/host_port.py
(not PluginHost), turn/running.TurnExecutorPort (not AgentExecutor); the runtime's
executors and upkeep name CoreRuntime, not Runtime. What is left are pairs naming each
other (the hook facade and the tool chain's stages, ToolCallContext and TurnHandle, the
runtime and its serving run, the agent executor and its loop, ...). Lower it when a
change unties more, never raise it for a new dependency."""


def _package(module: str) -> str:
    return module.split(".")[1] if "." in module else "<root>"


def runtime_namers(edges: Edges) -> list[str]:
    """Imports of ``toolang_core.runtime`` (any kind) from a module below it."""
    return [
        f"{source} -> {target}: {', '.join(places)}"
        for source in sorted(edges)
        if _package(source) not in ABOVE_THE_RUNTIME
        for target, places in sorted(edges[source].items())
        if _package(target) == "runtime"
    ]


def runtime_cycles(edges: Edges) -> list[str]:
    """Import cycles joining a module of ``toolang_core.runtime`` and one outside it."""
    return [
        report
        for component, report in zip(
            _strongly_connected(edges), describe_cycles(edges, nodes="modules"), strict=True
        )
        if {_package(m) for m in component} > {"runtime"}
    ]


def test_nothing_below_the_runtime_names_the_concrete_runtime():
    namers = runtime_namers(module_graph(ROOT / PACKAGE))
    assert namers == [], (
        "these modules import toolang_core.runtime (for type checking counts too), which "
        "only the runtime itself, cli, doctor, evals and testing may: name RuntimeView (hooks, "
        "tools) or CoreRuntime (the core's parts) instead, or hand over the part needed:\n"
        + "\n".join(namers)
    )


def test_the_runtime_is_in_no_import_cycle_with_what_it_uses():
    cycles = runtime_cycles(module_graph(ROOT / PACKAGE))
    assert cycles == [], (
        "the concrete runtime is in an import cycle (type checking imports included) "
        "with modules it uses:\n" + "\n".join(cycles)
    )


def test_the_type_checkers_largest_import_cycle_only_shrinks():
    components = _strongly_connected(module_graph(ROOT / PACKAGE))
    largest = max(components, key=len, default=[])
    assert len(largest) <= LARGEST_CYCLE, (
        f"the type checker's largest import cycle grew to {len(largest)} modules "
        f"(at most {LARGEST_CYCLE}): {', '.join(largest)}\n"
        + "\n".join(describe_cycles(module_graph(ROOT / PACKAGE), nodes="modules"))
    )


@pytest.fixture
def tree_with_cycle(tmp_path: Path) -> Path:
    root = tmp_path / PACKAGE
    for package, body in {
        "low": "def helper():\n    from toolang_core.high.top import thing\n",
        "high": "from toolang_core.low import helper\n",
        "typed": (
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from toolang_core.high import x\n"
        ),
    }.items():
        (root / package).mkdir(parents=True)
        (root / package / "__init__.py").write_text("")
        (root / package / "mod.py").write_text(body)
    (root / "high" / "mod2.py").write_text("from . import mod\nfrom ..typed import mod\n")
    (root / "__init__.py").write_text("")
    return root


def test_a_cycle_is_reported_with_its_packages_and_the_importing_modules(tree_with_cycle):
    edges = package_graph(tree_with_cycle)
    assert set(edges["high"]) == {"low", "typed"}  # relative imports resolve too
    assert "typed" not in edges or "high" not in edges["typed"]  # TYPE_CHECKING skipped
    (report,) = describe_cycles(edges)
    assert report.splitlines() == [
        "cycle high -> low -> high (packages high, low)",
        "  high -> low: toolang_core/high/mod.py:1",
        "  low -> high: toolang_core/low/mod.py:2",
    ]


@pytest.fixture
def tree_naming_the_runtime(tmp_path: Path) -> Path:
    root = tmp_path / PACKAGE
    files = {
        "__init__.py": "",
        "runtime/__init__.py": "from toolang_core.runtime.core import Runtime\n",
        "runtime/core.py": "from toolang_core.turn import agent\n",
        "turn/__init__.py": "",
        "turn/agent.py": (
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from toolang_core.runtime import Runtime\n"
        ),
        "cli/__init__.py": "from toolang_core.runtime import Runtime\n",
    }
    for name, body in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(body)
    return root


def test_a_type_checking_import_of_the_runtime_from_below_is_reported(tree_naming_the_runtime):
    edges = module_graph(tree_naming_the_runtime)
    assert runtime_namers(edges) == [
        "toolang_core.turn.agent -> toolang_core.runtime: toolang_core/turn/agent.py:3"
    ]
    (report,) = runtime_cycles(edges)
    assert report.splitlines()[0] == (
        "cycle toolang_core.runtime -> toolang_core.runtime.core -> toolang_core.turn.agent"
        " -> toolang_core.runtime (modules toolang_core.runtime, toolang_core.runtime.core,"
        " toolang_core.turn.agent)"
    )
    # the run-time package graph does not see it: that is why the module graph exists
    assert describe_cycles(package_graph(tree_naming_the_runtime)) == []
