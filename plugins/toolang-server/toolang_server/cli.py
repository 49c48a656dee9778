"""``toolang serve``: the runtime with its HTTP server on, whatever the config says;
``toolang console``: a new sign-in link to its console."""

from __future__ import annotations

import socket
from pathlib import Path
from urllib.parse import urlsplit

import click

from toolang_core.cli import CliState, pass_state


@click.command()
@click.option("--host", default=None, help="Listen here (default: [plugins.server] host).")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=None,
    help="Listen on this port (0: any free one; default: [plugins.server] port).",
)
@click.option(
    "--source",
    "sources",
    multiple=True,
    metavar="NAME",
    help="Run only these turn sources (repeatable; default: [runtime] sources).",
)
@pass_state
def serve(state: CliState, *, host: str | None, port: int | None, sources: tuple[str, ...]) -> None:
    """Run the runtime with the HTTP API and web console on (until SIGINT/SIGTERM).

    The same as `toolang run` with [plugins.server] enabled; prints the console URL.
    When a runtime already serves this store it says so at once, with that runtime's
    console, instead of waiting for it to stop.
    """
    import attrs

    from toolang_core import StoreBusy, UsageError
    from toolang_server import NAME, server_state
    from toolang_server.settings import ServerSettings

    runtime = state.runtime
    settings = runtime.settings.get(NAME) or ServerSettings()
    changes = {k: v for k, v in (("host", host), ("port", port)) if v is not None}
    try:
        settings = attrs.evolve(settings, enabled=True, **changes)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    server_state(runtime)["force"] = settings
    ctx = click.get_current_context()
    root = ctx.find_root()
    run = root.command.get_command(root, "run")  # type: ignore[attr-defined]
    console = serving_console(runtime.config.home)
    # A runtime serving this home will not stop by itself: no point waiting for it.
    waiting = {"wait_seconds": 0.0} if console else {}
    try:
        ctx.invoke(
            run, sources=sources, no_sources=False, until_idle=False, max_running=None, **waiting
        )
    except StoreBusy as exc:
        if console is None:
            raise
        holder = f" ({exc.holder})" if exc.holder else ""
        raise StoreBusy(
            f"a runtime is already serving this store{holder}: its console is {console}/ "
            f"(API {console}/api; `toolang console` prints a sign-in link). Use that one, or "
            "stop it first to serve from here.",
            holder=exc.holder,
        ) from None


def serving_console(home: Path) -> str | None:
    """The base URL of the server a runtime of ``home`` runs now: the one ``server.url``
    names, if something answers there (a runtime that was killed leaves the file)."""
    from toolang_server.serve import URL_FILE

    try:
        url = (home / URL_FILE).read_text(encoding="utf-8").strip()
        parts = urlsplit(url)
        if parts.hostname is None or parts.port is None:
            return None
        with socket.create_connection((parts.hostname, parts.port), timeout=2):
            return url
    except (OSError, ValueError):
        return None


@click.command()
@pass_state
def console(state: CliState) -> None:
    """Print a new one-time sign-in link to the running server's console.

    The link signs its opener in as the operator, once, within [plugins.server]
    sign_in_link_seconds. Made from the operator's credential in the runtime's home, so
    only the account running the runtime can make one (never a tool's process).
    """
    import time

    from toolang_core import UsageError, cli_principal, read_credential
    from toolang_server.serve import URL_FILE
    from toolang_server.signin import sign_in_url

    config = state.config
    cli_principal(config.credential_path, action="make a console sign-in link")
    url_file = config.home / URL_FILE
    try:
        url = url_file.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        raise UsageError(
            f"no server is running for {config.home} ({url_file} is missing): start one "
            "with `toolang run` ([plugins.server] enabled) or `toolang serve`"
        ) from None
    credential = read_credential(config.credential_path, action="make a console sign-in link")
    click.echo(sign_in_url(url, credential, now=time.time()))
