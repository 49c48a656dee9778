"""Grouped calls (:mod:`toolang_memory_sqlite.group`) on a real database thread: groups
bounded and in order, what ``at_once`` leaves going to the thread, and a caller that
gives up, a call that fails or answers wrongly, failing no other group."""

from __future__ import annotations

import asyncio
import threading

import pytest

from toolang_memory_sqlite.group import LEFT


class HeldGroups:
    """``GroupCalls`` over a real database thread whose calls wait at ``gate``:
    ``groups`` records each group as it starts."""

    def __init__(self, answer, **options) -> None:
        from toolang_memory_sqlite.dbthread import DatabaseThread
        from toolang_memory_sqlite.group import GroupCalls

        self.executor = DatabaseThread("test")
        self.gate = threading.Event()
        self.groups: list[list[int]] = []

        def call(items):
            self.groups.append(list(items))
            self.gate.wait(60)
            return [answer(n) for n in items]

        self.calls = GroupCalls(call, lambda: self.executor, **options)

    async def first_group_started(self) -> None:
        while not self.groups:  # the first group is under way in the thread
            await asyncio.sleep(0.001)

    def run(self, scenario):
        try:
            return asyncio.run(scenario())
        finally:
            self.executor.shutdown()


def test_a_caller_that_stops_waiting_leaves_its_group_and_the_next_going():
    held = HeldGroups(lambda n: n * 2 if n != 4 else ValueError("four"))

    async def scenario():
        first = asyncio.create_task(held.calls.add(1))
        await held.first_group_started()
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.02):
                await held.calls.add(2)  # waits for the next group, then gives up
        later = [asyncio.create_task(held.calls.add(n)) for n in (3, 4)]
        await asyncio.sleep(0.02)
        held.gate.set()
        return await first, await asyncio.gather(*later, return_exceptions=True)

    first, (third, fourth) = held.run(scenario)
    assert (first, third) == (2, 6)
    assert isinstance(fourth, ValueError)  # an exception for one item fails that one
    assert held.groups == [[1], [2, 3, 4]]  # the one that gave up was still in its group


def test_a_group_holds_at_most_group_most_calls_and_the_rest_go_next_in_order():
    from toolang_memory_sqlite.group import GROUP_MOST, GroupCalls

    assert GROUP_MOST >= 2
    held = HeldGroups(lambda n: n * 10, most=3)

    async def scenario():
        first = asyncio.create_task(held.calls.add(0))
        await held.first_group_started()
        rest = [asyncio.create_task(held.calls.add(n)) for n in range(1, 8)]
        await asyncio.sleep(0)  # all seven are waiting
        held.gate.set()
        return await first, await asyncio.gather(*rest)

    first, rest = held.run(scenario)
    assert [first, *rest] == [n * 10 for n in range(8)]
    assert held.groups == [[0], [1, 2, 3], [4, 5, 6], [7]]
    with pytest.raises(ValueError, match="at least 1 call"):
        GroupCalls(list, lambda: held.executor, most=0)


def test_what_at_once_leaves_goes_to_the_thread_and_every_caller_gets_its_own_answer():
    held = HeldGroups(
        lambda n: n * 10,
        at_once=lambda items: [
            LEFT if n % 2 else (ValueError("four") if n == 4 else n * 100) for n in items
        ],
    )
    held.gate.set()

    async def scenario():
        return await asyncio.gather(*(held.calls.add(n) for n in range(6)), return_exceptions=True)

    outcomes = held.run(scenario)
    assert outcomes[:4] == [0, 10, 200, 30] and outcomes[5] == 50
    assert isinstance(outcomes[4], ValueError)
    assert held.groups == [[1, 3, 5]]  # only what at_once left, as one group


