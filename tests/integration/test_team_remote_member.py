"""A team with a remote member: the leader's runtime (in this process) forms a team of
three ``survey`` workers from its pool — two local agents and ``far``, an AGENT.md
agent served over A2A by another `toolang run` process — and delegates one task.

The answers: local ``w1`` says ``Paris``, the remote ``far`` says ``paris.`` (it
agrees with w1), local ``w2`` says ``Lyon`` (the differing one, and the most trusted
worker). So ``trust_weighted`` picks w2's Lyon, ``majority_vote`` the remote's
``paris.``, ``leader_decides`` whatever the leader picks (Lyon, against the majority),
and ``fail_on_conflict`` fails listing both answers.

Then the boundary (a secret outside the context filter's allow-list reaches no member,
local or remote) and the remote going away: SIGKILLed while it holds a team task (the
run fails at once, the member is replaced or the team goes on without it), or between
tasks (the pool's scheduled ping notices, and notices it back).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from team_leader_kit import LOCAL, SPARE, TASK, cast, form, leader, teams_of, trust, until
from team_remote_kit import RemoteMember, install_kit

from toolang_core import AgentDefinition, PoolHealth, TurnFilter
from toolang_core.store.sqlite import SQLiteStore
from toolang_core.testing.cast import agent_of, user_text
from toolang_core.testing.processes import wait_for
from toolang_teams.coordinator import Scope
from toolang_teams.types import ContextFilter, Strategy, TeamStatus

SECRET = "sk-TEAM-SECRET-42"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("site")
    install_kit(root)
    return root


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory, site: Path) -> Iterator[RemoteMember]:
    """One remote process for the tests that leave it alive (it costs a start)."""
    member = RemoteMember(tmp_path_factory.mktemp("far"), site, answer="paris.").start()
    yield member
    member.stop()


BOUND = Scope(timeout_seconds=30, wait_seconds=30)
EXPECTED_EVENTS = [
    *["team.member.joined"] * 4,
    *["team.payment.agreed"] * 3,
    "team.formed",
    "team.task.delegated",
    "team.conflict.detected",
    "team.task.completed",
]


def test_the_remote_member_is_in_the_pool_with_its_card_capability_and_health(tmp_path, remote):
    runtime, _ = leader(tmp_path / "lead", remote, cast())

    async def pooled():
        async with teams_of(runtime) as teams:
            return teams.pool.get("far"), teams.pool.select("survey", 3)

    far, selection = asyncio.run(pooled())
    assert far is not None
    assert far.source == "remote"
    assert "survey" in far.capabilities  # a skill of its card, from its AGENT.md
    assert far.health is PoolHealth.HEALTHY  # never called, but its card was read
    assert far.stats.last_seen is not None
    assert [m.name for m in selection.chosen] == ["far", "w1", "w2"]  # ties by name


def test_each_strategy_resolves_two_local_and_one_remote_answer_as_documented(tmp_path, remote):
    the_cast = cast()
    runtime, recorder = leader(tmp_path / "lead", remote, the_cast)
    trust(runtime, "w2", successes=20)  # w2, with the differing answer, is most trusted
    before = len(remote.seen())

    async def scenario():
        done = {}
        async with teams_of(runtime) as teams:
            for strategy in Strategy:
                team = await teams.form(form(strategy, f"team-{strategy.value}"))
                done[strategy] = await teams.delegate(team.id, TASK, owner="ada", scope=BOUND)
        return done

    done = asyncio.run(asyncio.wait_for(scenario(), 120))

    for strategy, task in done.items():
        assert sorted((c.member, c.ok, c.result) for c in task.candidates) == [
            ("far", True, "paris."),
            ("w1", True, "Paris"),
            ("w2", True, "Lyon"),
        ], strategy
        assert all(c.run_id for c in task.candidates)
    trusted = done[Strategy.TRUST_WEIGHTED]
    assert (trusted.status, trusted.chosen, trusted.chosen_member) == ("completed", "Lyon", "w2")
    assert trusted.reason.startswith("w2 has the highest trust")
    majority = done[Strategy.MAJORITY_VOTE]
    assert (majority.status, majority.chosen_member) == ("completed", "far")
    assert majority.chosen == "paris."  # the remote's words
    assert majority.reason == "2 of 3 successful members agree"
    leader_pick = done[Strategy.LEADER_DECIDES]
    assert (leader_pick.status, leader_pick.chosen, leader_pick.chosen_member) == (
        "completed",
        "Lyon",
        "w2",
    )
    assert leader_pick.reason.startswith("the leader picked candidate ")
    (shown,) = [user_text(r) for r in the_cast.requests_of("lead")]
    assert {line.split(". ", 1)[1] for line in shown.splitlines() if line[:1].isdigit()} == {
        "Lyon",
        "paris.",
    }
    conflict = done[Strategy.FAIL_ON_CONFLICT]
    assert (conflict.status, conflict.chosen) == ("failed", None)
    assert conflict.reason == "conflict: 2 distinct results (w2: 'Lyon'; far: 'paris.')"

    # the remote process answered every team's task itself, once each
    asked = remote.seen()[before:]
    assert len(asked) == 4
    assert all(TASK in seen[-1] and "- agent: far" in seen[0] for seen in asked)

    for strategy in Strategy:
        team_id = f"team-{strategy.value}"
        events = [e for e in recorder.events if e.data["team_id"] == team_id]
        assert [e.kind for e in events] == EXPECTED_EVENTS, strategy
        joined = [e.data["member"] for e in events if e.kind == "team.member.joined"]
        assert joined == ["lead", "w2", "far", "w1"]
        assert events[-2].data["results"] == ["Lyon", "paris."]
        completed = events[-1].data
        assert completed["status"] == done[strategy].status
        assert completed["chosen_member"] == done[strategy].chosen_member


def test_a_secret_outside_the_allow_list_reaches_no_member_local_or_remote(tmp_path, remote):
    the_cast = cast()
    runtime, _ = leader(tmp_path / "lead", remote, the_cast)
    before = len(remote.seen())

    async def scenario():
        async with teams_of(runtime) as teams:
            team = await teams.form(
                form(
                    Strategy.MAJORITY_VOTE,
                    "team-filtered",
                    context_filter=ContextFilter(allow=("ticket",)),
                )
            )
            done = await teams.delegate(
                team.id,
                TASK,
                owner="ada",
                context={"ticket": "OPS-7", "api_key": SECRET},
                scope=BOUND,
            )
            runs = [runtime.task_runs.get(c.run_id, owner="ada") for c in done.candidates]
            return done, runs

    done, runs = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert done.status == "completed"
    local = [r for r in the_cast.requests if agent_of(r) in ("w1", "w2")]
    assert len(local) == 2
    for request in local:
        assert all(SECRET not in m.content for m in request.messages)
        assert "- ticket: OPS-7" in user_text(request)
    (received,) = remote.seen()[before:]  # everything the remote model saw
    assert "- ticket: OPS-7" in received[-1]
    assert all(SECRET not in content for content in received)
    # nor the turn request the remote stored for it, nor anything else in its store
    store = SQLiteStore(remote.home / ".toolang" / "toolang.db")
    try:
        (turn,) = [t for t in store.list_turns(TurnFilter(limit=50)) if "OPS-7" in t.input]
    finally:
        store.close()
    assert turn.owner == "a2a:leader-a" and SECRET not in turn.input
    for path in (remote.home / ".toolang").glob("toolang.db*"):
        assert SECRET.encode() not in path.read_bytes(), path
    for run in runs:
        assert "api_key" not in run.metadata and run.metadata["ticket"] == "OPS-7"
        assert SECRET not in json.dumps(run.metadata)


def kill_mid_task(tmp_path, site, *agents: AgentDefinition):
    """Delegate a task the remote member holds until its process is SIGKILLed; the
    team task, the team afterwards, far in the pool, the events, the remote's URL."""
    doomed = RemoteMember(tmp_path / "doomed", site, answer="never sent").start()
    runtime, recorder = leader(tmp_path / "lead", doomed, cast(), *agents)
    try:

        async def scenario():
            async with teams_of(runtime) as teams:
                team = await teams.form(form(Strategy.MAJORITY_VOTE, "team-kill"))
                assert "far" in [m.name for m in team.active()]
                delegated = asyncio.create_task(
                    teams.delegate(team.id, "slow: " + TASK, owner="ada", scope=BOUND)
                )
                # the remote holds the task (its model saw it), then it dies
                await asyncio.to_thread(wait_for, lambda: bool(doomed.seen()), 30, "far's task")
                doomed.kill()
                done = await delegated
                return done, teams.get(team.id, owner="ada"), teams.pool.get("far")

        done, team, far = asyncio.run(asyncio.wait_for(scenario(), 90))
    finally:
        doomed.stop()
    kinds = [e.kind for e in recorder.events if e.data["team_id"] == "team-kill"]
    return done, team, far, kinds, recorder, doomed


