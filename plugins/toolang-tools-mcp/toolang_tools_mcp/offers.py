"""Keep the runtime's offered tools in step with each server's tool list.

The plugin offers its tools per run (``toolang_offer_tools``): each server's tools are
listed when the runtime starts serving, and again whenever the server says its list
changed (``notifications/tools/list_changed``) or its session (re)opens. A tool the
server no longer lists is withdrawn (a later call fails naming the server); a new one
is offered from the next turn on. A name another plugin has is refused and logged.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import structlog

from toolang_core import OfferClosed, ToolClash

if TYPE_CHECKING:
    from toolang_core import Tool, ToolOffer

log = structlog.get_logger("toolang.tools_mcp")


class ServerOffers:
    """This run's offer and which of its tools each server gave."""

    def __init__(self) -> None:
        self.offer: ToolOffer | None = None
        self.by_server: dict[str, frozenset[str]] = {}
        self._lock = threading.Lock()  # a listing thread and the event loop may both sync

    def start(self, offer: ToolOffer) -> None:
        """A new run: its offer replaces the last run's (whose tools went with it)."""
        with self._lock:
            self.offer = offer
            self.by_server = {}

    def sync(self, server: str, tools: Sequence[Tool]) -> None:
        """Make ``tools`` the offered tools of ``server``: withdraw those it no longer
        lists, offer (or update) the others."""
        with self._lock:
            offer = self.offer
            if offer is None or offer.closed:
                return
            try:
                self._sync(offer, server, tools)
            except OfferClosed:  # the run ended meanwhile
                return

    def _sync(self, offer: ToolOffer, server: str, tools: Sequence[Tool]) -> None:
        before = self.by_server.get(server, frozenset())
        listed = {tool.name for tool in tools}
        for name in sorted(before - listed):
            offer.remove(name, why=f"MCP server {server!r} no longer lists it")
        kept = set()
        for tool in tools:
            try:
                offer.add(tool)
            except ToolClash as exc:
                log.error("tools_mcp.tool_refused", server=server, tool=tool.name, error=str(exc))
                continue
            kept.add(tool.name)
        self.by_server[server] = frozenset(kept)
        added, removed = sorted(listed & kept - before), sorted(before - listed)
        if before and (added or removed):
            log.info("tools_mcp.tools_changed", server=server, added=added, removed=removed)
