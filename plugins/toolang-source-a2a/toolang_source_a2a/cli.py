"""``toolang a2a card``: the agent cards this runtime serves over A2A."""

from __future__ import annotations

import json

import click

from toolang_core.cli import CliState, pass_state


@click.group("a2a")
def a2a() -> None:
    """The A2A protocol: what this runtime serves to other agents."""


@a2a.command("card")
@click.argument("agent", required=False)
@pass_state
def card(state: CliState, agent: str | None) -> None:
    """Print the agent card(s) served over A2A (JSON), or AGENT's only."""
    from a2a.server.request_handlers.response_helpers import agent_card_to_dict

    from toolang_source_a2a import settings_of
    from toolang_source_a2a.cards import cards

    runtime = state.runtime
    settings = settings_of(runtime)
    base = settings.public_url or (f"http://{settings.listen}" if settings.listen else "")
    try:
        served = cards(runtime, settings, base or "http://127.0.0.1")
    except LookupError as exc:
        raise click.ClickException(f"[plugins.source-a2a] agents: {exc}") from None
    if agent is not None and agent not in served:
        raise click.ClickException(
            f"agent {agent!r} is not served over A2A (served: {', '.join(served)})"
        )
    chosen = {agent: served[agent]} if agent else served
    click.echo(json.dumps({n: agent_card_to_dict(c) for n, c in chosen.items()}, indent=2))


@a2a.command("check")
@click.option(
    "--wait",
    "wait_seconds",
    type=click.FloatRange(min=0),
    default=0.0,
    metavar="SECONDS",
    help="Check again until nothing fails, for at most SECONDS (a runtime starting).",
)
@pass_state
def check(state: CliState, wait_seconds: float) -> None:
    """Check what is served over A2A: where (a configured A2A that nothing serves is a
    warning), every card is valid (a2a-sdk's required fields), and, on its own port or
    with ``public_url`` set, answered at its address. Exit 1 on a failure (``toolang
    doctor`` reports the same findings)."""
    import time

    from toolang_source_a2a.health import findings

    deadline = time.monotonic() + wait_seconds
    while True:
        found = list(findings(state.runtime))
        failed = any(status == "fail" for status, _ in found)
        if not failed or time.monotonic() >= deadline:
            break
        time.sleep(0.2)
    for status, text in found:
        click.echo(f"{status:<5} {text}")
    if failed:
        raise SystemExit(1)
