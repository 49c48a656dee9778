"""The pool's scheduled heartbeat of remote agents meets a team: a ping that finds a
remote member unreachable makes it unhealthy, and the team sweep replaces it (the
pings alone: the core's tests/test_pool_ping.py)."""

from __future__ import annotations

import asyncio

from teams_helpers import LEAD, W1, W2, W3, coordinator, team_runtime

from toolang_agent_pool.ping import PingSchedule
from toolang_core.testing.cast import Cast
from toolang_core.testing.pool import ManualClock, PingedRemote, assert_found_far_unreachable
from toolang_teams.coordinator import FormRequest
from toolang_teams.types import Strategy


def remote_runtime(tmp_path, remote: PingedRemote):
    return team_runtime(tmp_path, Cast(), agents=(LEAD, W1, W2, W3), plugins=[("remote", remote)])


def test_a_ping_finding_a_remote_member_unreachable_gets_it_swept_out_of_its_team(tmp_path):
    remote = PingedRemote()
    runtime, recorder = remote_runtime(tmp_path, remote)
    clock = ManualClock()

    async def scenario():
        async with coordinator(runtime) as teams:
            request = FormRequest(
                owner="ada",
                parent_thread_id="chat:1",
                goal="g",
                leader="lead",
                capability="survey",
                workers=3,
                strategy=Strategy.MAJORITY_VOTE,
                id="team-1",
            )
            team = await teams.form(request)
            before = teams.pool.get("far")
            remote.state = "unreachable"
            schedule = PingSchedule(10, clock)
            clock.now += 10
            found = await schedule.run(runtime, teams.pool)
            after = teams.pool.get("far")
            await teams.sweep()
            return team, before, found, after, teams.get("team-1", owner="ada")

    team, before, found, after, swept = asyncio.run(scenario())
    assert [m.name for m in team.active()] == ["lead", "far", "w1", "w2"]
    assert_found_far_unreachable(remote, before, found, after)
    left = next(m for m in swept.members if m.name == "far")
    assert (left.status, left.left_reason) == ("left", "unhealthy in the agent pool")
    assert [m.name for m in swept.active()] == ["lead", "w1", "w2", "w3"]
    assert recorder.kinds()[-4:] == [
        "team.member.left",
        "team.member.joined",
        "team.payment.agreed",
        "team.health.check",
    ]
