"""The runtime end to end, in-process: admission, limits, timeouts, cancellation,
shutdown and recovery, with a gated executor instead of sleeps."""

from __future__ import annotations

import asyncio

import pytest

from toolang_core import hookimpl
from toolang_core.config.model import GroupConfig
from toolang_core.store.types import NewTurnRequest, TurnStatus
from toolang_core.testing.runtimes import (
    GatedExecutor,
    evolve_scheduler,
    make_runtime,
    request,
    serving,
    wait_status,
)


def run(coro):
    return asyncio.run(coro)


def test_echo_turns_flow_from_submit_to_completed(tmp_path):
    rt = make_runtime(tmp_path)
    inbox = rt.open_inbox()
    ids = [inbox.submit(request(f"chat:{i % 3}", f"m{i}")).id for i in range(9)]
    run(rt.serve(asyncio.Event(), until_idle=True))
    turns = [inbox.get(i) for i in ids]
    assert [t.status for t in turns] == [TurnStatus.COMPLETED] * 9
    assert [t.output for t in turns] == [f"m{i}" for i in range(9)]
    assert [s.kind for s in inbox.store.steps(ids[0])] == ["echo"]


def test_turns_on_one_thread_run_one_at_a_time_in_order(tmp_path):
    executor = GatedExecutor()
    rt = make_runtime(tmp_path, executor=executor)
    inbox = rt.open_inbox()

    async def scenario():
        ids = [inbox.submit(request("chat:1", f"m{i}")).id for i in range(3)]
        async with serving(rt):
            for turn_id in ids:
                await executor.wait_started(turn_id)
                assert executor.active == {turn_id}
                executor.release(turn_id)
                await wait_status(inbox, turn_id, {"completed"})
        return ids

    ids = run(scenario())
    assert [inbox.get(i).output for i in ids] == ["done: m0", "done: m1", "done: m2"]


def test_global_concurrency_and_group_caps_hold(tmp_path):
    executor = GatedExecutor()
    scheduler = evolve_scheduler(max_running=3, groups={"task": GroupConfig(max_running=1)})
    rt = make_runtime(tmp_path, executor=executor, scheduler=scheduler)
    inbox = rt.open_inbox()

    async def scenario():
        ids = [inbox.submit(request(f"chat:{i}")).id for i in range(4)]
        ids += [inbox.submit(request(f"task:{i}")).id for i in range(3)]
        async with serving(rt):
            for _ in range(50):
                await asyncio.sleep(0.02)
                if len(executor.active) == 3:
                    break
            assert len(executor.active) == 3
            while any(not inbox.get(i).status.is_terminal for i in ids):
                executor.release_all()
                await asyncio.sleep(0.02)

    run(scenario())
    assert executor.peak == 3
    assert executor.peak_by_group["task"] == 1


def test_a_timeout_fails_the_turn_with_reason_timeout(tmp_path):
    rt = make_runtime(tmp_path)
    inbox = rt.open_inbox()
    slow = inbox.submit(request(timeout_seconds=0.1, meta={"echo": {"delay_seconds": 30}})).id
    run(rt.serve(asyncio.Event(), until_idle=True))
    turn = inbox.get(slow)
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "timeout")
    assert "timed out after 0.1 s" in turn.error


def test_an_executor_error_fails_the_turn_and_the_runtime_goes_on(tmp_path):
    rt = make_runtime(tmp_path)
    inbox = rt.open_inbox()
    bad = inbox.submit(request("chat:1", meta={"echo": {"fail": "model unreachable"}})).id
    good = inbox.submit(request("chat:2")).id
    run(rt.serve(asyncio.Event(), until_idle=True))
    assert (inbox.get(bad).status, inbox.get(bad).error) == (TurnStatus.FAILED, "model unreachable")
    assert inbox.get(good).status is TurnStatus.COMPLETED


def test_cancel_a_queued_request_at_once_and_a_running_one_promptly(tmp_path):
    executor = GatedExecutor()
    rt = make_runtime(tmp_path, executor=executor)
    inbox = rt.open_inbox()
    other = rt.open_inbox()  # another connection, as another process would use

    async def scenario():
        running = inbox.submit(request("chat:1", "long")).id
        queued = inbox.submit(request("chat:1", "waiting")).id
        async with serving(rt):
            await executor.wait_started(running)
            assert other.cancel(queued).status is TurnStatus.CANCELED
            assert other.cancel(running).status is TurnStatus.CANCELING
            turn = await wait_status(inbox, running, {"canceled"}, timeout=60)
        return turn

    turn = run(scenario())
    assert turn.outcome == "canceled"
    assert turn.error == "canceled"


