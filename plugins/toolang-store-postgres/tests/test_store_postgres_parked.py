"""Turns parked on a person's decision on the PostgreSQL store: they give their group's
slot back (the claim counts them out), take it again under the claims' group lock, in
order, and keep their thread busy. The scenarios of the core's ``test_parked_slots``."""

from __future__ import annotations

import asyncio

import pytest

import toolang_store_postgres
from toolang_core.store import TurnStatus
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


@pytest.fixture
def make_runtime(toolang_runtime, toolang_pg_dsn, toolang_pg_schema, toolang_scripted_model):
    def make(scheduler: str):
        return toolang_runtime(
            f'[store]\nbackend = "postgres"\n\n[plugins.store-postgres]\n'
            f'dsn = "{toolang_pg_dsn}"\nschema = "{toolang_pg_schema}"\n\n'
            '[runtime]\nexecutor = "agent"\npoll_seconds = 0.05\nshutdown_grace_seconds = 0\n'
            f'\n[models]\ndefault = "scripted"\n\n{scheduler}',
            plugins={
                "store-postgres": toolang_store_postgres,
                "scripted": toolang_scripted_model(answer).plugin(),
                "kit": ParkingPlugin(),
            },
        )

    return make


def test_parked_turns_free_their_group_slots_and_resume_when_answered(make_runtime):
    runtime = make_runtime(
        "[scheduler]\nmax_running = 8\n[scheduler.groups.chat]\nmax_running = 2\n"
    )

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


def test_parked_turns_free_their_global_slots(make_runtime):
    runtime = make_runtime("[scheduler]\nmax_running = 2\n")

    async def scenario():
        async with serving(runtime, sources=()):
            ids = await parked(runtime, "a", "b")
            third = submit(runtime, "chat:c", "hello")
            await wait_status(runtime.inbox, third, {"completed"}, timeout=30)
            approve_all(runtime)
            for turn_id in ids.values():
                await wait_status(runtime.inbox, turn_id, {"completed"}, timeout=30)

    asyncio.run(scenario())


def test_an_answered_turn_resumes_before_newer_queued_work(make_runtime):
    runtime = make_runtime("[scheduler.groups.chat]\nmax_running = 1\n")

    async def scenario():
        GATES["b"] = asyncio.Event()
        async with serving(runtime, sources=()):
            ids = await parked(runtime, "a")
            holder = submit(runtime, "chat:b", "hold b")
            await wait_status(runtime.inbox, holder, {"running"}, timeout=30)
            later = submit(runtime, "chat:a", "hello")  # A's own thread: it waits for A
            approve_all(runtime)
            await answered(runtime, ids["a"])
            newer = submit(runtime, "chat:c", "hello")
            assert runtime.inbox.get(newer).status is TurnStatus.QUEUED
            GATES["b"].set()
            a = await wait_status(runtime.inbox, ids["a"], {"completed"}, timeout=30)
            c = await wait_status(runtime.inbox, newer, {"completed"}, timeout=30)
            after = await wait_status(runtime.inbox, later, {"completed"}, timeout=30)
            assert runtime.inbox.get(holder).finished_at <= a.finished_at <= c.started_at
            assert after.started_at >= a.finished_at

    asyncio.run(scenario())
