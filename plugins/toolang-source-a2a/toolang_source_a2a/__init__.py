"""toolang-source-a2a: this runtime's agents served over the A2A protocol.

Inbound ``message/send`` (``SendMessage``) becomes a **chat** turn request stored
``queued`` before the answer is sent: the A2A ``contextId`` is the thread
``a2a:<contextId>``, the A2A task id is the turn id. ``tasks/get``/``tasks/cancel`` read
and cancel through the execution store, so any process serving the same store answers.

The routes are offered to the runtime's one HTTP server through
``toolang_register_routes``. Only when no plugin serves routes in this run
(``toolang_serves_routes``: the server plugin installed but not enabled does not) and
``[plugins.source-a2a] listen`` is set does this plugin open its own port (uvicorn) —
so a runtime never has two HTTP ports for one job.

Web libraries are imported only when a server starts or a route is hit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolang_core import RegisterRoute, RegisterSettings, hookimpl
from toolang_source_a2a.settings import NAME, A2ASettings

if TYPE_CHECKING:
    import click

    from toolang_core import DoctorCheck, Runtime

__all__ = ["NAME", "A2ASettings"]


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(A2ASettings)


@hookimpl
def toolang_register_routes(register: RegisterRoute) -> None:
    from toolang_source_a2a.routes import ROUTES

    for route in ROUTES:
        register(
            route.path,
            route.endpoint,
            methods=route.methods,
            name=route.name,
            summary=route.summary,
            auth=route.auth,
        )


@hookimpl
async def toolang_startup(runtime: Runtime) -> None:
    from toolang_source_a2a.restarts import cancel_abandoned
    from toolang_source_a2a.standalone import start

    # before the first turn is admitted: a task its caller gave up on is not run again
    await cancel_abandoned(runtime)
    await start(runtime)


@hookimpl
async def toolang_shutdown(runtime: Runtime, reason: str) -> None:
    from toolang_source_a2a.standalone import stop

    await stop(runtime)


@hookimpl
def toolang_register_commands(cli: click.Group) -> None:
    from toolang_source_a2a.cli import a2a

    cli.add_command(a2a)


@hookimpl
def toolang_doctor_checks(runtime: Runtime) -> list[DoctorCheck]:
    """``toolang doctor``: every served card valid, and answered where it is served."""
    from toolang_core import DoctorCheck
    from toolang_source_a2a.health import AREA, findings

    return [DoctorCheck(AREA, status, text) for status, text in findings(runtime)]  # type: ignore[arg-type]


def settings_of(runtime: Runtime) -> A2ASettings:
    """This runtime's ``[plugins.source-a2a]`` (defaults when absent)."""
    found: Any = runtime.settings.get(NAME)
    return found if isinstance(found, A2ASettings) else A2ASettings()
