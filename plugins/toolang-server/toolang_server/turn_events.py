"""Turn events of the bus (``toolang_on_event``) for the turn's watchers: the SSE
stream of ``/api/turns/{id}/events`` and the console's trace.

The server keeps the ``tool.progress`` events of the turns this runtime runs (a tool
reporting how far it got: an MCP server's ``notifications/progress``, see
docs/mcp.md) in memory, bounded: the last ``PER_TURN`` events of the last ``TURNS``
turns. They are live information, not part of the turn's record: they are not in the
store, and a turn run by another process, or before this runtime started, shows none.
A watcher attaching late first gets the turn's events so far. The server subscribes
only when a plugin of the run says it reports one of ``KINDS`` in it
(``toolang_reports_turn_events``; toolang-tools-mcp does when it has servers).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from typing import TYPE_CHECKING, Any, Final

from toolang_core import redact

if TYPE_CHECKING:
    from toolang_core import Event, Runtime

STATE_KEY: Final = "server:turn_events"
KINDS: Final = frozenset({"tool.progress"})
"""The bus events shown with their turn."""
TURNS: Final = 64
PER_TURN: Final = 100


def reported_in(runtime: Runtime) -> bool:
    """Whether a plugin of ``runtime``'s run reports one of ``KINDS`` in it: only then
    does the server listen to the bus (a subscriber makes the runtime publish every
    turn's ``turn.*`` events and record the ``events`` stage, a cost for nothing
    otherwise)."""
    return not KINDS.isdisjoint(runtime.reported_turn_events())


class TurnEvents:
    """Per runtime: the recent turn events, by turn, and their watchers."""

    def __init__(self) -> None:
        self._events: OrderedDict[str, deque[dict[str, Any]]] = OrderedDict()
        self._watches: dict[str, set[asyncio.Queue[dict[str, Any]]]] = {}

    @staticmethod
    def of(runtime: Runtime) -> TurnEvents:
        return runtime.plugin_state(STATE_KEY, TurnEvents)

    def accept(self, event: Event) -> None:
        """Keep ``event`` (when it is one of ``KINDS`` and names its turn), masked, and
        hand it to the turn's watchers."""
        if event.kind not in KINDS or not event.turn_id:
            return
        shown = {"kind": event.kind, "at": event.at.isoformat(), **redact(dict(event.data))}
        kept = self._events.get(event.turn_id)
        if kept is None:
            kept = self._events[event.turn_id] = deque(maxlen=PER_TURN)
            while len(self._events) > TURNS:
                self._events.popitem(last=False)
        kept.append(shown)
        for queue in self._watches.get(event.turn_id, ()):
            queue.put_nowait(shown)

    def recent(self, turn_id: str) -> list[dict[str, Any]]:
        """The events of ``turn_id`` kept so far, oldest first."""
        return list(self._events.get(turn_id, ()))

    def watch(self, turn_id: str) -> asyncio.Queue[dict[str, Any]]:
        """A queue of ``turn_id``'s events, those so far queued at once; hand it back
        with :meth:`close`."""
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        for shown in self._events.get(turn_id, ()):
            queue.put_nowait(shown)
        self._watches.setdefault(turn_id, set()).add(queue)
        return queue

    def close(self, turn_id: str, queue: asyncio.Queue[dict[str, Any]]) -> None:
        watches = self._watches.get(turn_id)
        if watches is not None:
            watches.discard(queue)
            if not watches:
                del self._watches[turn_id]