def test_interrupt_cancels_the_running_turn_for_the_new_one(tmp_path):
    executor = GatedExecutor()
    rt = make_runtime(tmp_path, executor=executor)
    inbox = rt.open_inbox()

    async def scenario():
        first = inbox.submit(request("chat:1", "first")).id
        async with serving(rt):
            await executor.wait_started(first)
            second = inbox.submit(request("chat:1", "second", strategy="interrupt")).id
            await wait_status(inbox, first, {"canceled"})
            await executor.wait_started(second)
            executor.release(second)
            await wait_status(inbox, second, {"completed"})
        return first

    first = run(scenario())
    assert "interrupted by a newer request" in inbox.get(first).error


def test_shutdown_hands_unfinished_turns_back_to_the_queue(tmp_path):
    executor = GatedExecutor()
    rt = make_runtime(tmp_path, executor=executor, shutdown_grace_seconds=0.05)
    inbox = rt.open_inbox()

    async def scenario():
        turn_id = inbox.submit(request()).id
        async with serving(rt):
            await executor.wait_started(turn_id)
        return turn_id

    turn_id = run(scenario())
    turn = inbox.get(turn_id)
    assert (turn.status, turn.attempt) == (TurnStatus.QUEUED, 1)  # the attempt counts
    run(make_runtime(tmp_path).serve(asyncio.Event(), until_idle=True))
    assert inbox.get(turn_id).status is TurnStatus.COMPLETED


def test_shutdown_lets_turns_finish_within_the_grace_period(tmp_path):
    executor = GatedExecutor()
    rt = make_runtime(tmp_path, executor=executor, shutdown_grace_seconds=10)
    inbox = rt.open_inbox()

    async def scenario():
        turn_id = inbox.submit(request()).id
        async with serving(rt) as stop:
            await executor.wait_started(turn_id)
            stop.set()
            await asyncio.sleep(0.05)
            executor.release(turn_id)
        return turn_id

    assert inbox.get(run(scenario())).status is TurnStatus.COMPLETED


def test_turns_of_a_crashed_run_are_recovered_at_start(tmp_path):
    rt = make_runtime(tmp_path)
    inbox = rt.open_inbox()
    store = inbox.store
    turn_id = inbox.submit(request()).id
    from toolang_core.store.types import RunRecord

    store.begin_run(
        RunRecord(id="crashed", host="h", pid=1, version="0", started_at=1.0, heartbeat_at=1.0)
    )
    store.claim(run_id="crashed", limit=1, now=2.0, lease_seconds=10**9, caps={})
    run(rt.serve(asyncio.Event(), until_idle=True))
    turn = inbox.get(turn_id)
    assert (turn.status, turn.attempt) == (TurnStatus.COMPLETED, 2)
    assert {r.id: r.status for r in store.list_runs()}["crashed"] == "lost"


def test_a_turn_past_the_attempt_bound_fails_with_a_clear_reason(tmp_path):
    rt = make_runtime(tmp_path, max_attempts=2)
    inbox = rt.open_inbox()
    store = inbox.store
    turn_id = inbox.submit(request()).id
    from toolang_core.store.types import RunRecord

    for n in range(2):
        store.begin_run(
            RunRecord(
                id=f"dead-{n}", host="h", pid=1, version="0", started_at=1.0, heartbeat_at=1.0
            )
        )
        store.recover(now=1.0, max_attempts=2, dead_runs=[f"dead-{n - 1}"])
        store.claim(run_id=f"dead-{n}", limit=1, now=2.0 + n, lease_seconds=10**9, caps={})
    run(rt.serve(asyncio.Event(), until_idle=True))
    turn = inbox.get(turn_id)
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "abandoned")
    assert "after 2 attempt(s)" in turn.error


def test_a_second_runtime_on_the_same_file_is_refused(tmp_path):
    from toolang_core.store.errors import StoreBusy

    executor = GatedExecutor()
    first = make_runtime(tmp_path, executor=executor)

    async def scenario():
        async with serving(first):
            with pytest.raises(StoreBusy, match="another toolang runtime"):
                await make_runtime(tmp_path).serve(asyncio.Event())

    run(scenario())


