"""Turn-source hooks: loops that place turn requests into the inbox."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolang_core.hookspecs.rules import BROADCAST, REGISTRATION, calling_rule
from toolang_core.markers import hookspec

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from toolang_core.plugins.registrars import RegisterTurnSource
    from toolang_core.runtime_view import RuntimeView
    from toolang_core.store.types import TurnRequest


@calling_rule(REGISTRATION)
@hookspec
def toolang_register_turn_sources(register: RegisterTurnSource) -> None:
    """Offer turn sources.

    Call ``register(name, factory, admission=GroupPolicy(...))``. For every source
    enabled in the configuration the runtime calls ``factory(context)`` and runs the
    returned object's loop, which may only submit turn requests to the inbox — never
    execute work itself. ``admission`` (optional) declares the defaults of the thread
    group named like the source. Return nothing.
    """


@calling_rule(BROADCAST)
@hookspec
def toolang_deliver_turn(turn: TurnRequest, runtime: RuntimeView) -> Awaitable[None] | None:
    """Send a finished turn's answer out, e.g. as a reply on the channel it came from.

    Called once per finished turn — the last of the post-turn stages, after the turn's
    state, its prompt trace, the memory write and the bus events — with the turn as
    stored (``status``, ``output``, ``error``). Deliver only what is yours (check
    ``turn.source`` / ``turn.channel``) and return ``None`` or an awaitable. A delivery
    that raises is recorded in the turn's after-record; the turn stays as it is.
    """