def test_a_remote_member_killed_mid_task_with_no_spare_leaves_and_the_others_finish(tmp_path, site):
    done, team, far, kinds, _, doomed = kill_mid_task(tmp_path, site, *LOCAL)
    (failed,) = [c for c in done.candidates if not c.ok]
    assert failed.member == "far" and doomed.endpoint in failed.error
    assert far is not None and far.health is PoolHealth.UNHEALTHY
    left = next(m for m in team.members if m.name == "far")
    assert left.status == "left"
    assert left.left_reason.startswith("its task run failed: ") and "unreachable" in (
        left.left_reason
    )
    assert [m.name for m in team.active()] == ["lead", "w1", "w2"]  # degraded: two workers
    assert done.status == "completed"
    assert (done.chosen, done.reason) == ("Paris", "1 of 2 successful members agree")
    assert kinds[-4:] == [
        "team.task.delegated",
        "team.member.left",
        "team.conflict.detected",
        "team.task.completed",
    ]


def test_a_remote_member_killed_mid_task_is_replaced_and_the_task_completes(tmp_path, site):
    done, team, far, kinds, recorder, doomed = kill_mid_task(tmp_path, site, *LOCAL, SPARE)

    # far's task run failed with a clear reason; far is unhealthy and left; w3 took over
    (failed,) = [c for c in done.candidates if not c.ok]
    assert failed.member == "far"
    assert f"remote agent at {doomed.endpoint} is unreachable" in failed.error, failed.error
    assert far is not None and far.health is PoolHealth.UNHEALTHY
    assert "unreachable" in far.stats.last_error
    left = {m.name: m for m in team.members if m.status == "left"}
    assert list(left) == ["far"] and "its task run failed" in left["far"].left_reason
    assert [m.name for m in team.active()] == ["lead", "w1", "w2", "w3"]
    assert done.status == "completed" and done.chosen == "Paris"
    assert sorted(c.member for c in done.candidates if c.ok) == ["w1", "w2", "w3"]
    assert team.status is TeamStatus.ACTIVE
    assert kinds[-6:] == [
        "team.task.delegated",
        "team.member.left",
        "team.member.joined",
        "team.payment.agreed",
        "team.conflict.detected",
        "team.task.completed",
    ]
    replaced = next(e for e in recorder.events if e.data.get("replaces") == "far")
    assert replaced.data["member"] == "w3"


