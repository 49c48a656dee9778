"""A turn parked on a person's decision gives its slot back, and takes one again, in
order, when the person answers (issue #30: two parked approvals under a group's
``max_running = 2`` left an unrelated turn of that group queued).

The runtime is real (SQLite store, scheduler, agent executor); the model and tools are
those of :mod:`toolang_core.testing.parked_turns`. The PostgreSQL store runs the same
scenarios in toolang-store-postgres's tests.
"""

from __future__ import annotations

import asyncio

from toolang_core.config import ToolangConfig
from toolang_core.config.model import (
    GroupConfig,
    ModelsConfig,
    RuntimeConfig,
    SchedulerConfig,
)
from toolang_core.runtime import Runtime
from toolang_core.store.types import TurnStatus
from toolang_core.testing.models import ScriptedModel
from toolang_core.testing.parked_turns import (
    GATES,
    ParkingPlugin,
    answer,
    answered,
    approve_all,
    parked,
    submit,
)
from toolang_core.testing.runtimes import serving, wait_status


def make(tmp_path, scheduler: SchedulerConfig) -> Runtime:
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.02, shutdown_grace_seconds=0),
        models=ModelsConfig(default="scripted"),
        scheduler=scheduler,
    )
    model = ScriptedModel(answer)
    return Runtime.with_plugins(
        config, [("scripted", model.plugin()), ("kit", ParkingPlugin())], env={}
    )


GROUP_OF_TWO = SchedulerConfig(max_running=8, groups={"chat": GroupConfig(max_running=2)})
TWO_IN_ALL = SchedulerConfig(max_running=2)


def test_parked_turns_free_their_group_slots_for_an_unrelated_turn(tmp_path):
    runtime = make(tmp_path, GROUP_OF_TWO)

    async def scenario():
        async with serving(runtime, sources=()):
            ids = await parked(runtime, "a", "b")
            third = submit(runtime, "chat:c", "hello")
            done = await wait_status(runtime.inbox, third, {"completed"}, timeout=30)
            # Both still wait for their person: the third did not wait for them.
            states = {runtime.inbox.get(t).status for t in ids.values()}
            assert states == {TurnStatus.AWAITING_APPROVAL}
            assert runtime.inbox.store.group_load().get("chat", (0, 0))[0] == 0  # none holds one
            approve_all(runtime)
            for turn_id in ids.values():
                resumed = await wait_status(runtime.inbox, turn_id, {"completed"}, timeout=30)
                assert resumed.output == "done"
            return done

    assert asyncio.run(scenario()).output == "quick"


def test_parked_turns_free_their_global_slots_for_an_unrelated_turn(tmp_path):
    runtime = make(tmp_path, TWO_IN_ALL)

    async def scenario():
        async with serving(runtime, sources=()):
            ids = await parked(runtime, "a", "b")
            third = submit(runtime, "chat:c", "hello")
            await wait_status(runtime.inbox, third, {"completed"}, timeout=30)
            assert {runtime.inbox.get(t).status for t in ids.values()} == {
                TurnStatus.AWAITING_APPROVAL
            }
            approve_all(runtime)
            for turn_id in ids.values():
                await wait_status(runtime.inbox, turn_id, {"completed"}, timeout=30)

    asyncio.run(scenario())


def test_a_parked_turn_still_keeps_its_thread_busy(tmp_path):
    runtime = make(tmp_path, GROUP_OF_TWO)

    async def scenario():
        async with serving(runtime, sources=()):
            ids = await parked(runtime, "a")
            later = submit(runtime, "chat:a", "hello")  # the same thread
            other = submit(runtime, "chat:z", "hello")
            await wait_status(runtime.inbox, other, {"completed"}, timeout=30)
            assert runtime.inbox.get(later).status is TurnStatus.QUEUED
            approve_all(runtime)
            first = await wait_status(runtime.inbox, ids["a"], {"completed"}, timeout=30)
            after = await wait_status(runtime.inbox, later, {"completed"}, timeout=30)
            assert after.started_at >= first.finished_at

    asyncio.run(scenario())


def test_an_answered_turn_resumes_before_newer_queued_work_once_a_slot_frees(tmp_path):
    """Group of one: A parks; B takes the slot and holds it; A is approved (and waits:
    the group is full); C is queued after. When B ends, A gets the slot, not C."""
    runtime = make(tmp_path, SchedulerConfig(groups={"chat": GroupConfig(max_running=1)}))

    async def scenario():
        GATES["b"] = asyncio.Event()
        async with serving(runtime, sources=()):
            ids = await parked(runtime, "a")
            holder = submit(runtime, "chat:b", "hold b")
            await wait_status(runtime.inbox, holder, {"running"}, timeout=30)
            approve_all(runtime)
            await answered(runtime, ids["a"])  # and waits for a slot: the group is full
            newer = submit(runtime, "chat:c", "hello")
            # A was answered but the group is full: it waits for a slot, still parked.
            assert runtime.inbox.get(ids["a"]).status is TurnStatus.AWAITING_APPROVAL
            assert runtime.inbox.get(newer).status is TurnStatus.QUEUED
            GATES["b"].set()
            a = await wait_status(runtime.inbox, ids["a"], {"completed"}, timeout=30)
            c = await wait_status(runtime.inbox, newer, {"completed"}, timeout=30)
            b = runtime.inbox.get(holder)
            assert b.finished_at <= a.finished_at <= c.started_at
            assert runtime.inbox.store.group_load().get("chat", (0, 0))[0] == 0

    asyncio.run(scenario())
