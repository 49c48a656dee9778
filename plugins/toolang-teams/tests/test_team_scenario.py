"""A leader forms a team of three workers by capability and delegates one task; two
workers agree (modulo case and punctuation) and one differs. Each conflict strategy
gives its documented result, every candidate is recorded, events come in order."""

from __future__ import annotations

import asyncio

import pytest
from teams_helpers import coordinator, team_runtime, trust

from toolang_core.testing.cast import Cast, agent_of, user_text
from toolang_core.testing.models import text
from toolang_teams.coordinator import FormRequest
from toolang_teams.types import ContextFilter, Strategy, TeamError, TeamStatus

ANSWERS = {"w1": "Paris", "w2": "paris.", "w3": "Lyon"}


def worker(request):
    return text(ANSWERS[agent_of(request)])


def cast(leader_pick: str = "2", review: str = "APPROVE") -> Cast:
    return Cast(
        lead=lambda r: text(leader_pick),
        w1=worker,
        w2=worker,
        w3=worker,
        critic=lambda r: text(review),
    )


def form(strategy: Strategy, **kw) -> FormRequest:
    return FormRequest(
        owner="ada",
        parent_thread_id="chat:1",
        goal="capital survey",
        leader="lead",
        capability="survey",
        workers=3,
        strategy=strategy,
        id="team-1",
        **kw,
    )


def run_team(tmp_path, strategy: Strategy, the_cast: Cast | None = None, **kw):
    the_cast = the_cast or cast()
    runtime, recorder = team_runtime(tmp_path, the_cast)
    trust(runtime, "w3", successes=5)  # w3 is the most trusted worker

    async def scenario():
        async with coordinator(runtime) as teams:
            team = await teams.form(form(strategy, **kw))
            done = await teams.delegate(
                team.id, "What is the capital of France?", owner="ada", complete=True
            )
            return team, done, teams.get(team.id, owner="ada")

    team, done, stored = asyncio.run(scenario())
    return team, done, stored, recorder, the_cast


def test_majority_vote_picks_the_normalised_majority_and_events_come_in_order(tmp_path):
    team, done, stored, recorder, _ = run_team(tmp_path, Strategy.MAJORITY_VOTE)
    assert [(m.name, m.role.value) for m in team.members] == [
        ("lead", "leader"),
        ("w3", "worker"),
        ("w1", "worker"),
        ("w2", "worker"),
    ]
    assert done.status == "completed"
    assert (done.chosen, done.chosen_member) == ("Paris", "w1")
    assert done.reason == "2 of 3 successful members agree"
    assert sorted((c.member, c.result) for c in done.candidates) == [
        ("w1", "Paris"),
        ("w2", "paris."),
        ("w3", "Lyon"),
    ]
    assert all(c.run_id for c in done.candidates)
    assert stored.status is TeamStatus.COMPLETED and stored.tasks == (done,)
    assert recorder.kinds() == [
        *["team.member.joined"] * 4,
        *["team.payment.agreed"] * 3,
        "team.formed",
        "team.task.delegated",
        "team.conflict.detected",
        "team.task.completed",
    ]
    conflict = recorder.events[-2].data
    assert conflict["results"] == ["Lyon", "Paris"] or sorted(conflict["results"]) == [
        "Lyon",
        "Paris",
    ]


def test_trust_weighted_picks_the_most_trusted_successful_member(tmp_path):
    _, done, *_ = run_team(tmp_path, Strategy.TRUST_WEIGHTED)
    assert (done.chosen, done.chosen_member) == ("Lyon", "w3")
    assert done.reason.startswith("w3 has the highest trust")


def test_leader_decides_shows_the_leader_the_candidates_and_takes_its_pick(tmp_path):
    _, done, _, _, the_cast = run_team(tmp_path, Strategy.LEADER_DECIDES, cast(leader_pick="2"))
    (prompt,) = [user_text(r) for r in the_cast.requests_of("lead")]
    assert "1. Lyon" in prompt or "1. Paris" in prompt
    numbered = {line[3:]: line[0] for line in prompt.splitlines() if line[:1].isdigit()}
    assert set(numbered) == {"Lyon", "Paris"}
    picked = next(answer for answer, number in numbered.items() if number == "2")
    assert done.chosen == picked
    assert done.reason == "the leader picked candidate 2"


