"""Talking to a real server a test started (``toolang run`` with toolang-server on, in a
subprocess): its URL once it listens, an HTTP client with an owner's token, and its
server-sent event streams read back.

The client needs ``httpx`` (toolang-server's tests have it); the rest is the standard
library.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolang_core.testing.processes import wait_serving

if TYPE_CHECKING:
    import httpx

__all__ = ["bearer_client", "parse_sse", "server_url"]


def server_url(
    process: subprocess.Popen[Any],
    log: Path,
    home: Path,
    timeout: float = 60,
    what: str = "toolang run's server",
) -> str:
    """The URL of the server of the ``toolang run`` in ``home`` (``process``, logging to
    ``log``), once it listens: it writes ``<home>/.toolang/server.url`` then.

    :raises AssertionError: when the process exits first (with its log), or after
        ``timeout`` seconds, naming ``what``."""
    url_file = home / ".toolang" / "server.url"
    wait_serving(process, log, url_file.is_file, timeout, what)
    return url_file.read_text().strip()


def bearer_client(url: str, token: str | None, *, timeout: float, **options: Any) -> httpx.Client:
    """An ``httpx.Client`` on ``url`` that sends ``token`` as its bearer token (none
    when ``token`` is ``None`` or empty); ``options`` go to ``httpx.Client``. Give a
    ``timeout`` above the longest wait a test asks the server for."""
    import httpx

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=url, headers=headers, timeout=timeout, **options)


def parse_sse(raw: str) -> list[tuple[str, dict[str, Any]]]:
    """The events of a server-sent event stream's text, in order: ``(event, data)``
    for each block with an ``event:`` line (``data`` is its JSON ``data:`` line, ``{}``
    without one)."""
    events = []
    for block in raw.split("\n\n"):
        kind, data = None, None
        for line in block.splitlines():
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                data = json.loads(line[6:])
        if kind is not None:
            events.append((kind, data or {}))
    return events
