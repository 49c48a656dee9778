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
@pass_state
def check(state: CliState) -> None:
    """Check what is served over A2A: every card is valid (a2a-sdk's required fields),
    and, with ``listen`` or ``public_url`` set, answered at its address. Exit 1 on a
    failure."""
    import httpx
    from a2a.server.request_handlers.response_helpers import agent_card_to_dict
    from a2a.utils.errors import A2AError
    from a2a.utils.proto_utils import validate_proto_required_fields

    from toolang_source_a2a import settings_of
    from toolang_source_a2a.cards import cards

    runtime = state.runtime
    settings = settings_of(runtime)
    base = settings.public_url or (f"http://{settings.listen}" if settings.listen else "")
    failed = False

    def report(status: str, text: str) -> None:
        nonlocal failed
        failed = failed or status == "fail"
        click.echo(f"{status:<5} {text}")

    try:
        served = cards(runtime, settings, base or "http://127.0.0.1")
    except LookupError as exc:
        report("fail", f"[plugins.source-a2a] agents: {exc}")
        raise SystemExit(1) from None
    for name, card in served.items():
        try:
            validate_proto_required_fields(card)
            report("ok", f"card {name}: valid")
        except A2AError as exc:
            report("fail", f"card {name}: {exc.message} {exc.data or ''}".strip())
        if not base:
            report("info", f"card {name}: no listen or public_url; served by the server plugin")
            continue
        url = f"{base.rstrip('/')}/a2a/{name}/.well-known/agent-card.json"
        try:
            answer = httpx.get(url, timeout=5)
            answer.raise_for_status()
            same = answer.json().get("name") == agent_card_to_dict(card).get("name")
            report("ok" if same else "fail", f"card {name}: served at {url}")
        except (httpx.HTTPError, ValueError) as exc:
            report("fail", f"card {name}: not answered at {url}: {exc}")
    if failed:
        raise SystemExit(1)
