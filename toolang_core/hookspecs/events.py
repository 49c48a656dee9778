"""Event hooks: subscribers of the runtime's event bus."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

from toolang_core.hookspecs.rules import BROADCAST, calling_rule
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
