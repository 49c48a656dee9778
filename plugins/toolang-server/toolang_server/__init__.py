"""toolang-server: the runtime over HTTP — the JSON API, streamed answers (SSE) and the
web console, on one Starlette app served by uvicorn inside the runtime's process.

Started by ``toolang run`` when ``[plugins.server] enabled = true``, or by
``toolang serve``. Every route, this plugin's own included, comes through the
``toolang_register_routes`` hook.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import click

from toolang_core import RegisterRoute, RegisterSettings, hookimpl
from toolang_server.settings import ServerSettings

if TYPE_CHECKING:
    from toolang_core import Event, Runtime, TurnRequest

NAME: Final = "server"


def server_state(runtime: Runtime) -> dict[str, Any]:
    """This plugin's per-runtime state: ``"force"`` (settings ``toolang serve`` starts
    the server with, even when ``enabled`` is false), ``"running"`` and, while it runs,
    ``"finished"`` (the turns waited for over HTTP)."""
    return runtime.plugin_state("server:state", dict)


def settings_of(runtime: Runtime) -> ServerSettings | None:
    forced: ServerSettings | None = server_state(runtime).get("force")
    if forced is not None:
        return forced
    settings = runtime.settings.get(NAME) or ServerSettings()
    return settings if settings.enabled else None


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(ServerSettings)


@hookimpl
def toolang_register_routes(register: RegisterRoute) -> None:
    from toolang_server import (
        api_attachments,
        api_catalog,
        api_history,
        api_questions,
        api_turns,
        api_usage,
        api_work,
    )
    from toolang_server.console import actions, evals, pages, questions, signin, trace

    api_catalog.register(register)
    api_turns.register(register)
    api_history.register(register)
    api_usage.register(register)
    api_attachments.register(register)
    api_work.register(register)
    api_questions.register(register)
    actions.register(register)
    pages.register(register)
    trace.register(register)
    questions.register(register)
    evals.register(register)
    signin.register(register)


@hookimpl
def toolang_serves_routes(runtime: Runtime) -> str | None:
    """Where this run serves every plugin's routes: only when the server starts
    (``enabled``, or ``toolang serve``) and the run is not a one-shot chat/invoke."""
    settings = settings_of(runtime)
    if settings is None or runtime.one_shot:
        return None
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    return f"http://{host}:{settings.port}"


@hookimpl
def toolang_inactive_hooks(runtime: Runtime) -> tuple[str, ...]:
    """A run that starts no server (not enabled, or a one-shot chat/invoke) has nobody
    waiting over HTTP for a turn to finish, nor watching its events; and the events
    are listened to only when a plugin that reports them runs."""
    if settings_of(runtime) is None or runtime.one_shot:
        return ("toolang_deliver_turn", "toolang_on_event")
    # Listening to the bus makes the runtime publish every turn's turn.* events: only
    # when a plugin says it reports the turn events the server shows, in this run
    # (toolang_reports_turn_events; no plugin is named here).
    from toolang_server.turn_events import reported_in

    return () if reported_in(runtime) else ("toolang_on_event",)


@hookimpl
async def toolang_startup(runtime: Runtime) -> None:
    settings = settings_of(runtime)
    if settings is None or runtime.one_shot:  # a one-shot chat/invoke opens no port
        return
    import sys

    from toolang_server.finished import FinishedTurns
    from toolang_server.serve import start

    state = server_state(runtime)
    try:
        state["running"] = await start(runtime, settings)
        state["finished"] = FinishedTurns.of(runtime)  # told of each turn, see below
    except OSError as exc:
        # The runtime goes on without its server (start-up hooks never stop it); say so
        # where the person who started it looks, not only in the log.
        print(f"toolang server: not started: {exc}", file=sys.stderr, flush=True)
        raise


@hookimpl
async def toolang_shutdown(runtime: Runtime, reason: str) -> None:
    state = server_state(runtime)
    state.pop("finished", None)
    running = state.pop("running", None)
    if running is not None:
        # Imported only here: the serve module brings uvicorn and Starlette.
        from toolang_server.serve import URL_FILE

        await running.stop()
        (runtime.config.home / URL_FILE).unlink(missing_ok=True)


@hookimpl
def toolang_deliver_turn(turn: TurnRequest, runtime: Runtime) -> None:
    # Not a delivery: the signal that a turn is finished, for those waiting over HTTP.
    finished = server_state(runtime).get("finished")
    if finished is not None:  # the server runs
        finished.delivered(turn.id)


@hookimpl
def toolang_on_event(event: Event, runtime: Runtime) -> None:
    # A tool's progress, for the turn's event stream and the console's trace.
    if "running" in server_state(runtime):
        from toolang_server.turn_events import TurnEvents

        TurnEvents.of(runtime).accept(event)


@hookimpl
def toolang_register_commands(cli: click.Group) -> None:
    from toolang_server.cli import console, serve

    cli.add_command(serve)
    cli.add_command(console)
