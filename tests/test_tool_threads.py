"""Tool functions in worker threads are counted exactly while they may run.

The runtime keeps a plugin's database open while :attr:`ToolThreads.busy` says a tool
function may still use it. A call the turn gives up on before a worker thread ran it
never runs; it must not stay counted (the databases would never close and shutdown
would report a thread that does not exist).
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from toolang_core.tools.threads import ToolThreads


def run_with(executor, body):
    """Run ``body(threads)`` on a loop whose default executor is ``executor``."""

    async def main():
        asyncio.get_running_loop().set_default_executor(executor)
        return await body(ToolThreads())

    return asyncio.run(main())


async def until(predicate, what: str) -> None:
    """Yield to the loop until ``predicate()`` holds (30 s at most)."""
    for _ in range(3000):
        if predicate():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"still waiting for {what}")


def test_a_call_given_up_on_in_the_queue_never_runs_and_is_not_counted():
    release = threading.Event()
    ran: list[str] = []

    def blocker():
        release.wait(30)
        ran.append("blocker")
        return "blocked"

    def queued():
        ran.append("queued")

    async def body(threads: ToolThreads):
        # One worker, a FIFO queue: queued cannot start before blocker returns.
        first = asyncio.create_task(threads.run(blocker, {}))
        second = asyncio.create_task(threads.run(queued, {}))
        await asyncio.sleep(0)  # both handed to the executor
        assert threads.busy == 2
        second.cancel()
        with pytest.raises(asyncio.CancelledError):
            await second
        try:
            assert threads.busy == 1  # blocker alone
        finally:
            release.set()
        assert await first == "blocked"
        return threads.busy

    assert run_with(ThreadPoolExecutor(max_workers=1), body) == 0
    assert ran == ["blocker"]  # asyncio.run joined the executor's threads


class TakesWithoutRunning(ThreadPoolExecutor):
    """An executor whose worker has taken each call (its future is running: it can no
    longer be cancelled) and has not yet run it; :meth:`run_held` runs them."""

    def __init__(self) -> None:
        super().__init__(max_workers=1)
        self.held: list[tuple[Future, object, tuple]] = []

    def submit(self, fn, /, *args, **kwargs):
        future: Future = Future()
        assert future.set_running_or_notify_cancel()
        self.held.append((future, fn, args))
        return future

    def run_held(self) -> None:
        for future, fn, args in self.held:
            future.set_result(fn(*args))  # type: ignore[operator]


def test_a_call_taken_by_a_worker_after_its_turn_gave_up_on_it_does_not_run():
    ran: list[str] = []
    executor = TakesWithoutRunning()

    async def body(threads: ToolThreads):
        call = asyncio.create_task(threads.run(lambda: ran.append("late"), {}))
        await until(lambda: executor.held, "the worker to take the call")
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        given_up = threads.busy
        executor.run_held()  # the worker gets to it now
        return given_up, threads.busy

    assert run_with(executor, body) == (0, 0)
    assert ran == []


def test_a_running_call_stays_counted_after_its_turn_gives_up_on_it():
    release = threading.Event()
    started = threading.Event()

    def slow():
        started.set()
        release.wait(30)
        return "done"

    async def body(threads: ToolThreads):
        call = asyncio.create_task(threads.run(slow, {}))
        await until(started.is_set, "the tool function to start")  # not to_thread: one worker
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        still = threads.busy  # the thread goes on with the tool function
        release.set()
        await until(lambda: threads.busy == 0, "the tool function to return")
        return still

    assert run_with(ThreadPoolExecutor(max_workers=1), body) == 1


def test_a_call_that_raises_is_counted_off_once():
    def broken(n):
        raise ValueError(n)

    async def body(threads: ToolThreads):
        with pytest.raises(ValueError, match="7"):
            await threads.run(broken, {"n": 7})
        return threads.busy

    assert run_with(ThreadPoolExecutor(max_workers=1), body) == 0


def test_a_call_after_the_executor_shut_down_is_not_counted():
    async def body(threads: ToolThreads):
        await asyncio.get_running_loop().shutdown_default_executor()
        with pytest.raises(RuntimeError):
            await threads.run(print, {})
        return threads.busy

    assert run_with(ThreadPoolExecutor(max_workers=1), body) == 0