def test_a_runtime_that_lost_its_lease_stops_the_turn_without_finishing_it(tmp_path):
    executor = GatedExecutor()
    rt = make_runtime(tmp_path, executor=executor, lease_seconds=0.3)
    inbox = rt.open_inbox()
    store = inbox.store

    async def scenario():
        turn_id = inbox.submit(request()).id
        async with serving(rt):
            await executor.wait_started(turn_id)
            # Another node decides the lease expired and takes the turn over.
            store.recover(now=rt.clock() + 100, max_attempts=5)
            taken = store.claim(
                run_id="other-node", limit=1, now=rt.clock(), lease_seconds=100, caps={}
            )
            assert [t.id for t in taken] == [turn_id]
            for _ in range(100):
                if turn_id not in executor.active:
                    break
                await asyncio.sleep(0.02)
            assert turn_id not in executor.active
        return turn_id

    turn_id = run(scenario())
    turn = inbox.get(turn_id)
    assert (turn.status, turn.lease_owner, turn.attempt) == (TurnStatus.RUNNING, "other-node", 2)


def test_only_admits_the_named_requests(tmp_path):
    rt = make_runtime(tmp_path)
    inbox = rt.open_inbox()
    other = inbox.submit(request("chat:1")).id
    mine = inbox.submit(request("chat:2")).id
    run(rt.serve(asyncio.Event(), only=[mine], until_idle=True))
    assert inbox.get(mine).status is TurnStatus.COMPLETED
    assert inbox.get(other).status is TurnStatus.QUEUED


def test_events_reach_subscribers_after_the_state_is_stored(tmp_path):
    seen = []

    class Subscriber:
        @hookimpl
        def toolang_on_event(self, event, runtime):
            stored = runtime.store.get(event.turn_id)
            seen.append((event.kind, stored.status.value))

    rt = make_runtime(tmp_path)
    rt.host.register(Subscriber(), "subscriber")
    inbox = rt.open_inbox()
    inbox.submit(request())
    inbox.submit(request("chat:2", meta={"echo": {"fail": "x"}}))
    run(rt.serve(asyncio.Event(), until_idle=True))
    assert sorted(seen) == [("turn.completed", "completed"), ("turn.failed", "failed")]


def test_a_failing_source_is_restarted_and_others_keep_running(tmp_path):
    attempts = []

    class Flaky:
        async def run(self, inbox, stop):
            attempts.append(1)
            if len(attempts) == 1:
                raise RuntimeError("source crashed")
            inbox.submit(NewTurnRequest(source="chat", thread_id="chat:src", input="from source"))

    class Plugin:
        @hookimpl
        def toolang_register_turn_sources(self, register):
            register("flaky", lambda context: Flaky())

    rt = make_runtime(tmp_path)
    rt.host.register(Plugin(), "flaky-plugin")
    inbox = rt.open_inbox()

    async def scenario():
        async with serving(rt):
            for _ in range(300):
                turns = inbox.store.list_turns()
                if turns and turns[0].status is TurnStatus.COMPLETED:
                    return turns[0]
                await asyncio.sleep(0.01)
        raise AssertionError("the restarted source never submitted")

    assert run(scenario()).output == "from source"
    assert len(attempts) == 2


def test_unknown_source_names_are_a_config_error(tmp_path):
    from toolang_core.errors import ConfigError

    rt = make_runtime(tmp_path, sources=("nope",))
    with pytest.raises(ConfigError, match=r"runtime\.sources: no installed plugin offers"):
        run(rt.serve(asyncio.Event()))


def test_a_finished_turn_keeps_its_slot_until_its_state_is_committed(tmp_path, monkeypatch):
    """With nothing to do after a turn, its task ends once the terminal state is handed
    in; the turn stays in ``running`` (holding its slot) until the commit, here delayed
    by a store that is unavailable for a while."""
    from toolang_core.store.errors import StoreError
    from toolang_core.store.sqlite import SQLiteStore

    rt = make_runtime(tmp_path, scheduler=evolve_scheduler(max_running=2))
    inbox = rt.open_inbox()
    ids = [inbox.submit(request(f"chat:{i}", f"m{i}")).id for i in range(6)]
    finish_many = SQLiteStore.finish_many
    failures: list[tuple[set[str], set[str]]] = []

    def flaky_finish_many(self, items):
        if len(failures) < 3:
            failures.append(({i.turn_id for i in items}, set(rt.scheduler.running)))
            raise StoreError("database server restarting")
        return finish_many(self, items)

    monkeypatch.setattr(SQLiteStore, "finish_many", flaky_finish_many)
    run(rt.serve(asyncio.Event(), until_idle=True))
    assert [inbox.get(i).status for i in ids] == [TurnStatus.COMPLETED] * 6
    assert len(failures) == 3
    for handed_in, running in failures:
        assert handed_in and handed_in <= running  # ended, not committed: still running
    assert rt.scheduler.running == {}


