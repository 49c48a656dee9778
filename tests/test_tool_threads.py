"""Tool functions in worker threads are counted exactly while they may run.

The runtime keeps a plugin's database open while :attr:`ToolThreads.busy` says a tool
function may still use it. A call the turn gives up on while it still waits in the
executor's queue never runs; it must not stay counted (the databases would never close
and shutdown would report a thread that does not exist).
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from toolang_core.tools.threads import ToolThreads


def run_on_one_worker(body):
    """Run ``body(threads)`` on a loop whose default executor has a single worker."""

    async def main():
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=1))
        return await body(ToolThreads())

    return asyncio.run(main())


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
        first = asyncio.create_task(threads.run(blocker, {}))
        second = asyncio.create_task(threads.run(queued, {}))
        await asyncio.sleep(0.05)  # the only worker holds blocker; queued waits behind it
        assert threads.busy == 2
        second.cancel()
        with pytest.raises(asyncio.CancelledError):
            await second
        try:
            assert threads.busy == 1  # blocker alone
        finally:
            release.set()
        assert await first == "blocked"
        await asyncio.sleep(0.05)  # the worker takes the given-up call, if it still can
        return threads.busy

    assert run_on_one_worker(body) == 0
    assert ran == ["blocker"]


def test_a_running_call_stays_counted_after_its_turn_gives_up_on_it():
    release = threading.Event()
    started = threading.Event()

    def slow():
        started.set()
        release.wait(30)
        return "done"

    async def body(threads: ToolThreads):
        call = asyncio.create_task(threads.run(slow, {}))
        for _ in range(3000):  # not to_thread: the only worker is the tool's
            if started.is_set():
                break
            await asyncio.sleep(0.01)
        assert started.is_set()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        still = threads.busy  # the thread goes on with the tool function
        release.set()
        while threads.busy:
            await asyncio.sleep(0.01)
        return still

    assert run_on_one_worker(body) == 1


def test_a_call_that_raises_is_counted_off_once():
    def broken(n):
        raise ValueError(n)

    async def body(threads: ToolThreads):
        with pytest.raises(ValueError, match="7"):
            await threads.run(broken, {"n": 7})
        return threads.busy

    assert run_on_one_worker(body) == 0
