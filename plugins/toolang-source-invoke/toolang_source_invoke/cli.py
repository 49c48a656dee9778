"""``toolang invoke``."""

from __future__ import annotations

import asyncio
import functools
import sys
from typing import TYPE_CHECKING

import click

from toolang_core.cli import CliState, pass_state

if TYPE_CHECKING:
    from toolang_core import Approval, RedactionPolicy


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

    0 completed, 1 failed, 2 canceled, 75 timed out (--timeout passed). While the turn
    waits for a person's approval, its id and the commands to decide it are printed.
    """
    from toolang_source_invoke.api import ainvoke

    result = asyncio.run(
        ainvoke(
            text,
            agent=agent,
            timeout=timeout,
            runtime=state.runtime,
            on_approval=functools.partial(_show, redaction=state.runtime.redaction),
        )
    )
    if result.ok:
        click.echo(result.output or "")
    elif result.status.is_terminal:
        click.echo(f"{result.status.value}: {result.error or result.outcome or ''}", err=True)
    else:
        click.echo(f"still {result.status.value}; request {result.turn_id}", err=True)
    sys.exit(result.exit_code)


def _show(approval: Approval, *, redaction: RedactionPolicy) -> None:
    from toolang_core import canonical_params

    click.echo(
        f"approval needed ({approval.id}): {approval.agent} wants to run {approval.tool}\n"
        f"  params: {canonical_params(redaction.value(dict(approval.params)))}\n"
        f"the turn awaits approval; decide from another terminal:\n"
        f"  toolang approvals approve {approval.id}   "
        f"(or: toolang approvals deny {approval.id})",
        err=True,
    )
