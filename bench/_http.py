"""A plain HTTP/1.1 client's reading side, for load generators that share the machine's
two cores with the server they measure: asyncio streams and the standard library only
(httpx's client took about 20 times the CPU per request; ``server.py``, ``a2a.py``).
"""

from __future__ import annotations

import asyncio
import json


async def read_response(reader: asyncio.StreamReader) -> tuple[int, dict[str, object]]:
    """One HTTP/1.1 response with a Content-Length body: its status and JSON body."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = None
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.lower() == "content-length":
            length = int(value)
    if length is None:
        raise RuntimeError(f"a response without Content-Length: {lines[0]}")
    return int(lines[0].split()[1]), json.loads(await reader.readexactly(length))
