"""The model-facing team tools: ``team_form``, ``team_delegate``, ``team_status``,
``team_disband`` (owned by the automator role, like the other delegation tools).

The caller's identity — owner, thread, turn, and the agent that becomes the leader —
always comes from the turn the call belongs to, never from a parameter. A team's runs
are children of the calling turn: nesting, depth and fan-out limits are checked as for
``start_task_run``, and a wait never outlasts the chain's tool timeout.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolang_core import (
    ToolCallContext,  # the hints make the schema
    check_fan_out,
    check_nesting,
    controller_of,
    current_turn,
    wait_budget,
)
from toolang_teams import budget
from toolang_teams.types import ContextFilter, Strategy, Team, TeamError

if TYPE_CHECKING:
    from toolang_teams.coordinator import TeamCoordinator

# The coordinator (and the pool and health code under it) is imported by the first
# team tool call, not when the tools are registered: every run registers them, few call
# them (a one-shot `toolang chat` never does).


def _coordinator(context: ToolCallContext | None) -> TeamCoordinator:
    from toolang_teams.coordinator import TeamCoordinator

    controller = controller_of(context)
    return TeamCoordinator(controller.runtime, controller)


def _view(team: Team, spent: int | None = None) -> dict[str, Any]:
    spend = {} if team.budget_tokens is None else {"budget_tokens": team.budget_tokens}
    if spent is not None and spend:
        spend["spent_tokens"] = spent
    return {
        **spend,
        "team_id": team.id,
        "goal": team.goal,
        "status": team.status.value,
        "leader": team.leader,
        "strategy": team.strategy.value,
        "members": [
            {"name": m.name, "role": m.role.value, "status": m.status} for m in team.members
        ],
        "tasks": [
            {"id": t.id, "status": t.status, "chosen": t.chosen, "reason": t.reason}
            for t in team.tasks
        ],
    }


async def team_form(
    *,
    goal: str,
    capability: str,
    workers: int = 3,
    strategy: str = "majority_vote",
    reviewer: str = "",
    share_context: list[str] | None = None,
    budget_tokens: int = 0,
    context: ToolCallContext | None = None,
) -> dict[str, Any]:
    """Form a team you lead: WORKERS agents advertising CAPABILITY, chosen from the
    agent pool by health and trust. Returns the team with its id.

    :param goal: what the team is for
    :param capability: the capability every worker must advertise
    :param workers: how many workers (default 3)
    :param strategy: how the workers' answers become one: "majority_vote",
        "trust_weighted", "leader_decides" (you pick) or "fail_on_conflict"
    :param reviewer: an agent that reviews each result before it counts (optional)
    :param share_context: the only keys of this turn's metadata members may see
        (default: none)
    :param budget_tokens: the tokens all the team's runs together may spend
        (0: no budget); once spent, the team takes no more tasks
    """
    turn = current_turn(context)
    assert context is not None
    try:
        chosen = Strategy(strategy.strip() or "majority_vote")
    except ValueError:
        names = ", ".join(s.value for s in Strategy)
        raise TeamError(f'team_form: unsupported strategy "{strategy}" ({names})') from None
    from toolang_teams.coordinator import FormRequest

    team = await _coordinator(context).form(
        FormRequest(
            owner=turn.owner,
            parent_thread_id=context.thread_id,
            goal=goal,
            leader=context.agent or turn.runtime.config.agents.default,
            capability=capability,
            workers=workers,
            strategy=chosen,
            reviewer=reviewer.strip() or None,
            # Nothing of the turn's metadata crosses the boundary unless it is named here.
            context_filter=ContextFilter(allow=tuple(share_context or ())),
            budget_tokens=budget_tokens or None,
        )
    )
    return _view(team)


async def team_delegate(
    *, team_id: str, task: str, context: ToolCallContext | None = None
) -> dict[str, Any]:
    """Send TASK to every worker of your team at once and wait for the resolved result.
    Returns the chosen result, why it was chosen and every worker's answer.

    :param team_id: the team (from team_form)
    :param task: the complete task for every worker
    """
    turn = current_turn(context)
    assert context is not None
    depth = check_nesting(context)
    coordinator = _coordinator(context)
    check_fan_out(coordinator.controller, context)
    # Two rounds of runs (workers, then replacements) plus the leader's pick and the
    # review must fit in the chain's tool timeout.
    budget = wait_budget(context, None)
    from toolang_teams.coordinator import Scope

    scope = Scope(
        parent_turn_id=context.turn_id,
        spawn_depth=depth,
        timeout_seconds=budget / 4,
        wait_seconds=budget / 4,
    )
    with turn.waiting():
        done = await coordinator.delegate(
            team_id,
            task,
            owner=turn.owner,
            context={str(k): str(v) for k, v in turn.request.meta.items()},
            scope=scope,
        )
    return {
        "team_id": team_id,
        "task_id": done.id,
        "status": done.status,
        "result": done.chosen,
        "chosen_member": done.chosen_member,
        "reason": done.reason,
        "candidates": [
            {"member": c.member, "ok": c.ok, "result": c.result, "error": c.error}
            for c in done.candidates
        ],
    }


def team_status(team_id: str = "", context: ToolCallContext | None = None) -> dict[str, Any]:
    """Show one of your teams (members, roles, tasks), or list them all.

    :param team_id: the team (empty: list your teams)
    """
    turn = current_turn(context)
    coordinator = _coordinator(context)
    if team_id.strip():
        team = coordinator.get(team_id.strip(), owner=turn.owner)
        return _view(team, budget.spent(coordinator.store, team).total)
    return {"teams": [_view(t) for t in coordinator.list_teams(owner=turn.owner)]}


async def team_disband(
    team_id: str, reason: str = "", context: ToolCallContext | None = None
) -> dict[str, Any]:
    """Disband one of your teams: every member leaves.

    :param team_id: the team
    :param reason: why (recorded)
    """
    turn = current_turn(context)
    team = await _coordinator(context).disband(team_id.strip(), owner=turn.owner, reason=reason)
    return _view(team)


TOOLS = (team_form, team_delegate, team_status, team_disband)
