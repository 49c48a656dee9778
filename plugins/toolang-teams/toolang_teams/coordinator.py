"""The team coordinator: form a team from the pool, delegate a task to every worker as
task runs, resolve their results, review, sweep health, disband.

Every worker's task (and the leader's pick, and the reviewer's review) is a task run on
the one controller — limits, budgets, cancellation, transcripts and owner checks apply
— with ``team_id``, ``team_member`` and ``team_role`` in its metadata. Teams are stored
as records (kind ``team``) in the execution store; every change is stored before its
event is published through ``toolang_on_event``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs
import structlog

from toolang_core import (
    Event,
    PaymentTerms,
    SpawnRequest,
    TaskRunStatus,
    describe_exception,
    may_see,
    new_id,
)
from toolang_core.store import RecordConflict
from toolang_teams import budget, health, resolve
from toolang_teams.types import (
    KIND,
    Candidate,
    ContextFilter,
    Member,
    Role,
    Strategy,
    Team,
    TeamError,
    TeamStatus,
    TeamTask,
)

if TYPE_CHECKING:
    from toolang_core import AgentPool, ExecutionStore, RuntimeView, TaskRunController

log = structlog.get_logger("toolang.teams")

UPDATE_TRIES = 20
"""How often :meth:`TeamCoordinator.update` reads and writes again when other writers
keep changing the team under it."""


@attrs.frozen
class FormRequest:
    """What forming a team needs. ``workers`` agents advertising ``capability`` come from
    the pool (never the leader); ``reviewer`` names an agent that reviews each resolved
    result; ``observers`` are members that are told nothing and given no task (they
    follow the team through its events); ``max_uses`` / ``valid_seconds`` go into every
    paid member's payment terms. ``budget_tokens`` is what every run of the team
    together may spend: a run stops with ``budget_exceeded`` once it is used up, and
    the team takes no task after that."""

    owner: str
    parent_thread_id: str
    goal: str
    leader: str
    capability: str
    workers: int = 3
    strategy: Strategy = Strategy.MAJORITY_VOTE
    reviewer: str | None = None
    observers: tuple[str, ...] = ()
    context_filter: ContextFilter = attrs.field(factory=ContextFilter)
    max_uses: int | None = None
    valid_seconds: float | None = None
    id: str | None = None
    budget_tokens: int | None = None


@attrs.frozen
class Scope:
    """Where a team's task runs hang: the calling turn, its depth, the run timeout, and
    how long to wait for a run at most (``wait_seconds``: then it is canceled and counts
    as failed — a team task never waits forever, even for a run never admitted)."""

    parent_turn_id: str | None = None
    spawn_depth: int = 1
    timeout_seconds: float | None = None
    wait_seconds: float | None = None


class TeamCoordinator:
    """Teams in one store, run through one task-run controller and agent pool."""

    def __init__(
        self,
        runtime: RuntimeView,
        controller: TaskRunController,
        *,
        pool: AgentPool | None = None,
    ) -> None:
        self.runtime = runtime
        self.controller = controller
        self.store: ExecutionStore = controller.store
        self.pool = pool or runtime.agents.pool(controller.store)
        self.clock = controller.clock

    # -- reading ---------------------------------------------------------------------------

    def get(self, team_id: str, *, owner: str | None) -> Team:
        """The team; another owner's team is not found (``owner=None``: the operator)."""
        record = self.store.get_record(KIND, team_id)
        team = Team.from_json(record.data) if record else None
        if team is None or not may_see(team.owner, owner):
            raise TeamError(f"team {team_id!r} not found")
        return team

    def list_teams(self, *, owner: str | None) -> list[Team]:
        teams = [Team.from_json(r.data) for r in self.store.list_records(KIND)]
        return sorted(
            (t for t in teams if may_see(t.owner, owner)),
            key=lambda t: (-t.created_at, t.id),
        )

    def save(self, team: Team) -> Team:
        """Store ``team`` as it is now (last writer wins; a change to a stored team goes
        through :meth:`update`, which loses no other writer's change)."""
        self.store.put_record(KIND, team.id, team.to_json(), now=self.clock())
        return team

    def update(self, team_id: str, change: Callable[[Team], Team]) -> Team:
        """Apply ``change`` to the team as stored now and store the result, compare-and-set
        on the record's revision: when another node (on a shared store) or another task
        wrote the team meanwhile, ``change`` is applied again to what it wrote, so no
        change is lost. Returns the team stored.

        :raises TeamError: the team does not exist.
        :raises RecordConflict: still racing after many tries.
        """
        for _ in range(UPDATE_TRIES):
            record = self.store.get_record(KIND, team_id)
            if record is None:
                raise TeamError(f"team {team_id!r} not found")
            team = change(Team.from_json(record.data))
            try:
                self.store.put_record(
                    KIND, team_id, team.to_json(), now=self.clock(), expect_revision=record.revision
                )
            except RecordConflict:
                continue
            return team
        raise RecordConflict(f"team {team_id!r}: could not store a change (too many writers)")

    async def emit(self, team: Team, kind: str, **data: Any) -> None:
        """Publish ``kind`` about ``team`` (``data`` always has ``team_id``) on the bus."""
        event = Event(kind, {"team_id": team.id, **data}, thread_id=team.parent_thread_id)
        await self.runtime.publish(event)

    # -- formation -------------------------------------------------------------------------

    async def form(self, request: FormRequest) -> Team:
        """Form and activate a team; :class:`TeamError` (with the pool's reasons) when
        the pool has no worker for the capability."""
        if request.workers < 1:
            raise TeamError("team: workers must be at least 1")
        if request.budget_tokens is not None and request.budget_tokens < 1:
            raise TeamError(
                f"team: budget_tokens must be at least 1, found {request.budget_tokens}"
            )
        if self.pool.get(request.leader) is None:
            raise TeamError(f"team: leader {request.leader!r} is not a known agent")
        if request.reviewer is not None and self.pool.get(request.reviewer) is None:
            raise TeamError(f"team: reviewer {request.reviewer!r} is not a known agent")
        for observer in request.observers:
            if self.pool.get(observer) is None:
                raise TeamError(f"team: observer {observer!r} is not a known agent")
        taken = {
            request.leader,
            *([request.reviewer] if request.reviewer else []),
            *request.observers,
        }
        selection = self.pool.select(request.capability, request.workers, exclude=taken)
        if not selection.chosen:
            why = "; ".join(f"{e.name}: {e.reason}" for e in selection.excluded)
            raise TeamError(
                f"team: no agent available for capability {request.capability!r} ({why})"
            )
        now = self.clock()
        members = [Member(request.leader, Role.LEADER, joined_at=now)]
        members += [
            Member(m.name, Role.WORKER, trust=m.trust, joined_at=now) for m in selection.chosen
        ]
        if request.reviewer:
            members.append(Member(request.reviewer, Role.REVIEWER, joined_at=now))
        members += [Member(name, Role.OBSERVER, joined_at=now) for name in request.observers]
        team = Team(
            id=request.id or new_id(),
            goal=request.goal,
            owner=request.owner,
            parent_thread_id=request.parent_thread_id,
            leader=request.leader,
            capability=request.capability,
            strategy=request.strategy,
            status=TeamStatus.FORMING,
            created_at=now,
            members=tuple(members),
            context_filter=request.context_filter,
            budget_tokens=request.budget_tokens,
        )
        paid = [m for m in members if m.role in (Role.WORKER, Role.REVIEWER)]
        team = attrs.evolve(team, payments=tuple(self._terms(m, request) for m in paid))
        try:  # "must not exist yet": two nodes forming the same id, one wins
            self.store.put_record(KIND, team.id, team.to_json(), now=now, expect_revision=0)
        except RecordConflict:
            raise TeamError(f"team {team.id!r} already exists") from None
        for member in team.members:
            await self.emit(team, "team.member.joined", member=member.name, role=member.role.value)
        for terms in team.payments:
            await self._agree(team, terms)
        team = self.update(team.id, lambda t: attrs.evolve(t, status=TeamStatus.ACTIVE))
        await self.emit(
            team,
            "team.formed",
            goal=team.goal,
            leader=team.leader,
            members=[m.name for m in team.members],
            strategy=team.strategy.value,
            excluded={e.name: e.reason for e in selection.excluded},
        )
        return team

    def _terms(self, member: Member, request: FormRequest) -> PaymentTerms:
        pooled = self.pool.get(member.name)
        return PaymentTerms.agree(
            member.name,
            price=pooled.price_per_call if pooled else 0.0,
            currency=pooled.currency if pooled else "",
            trust=pooled.trust if pooled else 0.5,
            now=self.clock(),
            max_uses=request.max_uses,
            valid_seconds=request.valid_seconds,
        )

    async def _agree(self, team: Team, terms: PaymentTerms) -> None:
        self.pool.agree_payment(team.id, terms)  # the toolang_agree_payment plugins
        await self.emit(team, "team.payment.agreed", **attrs.asdict(terms))

    # -- delegation ------------------------------------------------------------------------

    async def delegate(
        self,
        team_id: str,
        task: str,
        *,
        owner: str,
        context: Mapping[str, str] | None = None,
        scope: Scope | None = None,
        complete: bool = False,
    ) -> TeamTask:
        """Send ``task`` to every active worker at once, replace a worker whose run
        failed (once), resolve, review; store and return the team task. ``context`` is
        filtered by the team's context filter before it reaches any member.
        ``complete`` ends the team (``completed``) when the task succeeds."""
        team = self.get(team_id, owner=owner)
        if team.status is not TeamStatus.ACTIVE:
            raise TeamError(f"team {team_id!r} is {team.status.value}, not active")
        over = budget.over(self.store, team)
        if over is not None:
            raise TeamError(over)
        scope = scope or Scope()
        shared = team.context_filter.apply(context or {})
        task_id = new_id()
        workers = team.active(Role.WORKER)
        await self.emit(
            team,
            "team.task.delegated",
            task_id=task_id,
            task=task,
            workers=[w.name for w in workers],
        )
        runs = [self._run_member(team, w, task, shared, scope) for w in workers]
        candidates = list(await asyncio.gather(*runs))
        over = budget.over(self.store, team)
        replacements: list[Member] = []
        if over is None:  # a run the budget stopped is no member's failure: none replaced
            team, replacements = await self._replace_failed(team, candidates)
        if replacements:
            extra = [self._run_member(team, m, task, shared, scope) for m in replacements]
            candidates += await asyncio.gather(*extra)
        outcome = await self._resolve(team, task, candidates, scope)
        if outcome.conflict:
            await self.emit(
                team,
                "team.conflict.detected",
                task_id=task_id,
                strategy=team.strategy.value,
                results=[c.result for c in resolve.distinct(candidates)],
            )
        review = ""
        chosen, reason = outcome.chosen, outcome.reason
        if chosen is None and over is not None:
            reason = over
        reviewer = team.active(Role.REVIEWER)
        if chosen is not None and reviewer:
            chosen, reason, review = await self._review(
                team, reviewer[0], task, chosen, reason=reason, scope=scope
            )
        done = TeamTask(
            id=task_id,
            task=task,
            status="completed" if chosen is not None else "failed",
            strategy=team.strategy,
            candidates=tuple(candidates),
            chosen=chosen.result if chosen else None,
            chosen_member=chosen.member if chosen else None,
            reason=reason,
            review=review,
        )
        team = self.update(
            team_id,
            lambda t: attrs.evolve(
                t,
                tasks=(*t.tasks, done),
                status=TeamStatus.COMPLETED if complete and chosen is not None else t.status,
            ),
        )
        await self.emit(
            team,
            "team.task.completed",
            task_id=task_id,
            status=done.status,
            chosen=done.chosen,
            chosen_member=done.chosen_member,
            reason=reason,
            successes=sum(c.ok for c in candidates),
            failures=sum(not c.ok for c in candidates),
        )
        return done

    def _prompt(self, team: Team, member: Member, task: str, shared: Mapping[str, str]) -> str:
        lines = [
            f"You work as {member.role.value} of team {team.id} (goal: {team.goal}).",
            "",
            task,
        ]
        if shared:
            lines += ["", "Context:"] + [f"- {k}: {v}" for k, v in sorted(shared.items())]
        return "\n".join(lines)

    async def _spawn_and_wait(
        self, team: Team, member: Member, text: str, shared: Mapping[str, str], scope: Scope
    ) -> tuple[bool, str, str, str, float]:
        """``(ok, result, error, run id, duration ms)`` of one member's task run."""
        metadata = {
            **shared,
            "team_id": team.id,
            "team_member": member.name,
            "team_role": member.role.value,
        }
        run = await self.controller.spawn(
            SpawnRequest(
                owner=team.owner,
                parent_thread_id=team.parent_thread_id,
                parent_turn_id=scope.parent_turn_id,
                task=text,
                agent_name=member.name,
                timeout_seconds=scope.timeout_seconds,
                metadata=metadata,
                spawn_depth=scope.spawn_depth,
                spawn_reason=f"team {team.id}: {member.role.value}",
                budget=budget.of(team),
            )
        )
        run = await self.controller.wait(run.id, owner=team.owner, timeout=scope.wait_seconds)
        if not run.status.is_terminal:
            await self.controller.cancel(run.id, owner=team.owner)
            limit = f"did not finish within {scope.wait_seconds:g} s (canceled)"
            return False, run.result, limit, run.id, (scope.wait_seconds or 0) * 1000
        ok = run.status is TaskRunStatus.COMPLETED
        error = "" if ok else (run.error or run.outcome or run.status.value)
        started = run.started_at or run.created_at
        duration = max(0.0, ((run.finished_at or run.updated_at) - started) * 1000)
        return ok, run.result, error, run.id, duration

    async def _run_member(
        self, team: Team, member: Member, task: str, shared: Mapping[str, str], scope: Scope
    ) -> Candidate:
        try:
            ok, result, error, run_id, ms = await self._spawn_and_wait(
                team, member, self._prompt(team, member, task, shared), shared, scope
            )
        except Exception as exc:  # a refused spawn is this member's failure, not the team's
            return Candidate(member.name, False, error=describe_exception(exc))
        pooled = self.pool.get(member.name)
        trust = pooled.trust if pooled else member.trust
        return Candidate(member.name, ok, result, error, run_id, trust, ms)

    async def _replace_failed(
        self, team: Team, candidates: list[Candidate]
    ) -> tuple[Team, list[Member]]:
        """Mark every failed worker unhealthy and let it go; bring one replacement each
        from the pool (never a past or present member). Returns the workers now active
        that were not given the task: these replacements, and those the health sweep
        brought while the task ran (it may have replaced a member whose run then failed:
        that member has left already and is not replaced twice)."""
        asked = {c.member for c in candidates}
        for failed in (c for c in candidates if not c.ok):
            self.pool.mark_unhealthy(failed.member, f"team {team.id}: {failed.error}")
            team, _ = await self.swap(team, failed.member, f"its task run failed: {failed.error}")
        team = self.get(team.id, owner=None)
        return team, [m for m in team.active(Role.WORKER) if m.name not in asked]

    async def swap(self, team: Team, name: str, reason: str) -> tuple[Team, Member | None]:
        """``name`` leaves the team; a replacement of the same role joins if the pool
        has one. A member that is not active any more (it left, or the health sweep
        replaced it meanwhile) is left as it is: ``(the team now, None)``."""
        current = self.get(team.id, owner=None)
        leaving = next(
            (m for m in current.members if m.name == name and m.status == "active"), None
        )
        if leaving is None:
            return current, None

        def leave(now: Team) -> Team:
            members = tuple(
                attrs.evolve(m, status="left", left_reason=reason)
                if m.name == name and m.status == "active"
                else m
                for m in now.members
            )
            return attrs.evolve(now, members=members)

        current = self.update(team.id, leave)
        await self.emit(current, "team.member.left", member=name, reason=reason)
        known = {m.name for m in current.members}
        pick = self.pool.select(current.capability, 1, exclude=known)
        if not pick.chosen:
            log.warning("team.no_replacement", team=team.id, member=name)
            return current, None
        new = Member(
            pick.chosen[0].name, leaving.role, trust=pick.chosen[0].trust, joined_at=self.clock()
        )
        terms = PaymentTerms.agree(
            new.name,
            price=pick.chosen[0].price_per_call,
            currency=pick.chosen[0].currency,
            trust=new.trust,
            now=self.clock(),
        )
        # on what is stored now: a sweep or a delegation may have changed the team meanwhile
        current = self.update(
            team.id,
            lambda t: attrs.evolve(t, members=(*t.members, new), payments=(*t.payments, terms)),
        )
        await self.emit(
            current, "team.member.joined", member=new.name, role=new.role.value, replaces=name
        )
        await self._agree(current, terms)
        return current, new

    async def _resolve(
        self, team: Team, task: str, candidates: list[Candidate], scope: Scope
    ) -> resolve.Resolution:
        if team.strategy is not Strategy.LEADER_DECIDES:
            return resolve.resolve(team.strategy, candidates)
        answers = resolve.distinct(candidates)
        if len(answers) <= 1:
            return resolve.resolve(Strategy.FAIL_ON_CONFLICT, candidates)
        leader = Member(team.leader, Role.LEADER)
        ok, answer, error, _run, _ms = await self._spawn_and_wait(
            team, leader, resolve.leader_prompt(task, answers), {}, scope
        )
        if not ok:
            return resolve.Resolution(None, f"the leader could not decide: {error}", True)
        return resolve.leader_pick(answer, answers)

    async def _review(
        self,
        team: Team,
        reviewer: Member,
        task: str,
        chosen: Candidate,
        *,
        reason: str,
        scope: Scope,
    ) -> tuple[Candidate | None, str, str]:
        text = (
            f"Review the team's result for the task {task!r}:\n\n{chosen.result}\n\n"
            "Reply APPROVE, or REJECT: followed by the reason."
        )
        ok, answer, error, _run, _ms = await self._spawn_and_wait(team, reviewer, text, {}, scope)
        if not ok:
            return None, f"the reviewer {reviewer.name} failed: {error}", ""
        if answer.strip().upper().startswith("REJECT"):
            return None, f"rejected by the reviewer {reviewer.name}: {answer.strip()}", answer
        return chosen, f"{reason}; approved by {reviewer.name}", answer

    # -- health and the end ----------------------------------------------------------------

    async def check_health(self, team_id: str, *, owner: str | None) -> Team:
        """Replace every unhealthy worker from the pool; hand the lead to the most
        trusted healthy worker if the leader is unhealthy; publish ``team.health.check``
        (see :mod:`toolang_teams.health`)."""
        return await health.check(self, team_id, owner=owner)

    async def sweep(self) -> list[str]:
        """:meth:`check_health` on every active team with an unhealthy member (the
        serving runtime's upkeep); returns the ids swept."""
        return await health.sweep(self)

    async def disband(self, team_id: str, *, owner: str | None, reason: str = "") -> Team:
        """Every member leaves; the team is ``disbanded`` (kept in the store, readable)."""
        team = self.get(team_id, owner=owner)
        if team.status is TeamStatus.DISBANDED:
            return team
        for member in team.active():
            await self.emit(team, "team.member.left", member=member.name, reason="disbanded")

        def disbanded(now: Team) -> Team:
            members = tuple(
                attrs.evolve(m, status="left", left_reason="disbanded")
                if m.status == "active"
                else m
                for m in now.members
            )
            return attrs.evolve(
                now, members=members, status=TeamStatus.DISBANDED, disbanded_reason=reason
            )

        team = self.update(team_id, disbanded)
        await self.emit(team, "team.disbanded", reason=reason)
        return team
