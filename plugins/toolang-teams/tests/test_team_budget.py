"""A team's spend budget: every member's run draws on it, a run that would go past it
stops with ``budget_exceeded`` (no tool call made, the member not blamed), and a team
whose budget is spent takes no more tasks — naming what was spent."""

from __future__ import annotations

import asyncio

import pytest
from teams_helpers import coordinator, team_runtime

from toolang_core import TurnStatus
from toolang_core.testing.cast import Cast
from toolang_core.testing.models import text, tokens, tool_call
from toolang_teams import budget
from toolang_teams.coordinator import FormRequest
from toolang_teams.types import TeamError


def form(**kw) -> FormRequest:
    return FormRequest(
        owner="ada",
        parent_thread_id="chat:1",
        goal="survey",
        leader="lead",
        capability="survey",
        workers=1,
        id="team-1",
        **kw,
    )


def test_a_team_that_would_exceed_its_budget_stops_with_budget_exceeded(tmp_path):
    answers = iter(
        [
            text("first", usage=tokens(30, 10)),  # 40 of 100
            tool_call("hang", {"label": "never"}, usage=tokens(60, 10)),  # 110: over
        ]
    )
    the_cast = Cast(
        lead=lambda r: text("-"), **{w: lambda r: next(answers) for w in ("w1", "w2", "w3")}
    )
    runtime, recorder = team_runtime(tmp_path, the_cast)

    async def scenario():
        async with coordinator(runtime) as teams:
            team = await teams.form(form(budget_tokens=100))
            first = await teams.delegate(team.id, "one", owner="ada")
            second = await teams.delegate(team.id, "two", owner="ada")
            with pytest.raises(TeamError) as refused:
                await teams.delegate(team.id, "three", owner="ada")
            return first, second, str(refused.value), budget.spent(teams.store, team)

    first, second, refused, spent = asyncio.run(scenario())
    assert (first.status, first.chosen) == ("completed", "first")
    assert second.status == "failed"
    (candidate,) = second.candidates
    assert candidate.error == "budget exceeded: team team-1 spent 110 tokens of its budget of 100"
    assert second.reason == "budget_exceeded: team team-1 spent 110 tokens of its budget of 100"
    assert refused == second.reason
    assert (spent.total, spent.model_calls) == (110, 2)
    assert "team.member.left" not in recorder.kinds()  # the budget stopped it: no one to blame

    store = runtime.open_store()
    try:
        run = store.get(candidate.run_id)
        assert (run.status, run.outcome) == (TurnStatus.FAILED, "budget_exceeded")
        assert [s.kind for s in store.steps(run.id)].count("tool_call") == 0
    finally:
        store.close()


def test_a_budget_below_one_token_is_refused(tmp_path):
    runtime, _ = team_runtime(tmp_path, Cast())

    async def scenario():
        async with coordinator(runtime) as teams:
            await teams.form(form(budget_tokens=0))

    with pytest.raises(TeamError, match="budget_tokens must be at least 1, found 0"):
        asyncio.run(scenario())
