"""A remote team member that hangs: its process frozen with SIGSTOP while it should
answer a team task. The pool's scheduled ping finds it unreachable and the health sweep
replaces it (the spare ``w3`` joins) while its task run is still waiting; only then
does the run fail (the frozen process is killed: the call loses its connection, as a
run timing out would end it). The team task must finish with what it has: the local
workers' answers kept, the failed member not replaced a second time, and the member the
sweep brought given the task too.
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest
from team_leader_kit import LOCAL, SPARE, TASK, cast, form, leader, teams_of, until
from team_remote_kit import RemoteMember, install_kit

from toolang_teams.coordinator import Scope
from toolang_teams.types import Strategy


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("site")
    install_kit(root)
    return root


def test_a_frozen_member_replaced_by_the_sweep_mid_task_loses_no_answer(tmp_path, site):
    frozen = RemoteMember(tmp_path / "frozen", site, answer="never sent").start()
    runtime, recorder = leader(
        tmp_path / "lead",
        frozen,
        cast(),
        *LOCAL,
        SPARE,
        # pings every 0.2 s that give up on a card after 0.5 s: the frozen process is
        # found unreachable long before anything gives up on its task run
        extra="lease_seconds = 0.6\n\n[plugins.agent-pool]\nping_seconds = 0.2\n",
        card_timeout=0.5,
        call_timeout=600,  # far's call waits for the frozen process until it is killed
    )
    assert frozen.process is not None
    try:

        async def scenario():
            async with teams_of(runtime) as teams:
                team = await teams.form(form(Strategy.MAJORITY_VOTE, "team-frozen"))
                assert [m.name for m in team.active()] == ["lead", "far", "w1", "w2"]
                frozen.process.send_signal(signal.SIGSTOP)
                delegated = asyncio.create_task(
                    teams.delegate(
                        team.id,
                        TASK,
                        owner="ada",
                        scope=Scope(timeout_seconds=120, wait_seconds=120),
                    )
                )

                def far_replaced() -> bool:
                    current = teams.get(team.id, owner="ada")
                    return "w3" in [m.name for m in current.active()]

                await until(far_replaced, 60, "the health sweep to replace the frozen far")
                assert not delegated.done()  # far's run still waits for the frozen process
                frozen.kill()  # now far's run fails
                done = await delegated
                return done, teams.get(team.id, owner="ada")

        done, team = asyncio.run(asyncio.wait_for(scenario(), 180))
    finally:
        frozen.kill()
    by_member = {c.member: c for c in done.candidates}
    assert sorted(by_member) == ["far", "w1", "w2", "w3"]
    assert (by_member["w1"].ok, by_member["w1"].result) == (True, "Paris")  # kept
    assert (by_member["w2"].ok, by_member["w2"].result) == (True, "Lyon")  # kept
    assert (by_member["w3"].ok, by_member["w3"].result) == (True, "Paris")  # got the task
    assert not by_member["far"].ok and frozen.endpoint in by_member["far"].error
    assert done.status == "completed"
    assert (done.chosen, done.reason) == ("Paris", "2 of 3 successful members agree")
    far = next(m for m in team.members if m.name == "far")
    assert (far.status, far.left_reason) == ("left", "unhealthy in the agent pool")
    assert [m.name for m in team.active()] == ["lead", "w1", "w2", "w3"]
    kinds = [e.kind for e in recorder.events if e.data["team_id"] == "team-frozen"]
    assert kinds.count("team.member.left") == 1  # far left once, by the sweep
    assert kinds[-2:] == ["team.conflict.detected", "team.task.completed"]