def test_a_failed_commit_frees_the_slots_of_turns_that_ended(tmp_path, monkeypatch):
    """An unexpected error committing a batch is logged per turn and frees the slots;
    the turns keep their leases in the store, so recovery requeues them later."""
    from structlog.testing import capture_logs

    from toolang_core.store.sqlite import SQLiteStore

    rt = make_runtime(tmp_path)
    inbox = rt.open_inbox()
    ids = [inbox.submit(request(f"chat:{i}")).id for i in range(3)]
    calls = []

    def broken_finish_many(self, items):
        calls.append(len(items))
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(SQLiteStore, "finish_many", broken_finish_many)

    async def scenario():
        async with serving(rt):
            for _ in range(200):
                await asyncio.sleep(0.01)
                if sum(calls) >= 3 and not rt.scheduler.running:
                    break

    with capture_logs() as logs:
        run(scenario())
    failed = [e["turn"] for e in logs if e["event"] == "turn.finish_failed"]
    assert sorted(failed) == sorted(ids)
    assert [inbox.get(i).status for i in ids] == [TurnStatus.RUNNING] * 3


def test_a_turn_canceled_before_its_task_starts_frees_its_slot(tmp_path):
    """A task canceled before its first step never runs its body (nor its ``finally``);
    its slot is freed all the same, and shutdown hands the turn back to the queue."""
    from toolang_core.runtime.scheduler import SHUTDOWN

    rt = make_runtime(tmp_path)
    inbox = rt.open_inbox()

    async def scenario():
        async with serving(rt):
            scheduler = rt.scheduler
            scheduler._admitting = False  # the test admits by hand, below
            turn_id = inbox.submit(request("chat:1")).id
            await asyncio.sleep(0.05)
            scheduler._admitting = True
            assert scheduler._admit(rt.clock()) == 1  # its task exists, has not run yet
            scheduler._admitting = False
            scheduler.cancel_task(turn_id, SHUTDOWN)
            assert turn_id in scheduler.running
            for _ in range(100):
                await asyncio.sleep(0.01)
                if turn_id not in scheduler.running:
                    break
            assert turn_id not in scheduler.running
            return turn_id

    turn_id = run(scenario())
    assert inbox.get(turn_id).status is TurnStatus.RUNNING  # never started: its lease stays


def test_a_heartbeat_leaves_alone_a_committed_turn_running_its_post_turn_stages(tmp_path):
    """Once committed, a turn is no longer active in the store; the heartbeat must not
    take it for a turn whose lease was lost and cut its events or delivery off."""
    seen = {"started": 0, "finished": 0}

    class SlowSubscriber:
        @hookimpl
        def toolang_on_event(self, event, runtime):
            async def deliver() -> None:
                seen["started"] += 1
                await asyncio.sleep(0.5)  # longer than a heartbeat interval below
                seen["finished"] += 1

            return deliver() if event.kind.startswith("turn.") else None

    rt = make_runtime(tmp_path, lease_seconds=0.3)
    rt.host.register(SlowSubscriber(), "slow-subscriber")
    inbox = rt.open_inbox()
    turn_id = inbox.submit(request("chat:1")).id

    async def scenario():
        async with serving(rt):
            for _ in range(300):
                await asyncio.sleep(0.01)
                if seen["finished"]:
                    break

    run(scenario())
    assert inbox.get(turn_id).status is TurnStatus.COMPLETED
    assert seen == {"started": 1, "finished": 1}


def test_finish_results_that_cannot_be_read_free_the_slots(tmp_path, monkeypatch):
    """A store answering for fewer turns than it was given (a bug in a store backend)
    is logged; the ended turns' slots are freed all the same, so shutdown does not wait
    on them for ever."""
    from structlog.testing import capture_logs

    from toolang_core.store.sqlite import SQLiteStore

    rt = make_runtime(tmp_path)
    inbox = rt.open_inbox()
    ids = [inbox.submit(request(f"chat:{i}")).id for i in range(3)]
    finish_many = SQLiteStore.finish_many

    def short_answer(self, items):
        return finish_many(self, items)[:-1]

    monkeypatch.setattr(SQLiteStore, "finish_many", short_answer)

    async def scenario():
        async with serving(rt):
            for _ in range(200):
                await asyncio.sleep(0.01)
                if all(inbox.get(i).status.is_terminal for i in ids) and not rt.scheduler.running:
                    break
        return dict(rt.scheduler.running)

    with capture_logs() as logs:
        running = asyncio.run(asyncio.wait_for(scenario(), 30))
    assert running == {}
    assert any(e["event"] == "turn.finish_results_unreadable" for e in logs)
    assert [inbox.get(i).status for i in ids] == [TurnStatus.COMPLETED] * 3
