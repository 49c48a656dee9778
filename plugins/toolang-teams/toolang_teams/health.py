"""A team's health: replace unhealthy workers, hand on the lead, sweep every team.

Health comes from the agent pool (delegation outcomes; a remote agent's card fetch).
The serving runtime sweeps at start-up and after every heartbeat; only teams with an
unhealthy member are touched, so a healthy team sees no events.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
import structlog

from toolang_core import PoolHealth
from toolang_teams.types import Role, Team, TeamStatus

if TYPE_CHECKING:
    from toolang_teams.coordinator import TeamCoordinator

log = structlog.get_logger("toolang.teams")


def health_of(coordinator: TeamCoordinator, name: str) -> PoolHealth:
    """The pool's health of ``name`` (an agent no longer in the registry: unhealthy)."""
    member = coordinator.pool.get(name)
    return member.health if member else PoolHealth.UNHEALTHY


async def check(coordinator: TeamCoordinator, team_id: str, *, owner: str | None) -> Team:
    """See :meth:`TeamCoordinator.check_health`."""
    team = coordinator.get(team_id, owner=owner)
    if team.status.is_final:
        return team
    health = {m.name: health_of(coordinator, m.name) for m in team.active()}
    for member in team.active():
        if member.role is Role.WORKER and health[member.name] is PoolHealth.UNHEALTHY:
            team, _ = await coordinator.swap(team, member.name, "unhealthy in the agent pool")
    team = coordinator.get(team_id, owner=None)
    if health.get(team.leader) is PoolHealth.UNHEALTHY:
        team = await change_leader(coordinator, team)
    await coordinator.emit(
        team,
        "team.health.check",
        health={name: state.value for name, state in health.items()},
        members=[m.name for m in team.active()],
    )
    return team


async def sweep(coordinator: TeamCoordinator) -> list[str]:
    """See :meth:`TeamCoordinator.sweep`."""
    swept: list[str] = []
    for team in coordinator.list_teams(owner=None):
        if team.status is not TeamStatus.ACTIVE:
            continue
        if any(health_of(coordinator, m.name) is PoolHealth.UNHEALTHY for m in team.active()):
            await check(coordinator, team.id, owner=None)
            swept.append(team.id)
    return swept


async def change_leader(coordinator: TeamCoordinator, team: Team) -> Team:
    """The most trusted healthy worker (ties by name) leads; the old leader leaves.
    With no healthy worker the team keeps its leader (logged)."""
    workers = [
        (coordinator.pool.get(m.name), m)
        for m in team.active(Role.WORKER)
        if health_of(coordinator, m.name) is not PoolHealth.UNHEALTHY
    ]
    if not workers:
        log.warning("team.leader_unhealthy", team=team.id, leader=team.leader)
        return team
    _, heir = sorted(workers, key=lambda p: (-(p[0].trust if p[0] else 0.0), p[1].name))[0]
    old = team.leader

    def promote(now: Team) -> Team:
        members = tuple(
            attrs.evolve(m, role=Role.LEADER)
            if m.name == heir.name and m.role is Role.WORKER and m.status == "active"
            else attrs.evolve(m, status="left", left_reason="unhealthy leader")
            if m.name == old and m.role is Role.LEADER
            else m
            for m in now.members
        )
        return attrs.evolve(now, leader=heir.name, members=members)

    team = coordinator.update(team.id, promote)
    await coordinator.emit(team, "team.leader.changed", previous=old, leader=heir.name)
    return team
