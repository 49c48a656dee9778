"""The raw limit of bench/mcp_serve.py: the ``mcp`` SDK's own streamable-HTTP server
(``MCPServer.streamable_http_app``, stateful sessions, SSE answers) with one tool of the
same signature as toolang's ``ask_assistant`` that answers at once, served by uvicorn
configured as the toolang server plugin configures it (httptools, no access log, the
asyncio loop). No toolang: no store, no turn, no auth.

    python3 bench/_mcp_raw_server.py PORT [json] [stateless]

``json`` / ``stateless``: the SDK's ``json_response`` / ``stateless_http``.

Prints ``serving`` once it accepts connections; runs until killed.
"""

from __future__ import annotations

import asyncio
import sys


def main() -> None:
    import uvicorn
    from mcp.server.mcpserver import MCPServer
    from mcp.server.transport_security import TransportSecuritySettings

    server = MCPServer("raw")

    @server.tool(structured_output=False)
    async def ask_assistant(
        text: str, thread: str | None = None, request_id: str | None = None
    ) -> str:
        """Answer at once."""
        return "echo: " + text

    options = sys.argv[2:]
    app = server.streamable_http_app(
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        json_response="json" in options,
        stateless_http="stateless" in options,
    )
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=int(sys.argv[1]),
        log_level="warning",
        access_log=False,
        ws="none",
    )
    uvicorn_server = uvicorn.Server(config)

    async def serve() -> None:
        task = asyncio.create_task(uvicorn_server.serve())
        while not uvicorn_server.started:
            await asyncio.sleep(0.01)
        print("serving", flush=True)
        await task

    asyncio.run(serve())


if __name__ == "__main__":
    main()
