"""A team's spend budget: the tokens every run of the team may spend together.

Each member's task run draws on the team's :class:`~toolang_core.SpendBudget` (scope
``team:<id>``): the runtime stops a run whose model call would go past it with
``budget_exceeded`` (docs/spend-limits.md); the coordinator takes no task for a team
whose budget is used up and replaces no member a budget stopped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolang_core import BUDGET_EXCEEDED, SpendBudget, Usage, UsageFilter

if TYPE_CHECKING:
    from toolang_core import ExecutionStore
    from toolang_teams.types import Team


def scope(team: Team) -> str:
    return f"team:{team.id}"


def of(team: Team) -> SpendBudget | None:
    """The budget every run of ``team`` draws on (``None``: it has none)."""
    if team.budget_tokens is None:
        return None
    return SpendBudget(scope(team), team.budget_tokens, f"team {team.id}")


def spent(store: ExecutionStore, team: Team) -> Usage:
    """What every run of ``team`` spent so far (its stored model calls)."""
    return store.usage(UsageFilter(budget=scope(team)))


def over(store: ExecutionStore, team: Team) -> str | None:
    """Why ``team`` may take no more work (``None`` while its budget lasts): names what
    was spent and the budget."""
    budget = of(team)
    if budget is None:
        return None
    total = spent(store, team).total
    if total < budget.tokens:
        return None
    return (
        f"{BUDGET_EXCEEDED}: team {team.id} spent {total} tokens of its budget of {budget.tokens}"
    )
