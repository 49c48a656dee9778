"""``toolang learning stats``."""

from __future__ import annotations

import re
import time
from typing import Any

import click

from toolang_core.cli import CliState, pass_state

_UNITS = {"s": 1, "m": 60, "h": 3_600, "d": 86_400, "w": 604_800}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)([smhdw])")


def parse_duration(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    """``90s``, ``30m``, ``24h``, ``7d``, ``2w`` → seconds."""
    if value is None:
        return None
    match = _DURATION.fullmatch(value.strip())
    if match is None:
        raise click.BadParameter(
            f"expected a duration like 30m, 24h or 7d, found {value!r}", ctx, param
        )
    return float(match[1]) * _UNITS[match[2]]


@click.group()
def learning() -> None:
    """What the tool outcomes show: failures and latency per agent and tool."""


@learning.command()
@click.option("--agent", default=None, help="Only this agent's calls.")
@click.option("--tool", default=None, help="Only this tool.")
@click.option(
    "--since",
    callback=parse_duration,
    default=None,
    help="Only outcomes this recent, e.g. 30m, 24h, 7d (default: everything kept).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_state
def stats(
    state: CliState, *, agent: str | None, tool: str | None, since: float | None, as_json: bool
) -> None:
    """Calls, failures, failure rate, median and p95 latency, and the last error."""
    from toolang_core import StoreMissing
    from toolang_core.cli import echo_json
    from toolang_hook_learning_observer.schema import MIGRATIONS
    from toolang_hook_learning_observer.settings import NAME
    from toolang_hook_learning_observer.stats import StatsFilter, tool_stats

    try:
        db = state.runtime.plugin_database(NAME, MIGRATIONS, read_only=True)
    except StoreMissing:
        if as_json:
            echo_json([])
        click.echo(
            "no tool outcomes recorded yet: they are recorded while `toolang run` serves turns",
            err=as_json,
        )
        return
    try:
        selection = StatsFilter(agent, tool, None if since is None else time.time() - since)
        rows = tool_stats(db, selection)
    finally:
        db.close()
    if as_json:
        echo_json(rows)
    elif not rows:
        click.echo("no tool outcomes match")
    else:
        _print(rows)


def _print(rows: list[Any]) -> None:
    from toolang_core.cli import ago, short, table

    table(
        [
            [
                r.agent,
                r.tool,
                str(r.calls),
                str(r.failures),
                f"{r.failure_rate:.0%}",
                f"{r.median_ms:.1f}",
                f"{r.p95_ms:.1f}",
                f"{short(r.last_error, 60)} ({ago(r.last_error_at)})" if r.last_error else "-",
            ]
            for r in rows
        ],
        ["AGENT", "TOOL", "CALLS", "FAILED", "RATE", "P50 MS", "P95 MS", "LAST ERROR"],
    )
