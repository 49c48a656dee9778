"""HTTP route hooks: plugins add endpoints to the runtime's one HTTP server.

The server itself is a plugin (``toolang-server``); it collects every plugin's routes
through this hook when it starts and mounts them on one ASGI app, so the JSON API, the
web console, an A2A endpoint and a third party's webhook share one port, one auth rule
and one OpenAPI document.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolang_core.hookspecs.rules import COLLECT, REGISTRATION, calling_rule
from toolang_core.markers import hookspec

if TYPE_CHECKING:
    from toolang_core.plugins.registrars import RegisterRoute
    from toolang_core.runtime_view import RuntimeView


@calling_rule(REGISTRATION)
@hookspec
def toolang_register_routes(register: RegisterRoute) -> None:
    """Offer HTTP routes.

    Called once per server start, one plugin at a time. Call
    ``register(path, endpoint, *, methods=("GET",), name="", summary="", auth=True)``
    for each route. ``endpoint`` is an ``async`` function taking a Starlette ``Request``
    and returning a Starlette ``Response``; the runtime is ``request.app.state.runtime``.
    A path or method already taken, a path not starting with ``/`` or an unknown method
    fails this plugin's registration as a whole (none of its routes are mounted).
    Return nothing.
    """


@calling_rule(COLLECT)
@hookspec
def toolang_serves_routes(runtime: RuntimeView) -> str | None:
    """Say where this plugin serves the routes of ``toolang_register_routes`` in
    ``runtime``'s run: the base URL (``"http://127.0.0.1:8765"``), or ``None`` when it
    will not serve them (not enabled, a one-shot ``chat``/``invoke``).

    Asked by a plugin that opens a port of its own for its routes only when no server
    serves them (toolang-source-a2a's ``listen``) and by ``toolang doctor``, before or
    while the run starts: answer from what is fixed for the run (your settings,
    ``runtime.one_shot``), not from whether your server has started yet.
    """
