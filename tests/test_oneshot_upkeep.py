"""A one-shot run's turn does not wait for the start-up upkeep (team sweeps, pings of
remote agents): the upkeep runs beside the turn and is over before the run ends."""

from __future__ import annotations

import asyncio

from toolang_core import hookimpl
from toolang_core.store.types import TurnStatus
from toolang_core.testing.runtimes import make_runtime, request


class SlowUpkeep:
    """An upkeep that ends only once the turn has ended (a deadline keeps a run that
    waits for it before the turn from hanging)."""

    def __init__(self) -> None:
        self.saw_the_turn_end: bool | None = None
        self.calls = 0

    @hookimpl
    async def toolang_upkeep(self, runtime):
        self.calls += 1
        for _ in range(400):  # up to ~20 s of polling, then give up
            turn = runtime.inbox.get(self.turn_id) if runtime.inbox is not None else None
            if turn is not None and turn.status.is_terminal:
                self.saw_the_turn_end = True
                return
            await asyncio.sleep(0.05)
        self.saw_the_turn_end = False


def test_a_one_shot_serves_its_turn_beside_the_start_up_upkeep(tmp_path):
    slow = SlowUpkeep()
    rt = make_runtime(tmp_path, plugins=[("slow-upkeep", slow)])
    inbox = rt.open_inbox()
    slow.turn_id = mine = inbox.submit(request("chat:1", "hi")).id
    asyncio.run(rt.serve(asyncio.Event(), only=[mine], until_idle=True))
    assert inbox.get(mine).status is TurnStatus.COMPLETED
    assert slow.saw_the_turn_end is True  # the turn ended while the upkeep ran
    assert slow.calls == 1  # and it had finished before the run ended


class StatusAtUpkeep:
    def __init__(self) -> None:
        self.seen: list[TurnStatus] = []

    @hookimpl
    async def toolang_upkeep(self, runtime):
        if not self.seen:
            self.seen.append(runtime.inbox.get(self.turn_id).status)


def test_a_serving_runtime_still_finishes_its_start_up_upkeep_before_any_turn(tmp_path):
    first = StatusAtUpkeep()
    rt = make_runtime(tmp_path, plugins=[("status-at-upkeep", first)])
    inbox = rt.open_inbox()
    first.turn_id = mine = inbox.submit(request("chat:1", "hi")).id
    asyncio.run(rt.serve(asyncio.Event(), until_idle=True))
    assert first.seen == [TurnStatus.QUEUED]  # the upkeep ran before the turn was admitted
    assert inbox.get(mine).status is TurnStatus.COMPLETED
