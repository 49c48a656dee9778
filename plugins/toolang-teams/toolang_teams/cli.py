"""``toolang teams``: the teams in the execution store (the operator's view: every
owner), and disbanding one."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import click

from toolang_core.cli import CliState, echo_json, pass_state, table

_JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


@click.group()
def teams() -> None:
    """Teams of agents: list, show, disband."""


def _when(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds")


@teams.command("list")
@_JSON
@pass_state
def list_teams(state: CliState, as_json: bool) -> None:
    """Every team, newest first: id, status, leader, members, tasks, goal."""
    from toolang_core import StoreMissing, TaskRunController
    from toolang_teams.coordinator import TeamCoordinator

    try:
        store = state.open_store(read_only=True)
    except StoreMissing:  # nothing has run yet, so no team was formed
        found = []
    else:
        try:
            coordinator = TeamCoordinator(state.runtime, TaskRunController(store, state.runtime))
            found = coordinator.list_teams(owner=None)
        finally:
            store.close()
    if as_json:
        echo_json([t.to_json() for t in found])
        return
    table(
        [
            [
                t.id,
                t.status.value,
                t.leader,
                str(len(t.active())),
                str(len(t.tasks)),
                _when(t.created_at),
                t.goal,
            ]
            for t in found
        ],
        ["TEAM", "STATUS", "LEADER", "MEMBERS", "TASKS", "CREATED", "GOAL"],
    )


@teams.command()
@click.argument("team_id")
@_JSON
@pass_state
def show(state: CliState, team_id: str, as_json: bool) -> None:
    """One team: its members and roles, payment terms and every task with its candidates."""
    from toolang_core import TaskRunController
    from toolang_teams import budget
    from toolang_teams.coordinator import TeamCoordinator
    from toolang_teams.types import TeamError

    store = state.open_store(read_only=True)
    try:
        team = TeamCoordinator(state.runtime, TaskRunController(store, state.runtime)).get(
            team_id, owner=None
        )
        spent = budget.spent(store, team)
    except TeamError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        store.close()
    if as_json:
        echo_json({**team.to_json(), "spent": spent.to_json()})
        return
    click.echo(f"team {team.id} ({team.status.value}): {team.goal}")
    click.echo(f"owner {team.owner}, strategy {team.strategy.value}, capability {team.capability}")
    for m in team.members:
        left = f" ({m.left_reason})" if m.left_reason else ""
        click.echo(f"  {m.role.value:<9} {m.name} {m.status}{left}")
    of = f" of its budget of {team.budget_tokens}" if team.budget_tokens is not None else ""
    calls = "model call" if spent.model_calls == 1 else "model calls"
    click.echo(f"spent {spent.total} tokens{of} in {spent.model_calls} {calls}")
    for p in team.payments:
        click.echo(f"  pays {p.member}: {p.mode} {p.price_per_use:g} {p.currency}".rstrip())
    for task in team.tasks:
        chosen = f" -> {task.chosen!r} ({task.chosen_member})" if task.chosen else ""
        click.echo(f"task {task.id} {task.status}{chosen}: {task.reason}")
        for c in task.candidates:
            click.echo(
                f"    {c.member}: {c.result!r}" if c.ok else f"    {c.member}: failed: {c.error}"
            )


@teams.command()
@click.argument("team_id")
@click.option("--reason", default="disbanded by the operator", show_default=True)
@pass_state
def disband(state: CliState, team_id: str, reason: str) -> None:
    """Disband a team: every member leaves (events are published)."""
    from toolang_core import TaskRunController
    from toolang_teams.coordinator import TeamCoordinator
    from toolang_teams.types import TeamError

    store = state.open_store(read_only=False)
    try:
        coordinator = TeamCoordinator(state.runtime, TaskRunController(store, state.runtime))
        team = asyncio.run(coordinator.disband(team_id, owner=None, reason=reason))
    except TeamError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        store.close()
    click.echo(f"team {team.id} {team.status.value}")