def test_the_pool_pings_a_remote_member_out_of_its_team_and_back_into_the_pool(tmp_path, site):
    """No task in flight: only the scheduled ping (every 0.2 s here, on the runtime's
    heartbeat) notices the remote process is gone, and that it is back."""
    far = RemoteMember(tmp_path / "far", site, answer="paris.").start()
    runtime, recorder = leader(
        tmp_path / "lead",
        far,
        cast(),
        *LOCAL,
        SPARE,
        extra="lease_seconds = 0.6\n\n[plugins.agent-pool]\nping_seconds = 0.2\n",
    )
    try:

        async def scenario():
            async with teams_of(runtime) as teams:
                team = await teams.form(form(Strategy.MAJORITY_VOTE, "team-pinged"))
                far.kill()

                def far_left() -> bool:
                    current = teams.get(team.id, owner="ada")
                    return "far" not in [m.name for m in current.active()]

                await until(far_left, 30, "the sweep to replace far")
                gone = teams.pool.get("far")
                far.start()  # back, on the same port
                await until(
                    lambda: teams.pool.get("far").health is PoolHealth.HEALTHY,
                    30,
                    "a ping to find far again",
                )
                again = teams.pool.select("survey", 4)
                return team, teams.get(team.id, owner="ada"), gone, again

        team, swept, gone, again = asyncio.run(asyncio.wait_for(scenario(), 90))
    finally:
        far.stop()
    assert "far" in [m.name for m in team.active()]
    assert gone.health is PoolHealth.UNHEALTHY
    assert gone.stats.last_error.startswith("card fetch: unreachable ping: ")
    assert gone.stats.total_calls == 0  # it was never called: the ping alone told
    left = next(m for m in swept.members if m.name == "far")
    assert left.left_reason == "unhealthy in the agent pool"
    assert [m.name for m in swept.active()] == ["lead", "w1", "w2", "w3"]
    kinds = [e.kind for e in recorder.events if e.data["team_id"] == "team-pinged"]
    assert kinds[-4:] == [
        "team.member.left",
        "team.member.joined",
        "team.payment.agreed",
        "team.health.check",
    ]
    assert "far" in [m.name for m in again.chosen]
