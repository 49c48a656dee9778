"""The server's connections: what the listening socket gives every accepted one."""

from __future__ import annotations

import asyncio
import socket


def test_every_accepted_connection_sends_without_waiting_for_acks(toolang_runtime):
    """TCP_NODELAY on the server's side of each connection: without it a response
    written in two parts (headers, then body) waits for the client's delayed ACK, about
    40 ms per request on a kept-alive connection."""
    import toolang_server

    config = '[runtime]\nexecutor = "echo"\n[plugins.server]\nenabled = true\nport = 0\n'
    runtime = toolang_runtime(config, plugins={"server": toolang_server})

    async def check() -> list[int]:
        stop = asyncio.Event()
        serving = asyncio.create_task(runtime.serve(stop, sources=()))
        state = toolang_server.server_state(runtime)
        while "running" not in state:
            assert not serving.done(), serving.result()
            await asyncio.sleep(0.01)
        running = state["running"]
        host, port = running.url.removeprefix("http://").rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        try:
            writer.write(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            await reader.readuntil(b"\r\n\r\n")  # the connection is accepted and served
            connections = running.server.server_state.connections
            return [
                c.transport.get_extra_info("socket").getsockopt(
                    socket.IPPROTO_TCP, socket.TCP_NODELAY
                )
                for c in connections
            ]
        finally:
            writer.close()
            stop.set()
            await serving

    options = asyncio.run(check())
    assert options, "the server saw no connection"
    assert all(options), options
