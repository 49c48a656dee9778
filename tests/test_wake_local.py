"""Wake-ups of the runtime that listens on a store, from its own thread and from others.

A submission made in the listening loop's own thread pokes the listener directly; from
any other thread (or process) it sends the datagram, which the loop reads.
"""

from __future__ import annotations

import asyncio
import socket
import threading

import pytest

from toolang_core.store.sqlite import SQLiteStore


@pytest.fixture
def stores(tmp_path):
    listening, submitting = SQLiteStore(tmp_path / "t.db"), SQLiteStore(tmp_path / "t.db")
    yield listening, submitting
    submitting.close()
    listening.close()


def no_datagrams(monkeypatch) -> list[object]:
    sent: list[object] = []

    def refuse(self, data, address):
        sent.append(address)
        raise AssertionError("a datagram was sent")

    monkeypatch.setattr(socket.socket, "sendto", refuse)
    return sent


def test_a_submission_in_the_listeners_own_thread_pokes_it_without_a_datagram(stores, monkeypatch):
    listening, submitting = stores

    async def main() -> tuple[bool, bool]:
        waker = listening.listen()
        try:
            assert not await waker.wait(0.01)  # nothing yet; now it is watched
            sent = no_datagrams(monkeypatch)
            waiting = asyncio.create_task(waker.wait(30))
            await asyncio.sleep(0)
            submitting.wake()
            woke = await asyncio.wait_for(waiting, 60)
            submitting.wake()  # while nobody waits: the next wait returns at once
            again = await asyncio.wait_for(waker.wait(30), 5)
            assert sent == []
            return woke, again
        finally:
            waker.close()

    assert asyncio.run(main()) == (True, True)


def test_a_submission_from_another_thread_sends_the_datagram(stores):
    listening, submitting = stores

    async def main() -> bool:
        waker = listening.listen()
        try:
            assert not await waker.wait(0.01)
            thread = threading.Thread(target=submitting.wake)
            thread.start()
            woke = await waker.wait(30)
            thread.join()
            return woke
        finally:
            waker.close()

    assert asyncio.run(main()) is True


def test_a_closed_listener_is_no_longer_poked(stores, monkeypatch):
    listening, submitting = stores

    async def main() -> None:
        waker = listening.listen()
        assert not await waker.wait(0.01)
        waker.close()
        sent: list[object] = []
        monkeypatch.setattr(socket.socket, "sendto", lambda self, data, address: sent.append(1))
        submitting.wake()  # nobody listens in this process: the datagram, as for others
        assert sent == [1]

    asyncio.run(main())


def test_a_wake_up_as_the_wait_times_out_is_kept_for_the_next_wait(stores):
    """The datagram is read in the same loop iteration as the timeout fires: whichever
    wins, the wake-up is not lost (the next wait returns at once)."""
    import time

    listening, submitting = stores

    async def main() -> tuple[bool, bool]:
        waker = listening.listen()
        try:
            waiting = asyncio.create_task(waker.wait(0.05))
            await asyncio.sleep(0)
            thread = threading.Thread(target=submitting.wake)  # a datagram, not a poke
            thread.start()
            thread.join()
            time.sleep(0.1)  # the loop is busy past the deadline: both land together
            first = await waiting
            second = await asyncio.wait_for(waker.wait(0.5), 5) if not first else True
            return first, second
        finally:
            waker.close()

    first, second = asyncio.run(main())
    assert first or second


def test_a_forked_child_does_not_take_the_parents_wake_ups(stores):
    """A child forked from the listening loop's thread must send its submissions' wake-ups
    to the parent (a datagram), not poke its own copy of the parent's listener."""
    import os

    listening, submitting = stores

    async def main() -> bool:
        waker = listening.listen()
        try:
            assert not await waker.wait(0.01)  # the loop and its thread are recorded
            waiting = asyncio.create_task(waker.wait(10))
            await asyncio.sleep(0)
            pid = os.fork()
            if pid == 0:  # the child: submit, then leave without running any cleanup
                try:
                    submitting.wake()
                finally:
                    os._exit(0)
            await asyncio.get_running_loop().run_in_executor(None, os.waitpid, pid, 0)
            return await asyncio.wait_for(waiting, 60)
        finally:
            waker.close()

    assert asyncio.run(main()) is True
