"""A member failing mid-task is marked unhealthy and replaced, and the team's task
completes or fails with a clear reason; the health sweep replaces unhealthy members and
hands the lead on."""

from __future__ import annotations

import asyncio

from teams_helpers import (
    LEAD,
    SPARE,
    TEAM_AGENTS,
    W1,
    W2,
    W3,
    coordinator,
    release,
    team_runtime,
    trust,
)

from toolang_core import AgentDefinition, PoolHealth
from toolang_core.testing.cast import Cast, agent_of
from toolang_core.testing.models import text, tool_call
from toolang_teams.coordinator import FormRequest, Scope
from toolang_teams.types import Strategy


def answer(request):
    name = agent_of(request)
    if name == "w2":
        raise RuntimeError("w2 crashed mid-task")
    return text("Paris")


def form(**kw) -> FormRequest:
    return FormRequest(
        owner="ada",
        parent_thread_id="chat:1",
        goal="g",
        leader="lead",
        capability="survey",
        **{"workers": 3, "strategy": Strategy.FAIL_ON_CONFLICT, "id": "team-1", **kw},
    )


def health(runtime, agent: str) -> PoolHealth:
    store = runtime.open_store()
    try:
        return runtime.agents.pool(store).get(agent).health
    finally:
        store.close()


def test_a_member_failing_mid_task_is_marked_unhealthy_and_replaced(tmp_path):
    cast = Cast(**{name: answer for name in ("w1", "w2", "w3", "w4")})
    runtime, recorder = team_runtime(tmp_path, cast, agents=(*TEAM_AGENTS, SPARE))
    for name in ("w1", "w2", "w3"):
        trust(runtime, name, successes=3)  # the spare ranks fourth at formation

    async def scenario():
        async with coordinator(runtime) as teams:
            team = await teams.form(form())
            assert "w4" not in {m.name for m in team.members}
            done = await asyncio.wait_for(teams.delegate(team.id, "capital?", owner="ada"), 60)
            return done, teams.get(team.id, owner="ada")

    done, team = asyncio.run(scenario())
    assert done.status == "completed" and done.chosen == "Paris"
    failed = next(c for c in done.candidates if c.member == "w2")
    assert not failed.ok and "w2 crashed mid-task" in failed.error
    assert {c.member for c in done.candidates if c.ok} == {"w1", "w3", "w4"}
    w2 = next(m for m in team.members if m.name == "w2")
    assert w2.status == "left" and w2.left_reason.startswith("its task run failed")
    assert health(runtime, "w2") is PoolHealth.UNHEALTHY
    kinds = recorder.kinds()
    left = kinds.index("team.member.left")
    assert kinds[left : left + 3] == [
        "team.member.left",
        "team.member.joined",
        "team.payment.agreed",
    ]
    assert recorder.events[left + 1].data == {
        "team_id": "team-1",
        "member": "w4",
        "role": "worker",
        "replaces": "w2",
    }


def test_with_no_replacement_and_no_success_the_task_fails_with_the_reason(tmp_path):
    def broken(request):
        raise RuntimeError(f"{agent_of(request)} is down")

    cast = Cast(w1=broken)
    runtime, _ = team_runtime(tmp_path, cast, agents=(LEAD, W1))

    async def scenario():
        async with coordinator(runtime) as teams:
            team = await teams.form(form(workers=1))
            return await asyncio.wait_for(teams.delegate(team.id, "capital?", owner="ada"), 60)

    done = asyncio.run(scenario())
    assert done.status == "failed"
    assert done.reason.startswith("no member succeeded (w1: ")
    assert "w1 is down" in done.reason


def test_the_health_sweep_replaces_an_unhealthy_worker_and_changes_an_unhealthy_leader(tmp_path):
    runtime, recorder = team_runtime(tmp_path, Cast(), agents=(LEAD, W1, W2, W3, SPARE))
    trust(runtime, "w1", successes=6)

    async def scenario():
        async with coordinator(runtime) as teams:
            team = await teams.form(form(workers=2))
            assert {m.name for m in team.active()} == {"lead", "w1", "w2"}
            teams.pool.mark_unhealthy("w2", "stopped answering")
            teams.pool.mark_unhealthy("lead", "stopped answering")
            return await teams.check_health(team.id, owner="ada")

    team = asyncio.run(scenario())
    assert team.leader == "w1"
    assert {(m.name, m.role.value) for m in team.active()} == {("w1", "leader"), ("w3", "worker")}
    kinds = recorder.kinds()
    assert kinds[-5:] == [
        "team.member.left",
        "team.member.joined",
        "team.payment.agreed",
        "team.leader.changed",
        "team.health.check",
    ]
    assert recorder.events[-1].data["health"] == {
        "lead": "unhealthy",
        "w1": "healthy",
        "w2": "unhealthy",
    }


def test_a_member_that_never_finishes_is_canceled_after_the_wait_and_replaced(tmp_path):
    hanging = AgentDefinition(name="w2", prefixes=("hang",), capabilities=("survey",))

    def answer_or_hang(request):
        if agent_of(request) == "w2":
            return tool_call("hang", {"label": "forever"})
        return text("Paris")

    cast = Cast(**{name: answer_or_hang for name in ("w1", "w2", "w3", "w4")})
    runtime, _ = team_runtime(tmp_path, cast, agents=(LEAD, W1, hanging, W3, SPARE))
    for name in ("w1", "w2", "w3"):
        trust(runtime, name, successes=3)

    async def scenario():
        async with coordinator(runtime) as teams:
            team = await teams.form(form())
            try:
                return await asyncio.wait_for(
                    teams.delegate(team.id, "capital?", owner="ada", scope=Scope(wait_seconds=1.0)),
                    60,
                )
            finally:
                release(runtime, "forever")

    done = asyncio.run(scenario())
    assert done.status == "completed" and done.chosen == "Paris"
    stuck = next(c for c in done.candidates if c.member == "w2")
    assert not stuck.ok and stuck.error == "did not finish within 1 s (canceled)"
    assert {c.member for c in done.candidates if c.ok} == {"w1", "w3", "w4"}
    assert health(runtime, "w2") is PoolHealth.UNHEALTHY


def test_the_serving_runtime_sweeps_teams_with_an_unhealthy_member_at_start_up(tmp_path):
    runtime, _ = team_runtime(tmp_path, Cast(), agents=(LEAD, W1, W2, W3, SPARE))

    async def form_team():
        async with coordinator(runtime) as teams:
            await teams.form(form(workers=2, id="team-a"))

    async def restart(again):
        async with coordinator(again) as teams:
            # start-up runs the first upkeep right after serving begins: poll for it
            deadline = asyncio.get_running_loop().time() + 10
            while "team.health.check" not in recorder.kinds():
                assert asyncio.get_running_loop().time() < deadline, recorder.kinds()
                await asyncio.sleep(0.01)
            return teams.get("team-a", owner=None)

    asyncio.run(form_team())
    store = runtime.open_store()
    try:
        runtime.agents.pool(store).mark_unhealthy("w1", "stopped answering")
    finally:
        store.close()
    again, recorder = team_runtime(tmp_path, Cast(), agents=(LEAD, W1, W2, W3, SPARE))
    team = asyncio.run(restart(again))
    assert {m.name for m in team.active()} == {"lead", "w2", "w3"}
    assert recorder.kinds() == [
        "team.member.left",
        "team.member.joined",
        "team.payment.agreed",
        "team.health.check",
    ]