def test_groups_done_at_once_go_one_round_apart_and_a_long_queue_needs_no_deep_stack():
    """With ``most = 1`` every call is a group of its own: each is done on a later round
    of the loop than the one before (its callers run between), not by a chain of calls
    in one callback (thousands of them would overflow the stack)."""
    from toolang_memory_sqlite.dbthread import DatabaseThread
    from toolang_memory_sqlite.group import GroupCalls

    done: list[int] = []
    resumed: list[int] = []
    thread = DatabaseThread("test")

    def at_once(items):
        done.extend(items)
        return [n + 1 for n in items]

    calls = GroupCalls(lambda items: [], lambda: thread, at_once, most=1)

    async def call(n: int) -> int:
        answer = await calls.add(n)
        resumed.append(n)
        if n == 0:  # the first caller runs before the second group is done
            assert done == [0]
        return answer

    async def scenario():
        return await asyncio.gather(*(call(n) for n in range(3000)))

    try:
        assert asyncio.run(asyncio.wait_for(scenario(), 60)) == [n + 1 for n in range(3000)]
    finally:
        thread.shutdown()
    assert done == list(range(3000)) and sorted(resumed) == list(range(3000))


def test_at_once_that_raises_or_answers_wrongly_fails_its_group_and_the_next_goes():
    from toolang_memory_sqlite.dbthread import DatabaseThread
    from toolang_memory_sqlite.group import GroupCalls

    thread = DatabaseThread("test")

    def at_once(items):
        if items == [1]:
            raise ValueError("at once failed")
        if items == [2]:
            return [4, 4]  # one outcome too many
        return [n * 2 for n in items]

    calls = GroupCalls(lambda items: [], lambda: thread, at_once)

    async def scenario():
        outcomes = []
        for n in (1, 2, 3):
            try:
                outcomes.append(await asyncio.wait_for(calls.add(n), 5))
            except (ValueError, RuntimeError) as exc:
                outcomes.append(str(exc))
        return outcomes

    try:
        assert asyncio.run(scenario()) == [
            "at once failed",
            "memory-sqlite: 2 outcomes for a group of 1 calls",
            6,
        ]
    finally:
        thread.shutdown()


def test_a_group_answered_wrongly_fails_its_callers_and_the_next_group_still_goes():
    """A call that answers the wrong number of outcomes, or ends in a BaseException,
    fails its group's callers — it does not leave every later call waiting."""

    from toolang_memory_sqlite.dbthread import DatabaseThread
    from toolang_memory_sqlite.group import GroupCalls

    executor = DatabaseThread("test")

    def call(items):
        if items == [1]:
            return []  # one outcome short
        if items == [2]:
            raise SystemExit(3)
        return [n * 2 for n in items]

    calls = GroupCalls(call, lambda: executor)

    async def scenario():
        outcomes = []
        for n in (1, 2, 3):
            try:
                outcomes.append(await asyncio.wait_for(calls.add(n), 5))
            except RuntimeError as exc:
                outcomes.append(str(exc))
        return outcomes

    try:
        first, second, third = asyncio.run(scenario())
    finally:
        executor.shutdown()
    assert first == "memory-sqlite: 0 outcomes for a group of 1 calls"
    assert "SystemExit(3)" in second
    assert third == 6


def test_a_first_caller_that_gives_up_in_its_round_still_hands_its_group_over():
    from toolang_memory_sqlite.dbthread import DatabaseThread
    from toolang_memory_sqlite.group import GroupCalls

    thread = DatabaseThread("test")
    groups: list[list[int]] = []

    def call(items):
        groups.append(list(items))
        return [n * 2 for n in items]

    calls = GroupCalls(call, lambda: thread)

    async def scenario():
        first = asyncio.create_task(calls.add(1))
        second = asyncio.create_task(calls.add(2))
        await asyncio.sleep(0)  # both handed in; the first waits out its round
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        return await second, await calls.add(3)  # and the next group goes too

    try:
        assert asyncio.run(asyncio.wait_for(scenario(), 5)) == (4, 6)
    finally:
        thread.shutdown()
    assert groups == [[1, 2], [3]]
