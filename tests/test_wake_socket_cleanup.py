"""A runtime that stops leaves its event loop watching no closed socket.

The scheduler's wake-up pump waits on a datagram socket through the loop. Closing that
socket while the receive was still pending left the loop's selector with an entry for
a closed descriptor; the next socket given the same number could not be registered
(epoll answers ENOENT), so e.g. the event publisher's first webhook request after a
turn failed with "All connection attempts failed".
"""

from __future__ import annotations

import asyncio
import socket

from toolang_core import hookimpl
from toolang_core.store.sqlite import SQLiteStore
from toolang_core.testing.runtimes import make_runtime, request


async def connect_and_talk(port: int) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"ping")
    await writer.drain()
    answer = await reader.read(4)
    writer.close()
    await writer.wait_closed()
    return answer


async def echo_server() -> asyncio.Server:
    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(await reader.read(4))
        await writer.drain()
        writer.close()

    return await asyncio.start_server(echo, "127.0.0.1", 0)


class TalksOnShutdown:
    """Opens a TCP connection as the runtime shuts down, as the event publisher
    delivers what is still queued."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.answers: list[bytes] = []

    @hookimpl
    def toolang_shutdown(self, runtime, reason):
        async def talk() -> None:
            self.answers.append(await connect_and_talk(self.port))

        return talk()


def test_sockets_opened_while_the_runtime_stops_work(tmp_path):
    runtime = make_runtime(tmp_path)
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(request("chat:1", "hello")).id

    async def main() -> list[bytes]:
        server = await echo_server()
        talker = TalksOnShutdown(server.sockets[0].getsockname()[1])
        runtime.host.register(talker, "talks-on-shutdown")
        for _ in range(3):  # each serve opens and closes its own wake-up socket
            await runtime.serve(asyncio.Event(), until_idle=True, sources=())
        server.close()
        await server.wait_closed()
        return talker.answers

    assert asyncio.run(main()) == [b"ping"] * 3
    assert inbox.get(turn_id).output == "hello"


def test_closing_a_waker_with_a_receive_pending_stops_the_loop_watching_it(tmp_path):
    store = SQLiteStore(tmp_path / "toolang.db")

    async def main() -> None:
        loop = asyncio.get_running_loop()
        waker = store.listen()
        assert waker.listening
        pending = asyncio.create_task(waker.wait(60))
        await asyncio.sleep(0.01)  # the receive is registered with the loop now
        fd = waker._sock.fileno()
        waker.close()
        # The next socket takes the freed number; the loop must be able to watch it.
        left, right = socket.socketpair()
        try:
            assert left.fileno() == fd or right.fileno() == fd
            readable = loop.create_future()
            loop.add_reader(left.fileno(), readable.set_result, None)
            right.send(b"x")
            await asyncio.wait_for(readable, 60)
            loop.remove_reader(left.fileno())
        finally:
            left.close()
            right.close()
        pending.cancel()
        await asyncio.gather(pending, return_exceptions=True)

    try:
        asyncio.run(main())
    finally:
        store.close()
