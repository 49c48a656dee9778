"""The plugin's modules import one another without a circle: every import counts —
at module level, under ``TYPE_CHECKING`` and inside functions — so no lazy import
hides one. The judges reach each other through the dispatcher they are given
(``analysis/judges.py``), not by importing each other."""

from __future__ import annotations

import ast
from pathlib import Path

import toolang_hook_security_filter

PACKAGE = "toolang_hook_security_filter"
ROOT = Path(toolang_hook_security_filter.__file__).parent


def _modules() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join([PACKAGE, *parts])] = path
    return modules


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    """The names ``node`` imports, as absolute dotted names (``from a import b`` gives
    ``a.b`` and ``a``: ``b`` may be a module or a name in ``a``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        anchor = module.split(".")
        anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
        base = ".".join([*anchor, base] if base else anchor)
    return [base, *(f"{base}.{alias.name}" for alias in node.names)]


def import_graph() -> dict[str, set[str]]:
    """Each module of the plugin and the plugin modules it imports, anywhere in it."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        edges: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = _imported(node, module, path.name == "__init__.py")
                # ``from pkg.sub import name``: an edge to ``pkg.sub.name`` when that is
                # a module, else to ``pkg.sub``.
                targets = {n for n in names[1:] if n in modules} if len(names) > 1 else set()
                if isinstance(node, ast.ImportFrom) and names[0] in modules:
                    if len(targets) < len(node.names):
                        targets.add(names[0])
                elif isinstance(node, ast.Import):
                    targets = {n for n in names if n in modules}
                edges |= targets - {module}
        graph[module] = edges
    return graph


def _circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle in ``graph``, as the list of modules around it, or ``None``."""
    done: set[str] = set()
    stack: list[str] = []
    on_stack: set[str] = set()

    def visit(module: str) -> list[str] | None:
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph[module]):
            if target in on_stack:
                return [*stack[stack.index(target) :], target]
            if target not in done:
                circle = visit(target)
                if circle is not None:
                    return circle
        stack.pop()
        on_stack.discard(module)
        done.add(module)
        return None

    for module in sorted(graph):
        if module not in done:
            circle = visit(module)
            if circle is not None:
                return circle
    return None


def test_the_plugins_import_graph_has_no_circle():
    graph = import_graph()
    assert len(graph) > 20  # the walk found the modules, the subpackage's too
    assert f"{PACKAGE}.analysis.dispatcher" in graph
    circle = _circle(graph)
    assert circle is None, "import circle: " + " -> ".join(circle or [])


def test_the_graph_counts_imports_inside_functions_and_under_type_checking():
    graph = import_graph()
    # kinds.py loads the judges inside a function (start-up cost), the top package
    # loads the policy inside its hooks: both are edges all the same.
    assert f"{PACKAGE}.analysis.programs" in graph[f"{PACKAGE}.analysis.kinds"]
    assert f"{PACKAGE}.policy" in graph[PACKAGE]
    # ``from pkg.analysis import dispatcher`` names the module, not the package.
    assert f"{PACKAGE}.analysis.dispatcher" in graph[f"{PACKAGE}.policy"]


def test_the_circle_finder_finds_a_circle():
    assert _circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _circle({"a": {"b"}, "b": set()}) is None
