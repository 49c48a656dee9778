"""``toolang invoke``."""

from __future__ import annotations

import asyncio
import sys

import click

from toolang_core.cli import CliState, pass_state


@click.command("invoke")
@click.argument("text")
@click.option("--agent", default=None, help="The agent to invoke.")
@click.option(
    "--timeout",
    "timeout",
    type=float,
    default=None,
    help="Give up waiting (and fail the turn) after this many seconds.",
)
@pass_state
def invoke_command(state: CliState, *, text: str, agent: str | None, timeout: float | None) -> None:
    """Run TEXT once and print the answer; the exit code says how it went.

    0 completed, 1 failed, 2 canceled, 75 still running after --timeout.
    """
    from toolang_source_invoke.api import ainvoke

    result = asyncio.run(ainvoke(text, agent=agent, timeout=timeout, runtime=state.runtime))
    if result.ok:
        click.echo(result.output or "")
    elif result.status.is_terminal:
        click.echo(f"{result.status.value}: {result.error or result.outcome or ''}", err=True)
    else:
        click.echo(f"still {result.status.value}; request {result.turn_id}", err=True)
    sys.exit(result.exit_code)