def test_fail_on_conflict_fails_listing_the_distinct_answers(tmp_path):
    _, done, stored, recorder, _ = run_team(tmp_path, Strategy.FAIL_ON_CONFLICT)
    assert done.status == "failed" and done.chosen is None
    assert done.reason.startswith("conflict: 2 distinct results (")
    assert "'Paris'" in done.reason and "'Lyon'" in done.reason
    assert len(done.candidates) == 3
    assert stored.status is TeamStatus.ACTIVE  # a failed task does not complete the team
    assert recorder.events[-1].data["status"] == "failed"


def test_a_reviewer_rejecting_the_result_fails_the_task(tmp_path):
    _, done, *_ = run_team(
        tmp_path, Strategy.MAJORITY_VOTE, cast(review="REJECT: wrong city"), reviewer="critic"
    )
    assert done.status == "failed"
    assert done.reason == "rejected by the reviewer critic: REJECT: wrong city"


def test_a_reviewer_approving_completes_the_task(tmp_path):
    _, done, *_ = run_team(tmp_path, Strategy.MAJORITY_VOTE, reviewer="critic")
    assert done.status == "completed" and done.chosen == "Paris"
    assert done.reason.endswith("approved by critic")


def test_a_secret_in_the_parents_context_never_reaches_a_members_prompt(tmp_path):
    the_cast = cast()
    runtime, _ = team_runtime(tmp_path, the_cast)

    async def scenario():
        async with coordinator(runtime) as teams:
            team = await teams.form(
                form(Strategy.MAJORITY_VOTE, context_filter=ContextFilter(allow=("ticket",)))
            )
            await teams.delegate(
                team.id,
                "What is the capital of France?",
                owner="ada",
                context={"ticket": "OPS-7", "api_key": "sk-SECRET-123"},
            )
            return [runtime.task_runs.get(r.id, owner="ada") for r in runtime.task_runs.list()]

    runs = asyncio.run(scenario())
    for request in the_cast.requests:
        assert all("sk-SECRET-123" not in m.content for m in request.messages)
    prompts = [user_text(r) for r in the_cast.requests]
    assert len(prompts) == 3 and all("- ticket: OPS-7" in p for p in prompts)
    assert all(
        "api_key" not in run.metadata and run.metadata["team_id"] == "team-1" for run in runs
    )
    assert {run.metadata["team_member"] for run in runs} == {"w1", "w2", "w3"}


def test_forming_without_any_agent_for_the_capability_says_why(tmp_path):
    runtime, _ = team_runtime(tmp_path, cast())

    async def scenario():
        async with coordinator(runtime) as teams:
            await teams.form(attrs_evolve(form(Strategy.MAJORITY_VOTE), capability="juggling"))

    with pytest.raises(
        TeamError, match=r"no agent available for capability 'juggling'.*w1: does not advertise"
    ):
        asyncio.run(scenario())


def attrs_evolve(request, **changes):
    import attrs

    return attrs.evolve(request, **changes)


def test_another_owner_cannot_see_delegate_to_or_disband_the_team(tmp_path):
    runtime, recorder = team_runtime(tmp_path, cast())

    async def scenario():
        async with coordinator(runtime) as teams:
            team = await teams.form(form(Strategy.MAJORITY_VOTE))
            with pytest.raises(TeamError, match="not found"):
                teams.get(team.id, owner="eve")
            with pytest.raises(TeamError, match="not found"):
                await teams.delegate(team.id, "x", owner="eve")
            with pytest.raises(TeamError, match="not found"):
                await teams.disband(team.id, owner="eve")
            assert teams.list_teams(owner="eve") == []
            gone = await teams.disband(team.id, owner="ada", reason="done")
            with pytest.raises(TeamError, match="is disbanded"):
                await teams.delegate(team.id, "x", owner="ada")
            return gone

    gone = asyncio.run(scenario())
    assert gone.status is TeamStatus.DISBANDED
    assert recorder.kinds()[-5:] == [*["team.member.left"] * 4, "team.disbanded"]


def test_an_observer_joins_without_a_task_or_payment_terms(tmp_path):
    _, done, stored, recorder, the_cast = run_team(
        tmp_path, Strategy.MAJORITY_VOTE, observers=("critic",)
    )
    assert [(m.name, m.role.value) for m in stored.members][-1] == ("critic", "observer")
    assert "critic" not in {p.member for p in stored.payments}
    assert "critic" not in {c.member for c in done.candidates}
    assert the_cast.requests_of("critic") == []
    joined = [e.data["member"] for e in recorder.events if e.kind == "team.member.joined"]
    assert joined[-1] == "critic"
