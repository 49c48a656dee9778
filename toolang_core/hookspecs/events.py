"""Event hooks: subscribers of the runtime's event bus, and the turn events plugins
say they publish on it."""

from __future__ import annotations

from collections.abc import Awaitable, Collection
from typing import TYPE_CHECKING

from toolang_core.hookspecs.rules import BROADCAST, COLLECT, calling_rule
from toolang_core.markers import hookspec

if TYPE_CHECKING:
    from toolang_core.events import Event
    from toolang_core.runtime_view import RuntimeView


@calling_rule(BROADCAST)
@hookspec
def toolang_on_event(event: Event, runtime: RuntimeView) -> Awaitable[None] | None:
    """Receive an event published on ``runtime``'s bus.

    Called for every event, after the state it describes is stored. Keep per-runtime
    state in ``runtime.plugin_state(...)``, never in module globals. Return ``None`` or
    an awaitable. Each subscriber is isolated: one that raises is recorded and the
    others still receive the event.
    """


@calling_rule(COLLECT)
@hookspec
def toolang_reports_turn_events(runtime: RuntimeView) -> Collection[str] | None:
    """Name the kinds of turn events this plugin publishes on ``runtime``'s bus in its
    run: events of a running turn (``turn_id`` set) beyond the core's own ``turn.*``,
    e.g. ``("tool.progress",)`` for a tool reporting how far it got.

    Asked by a subscriber deciding whether to listen to the bus at all (through
    ``runtime.reported_turn_events()``): the toolang server shows ``tool.progress`` on
    a turn's event stream and keeps its ``toolang_on_event`` only while some plugin
    reports it (listening makes the runtime publish every turn's events). Asked when
    the runtime starts serving, before ``toolang_startup`` — in a plugin's
    ``toolang_inactive_hooks`` too: answer from what is fixed for the run (your
    settings), not from what has started yet. Return the kinds (a tuple, list or set),
    or ``None`` when this run publishes none; another answer is logged against the
    plugin and counts as none.
    """
