"""Collect the HTTP routes plugins offer through ``toolang_register_routes``.

The server plugin asks for them (``runtime.host.hooks.register_routes()``) when it
starts. Each plugin is asked in isolation and its routes are kept all or nothing: one
that registers a bad or taken route is reported and mounts none, the others still do.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from toolang_core.hookspecs.rules import HookFailure

# RouteRegistration moved to toolang_core.plugins.registrations (so the runtime view names
# it without importing the host); re-exported here for the older path.
from toolang_core.plugins.registrations import RouteRegistration as RouteRegistration  # noqa: PLC0414

if TYPE_CHECKING:
    from toolang_core.plugins.host_port import RouteHost

HOOK: Final = "toolang_register_routes"
METHODS: Final = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})
_PATH: Final = re.compile(r"^/[A-Za-z0-9_.~\-/{}:]*$")


class HttpError(Exception):
    """Raise in a route endpoint to refuse a request: the server answers ``status`` with
    its JSON error body (``message``, the ``field`` at fault, what was ``expected``), so
    endpoints need no web framework of their own."""

    def __init__(
        self, status: int, message: str, *, field: str | None = None, expected: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.field = field
        self.expected = expected


class RouteError(ValueError):
    """A plugin registered a route that is malformed or already taken."""


class _Collector:
    def __init__(self, taken: dict[tuple[str, str], RouteRegistration]) -> None:
        self.taken = taken
        self.mine: list[RouteRegistration] = []
        self.plugin = ""

    def register(
        self,
        path: str,
        endpoint: Callable[..., Any],
        *,
        methods: tuple[str, ...] = ("GET",),
        name: str = "",
        summary: str = "",
        auth: bool = True,
    ) -> None:
        if not isinstance(path, str) or not _PATH.match(path):
            raise RouteError(f"route path {path!r} must start with '/' and be a path template")
        if not callable(endpoint):
            raise RouteError(f"route {path!r}: endpoint must be callable, got {endpoint!r}")
        wanted = tuple(str(m).upper() for m in methods)
        unknown = sorted(set(wanted) - METHODS)
        if not wanted or unknown:
            raise RouteError(
                f"route {path!r}: methods must be some of {', '.join(sorted(METHODS))}, "
                f"got {list(methods)!r}"
            )
        route = RouteRegistration(
            path,
            endpoint,
            wanted,
            self.plugin,
            name or path,
            summary or _first_line(endpoint),
            auth,
        )
        for method in wanted:
            other = self.taken.get((method, path)) or next(
                (r for r in self.mine if method in r.methods and r.path == path), None
            )
            if other is not None:
                raise RouteError(
                    f"route {method} {path} is already registered by plugin {other.plugin!r}"
                )
        self.mine.append(route)


def _first_line(endpoint: Callable[..., Any]) -> str:
    doc = inspect.getdoc(endpoint) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def collect_routes(host: RouteHost) -> tuple[list[RouteRegistration], list[HookFailure]]:
    """Every active plugin's routes in pluggy's calling order, and the plugins that
    failed (with the reason); a failed plugin contributes no route."""
    taken: dict[tuple[str, str], RouteRegistration] = {}
    routes: list[RouteRegistration] = []
    failures: list[HookFailure] = []
    for plugin in host.hooks.implementations(HOOK):
        collector = _Collector(taken)
        collector.plugin = plugin
        _, failure = host.hooks.registration(HOOK, plugin, register=collector.register)
        if failure is not None:
            failures.append(failure)
            continue
        for route in collector.mine:
            for method in route.methods:
                taken[(method, route.path)] = route
        routes.extend(collector.mine)
    return routes, failures
