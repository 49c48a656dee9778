"""Turn sources: loops that place turn requests into the inbox; building the enabled ones
from their registrations, and their supervision."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Protocol

import structlog

from toolang_core.errors import ConfigError, describe_exception
from toolang_core.taskruns.types import GROUP as TASK_RUN_GROUP, SOURCE as TASK_RUN_SOURCE

if TYPE_CHECKING:
    from toolang_core.config.model import ToolangConfig
    from toolang_core.inbox.inbox import Inbox
    from toolang_core.plugins.components import Components
    from toolang_core.plugins.context import PluginContext
    from toolang_core.store.types import GroupPolicy

log = structlog.get_logger("toolang.sources")


class TurnSource(Protocol):
    """What a ``toolang_register_turn_sources`` factory returns.

    ``run`` places turn requests into ``inbox`` until ``stop`` is set, then returns. It
    must never execute work itself. A source with nothing to do in the background (chat,
    invoke: their requests arrive through the CLI or API) returns at once.

    A source whose work can change while it sleeps (a chore added at run time) may also
    have a ``wake()`` method: :meth:`Runtime.wake_source <toolang_core.Runtime.wake_source>`
    calls it, in the runtime's event loop, so the source looks at its work at once
    instead of at its next poll.
    """

    async def run(self, inbox: Inbox, stop: asyncio.Event) -> None: ...


def build_turn_sources(
    config: ToolangConfig,
    components: Components,
    plugin_context: Callable[[str], PluginContext],
    names: Collection[str] | None = None,
) -> dict[str, TurnSource]:
    """Build the enabled turn sources (``names``, else ``[runtime] sources``, else all),
    each by its factory with its plugin's context (``plugin_context``).

    :raises ConfigError: naming a source no installed plugin offers.
    """
    registered = components.of_kind("turn source")
    wanted = names if names is not None else config.runtime.sources
    if wanted is None:
        wanted = sorted(registered)
    missing = [name for name in wanted if name not in registered]
    if missing:
        raise ConfigError(
            [
                f"{config.display_name}: runtime.sources: no installed plugin offers the "
                f"turn source(s) {', '.join(map(repr, missing))} (available: "
                f"{', '.join(sorted(registered)) or 'none'})"
            ]
        )
    return {
        name: registered[name].factory(plugin_context(registered[name].plugin)) for name in wanted
    }


def group_defaults(components: Components) -> dict[str, GroupPolicy]:
    """Each thread group's admission defaults, from who owns it: the core's task runs
    (``task``), and every turn source that declared its own when it registered."""
    defaults = {TASK_RUN_SOURCE: TASK_RUN_GROUP}
    for name, registration in components.of_kind("turn source").items():
        if registration.admission is not None:
            defaults[name] = registration.admission
    return defaults


class RunningSources:
    """The turn sources a serving runtime runs, so that others can wake one: a tool in
    a worker thread, a route in the loop (:meth:`wake` is safe from any thread)."""

    def __init__(self) -> None:
        self._sources: Mapping[str, TurnSource] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(
        self, sources: Mapping[str, TurnSource], inbox: Inbox, stop: asyncio.Event
    ) -> list[asyncio.Task[None]]:
        """Run each of ``sources`` under :func:`supervise` in the running loop (until
        ``stop``); they can be woken from now on."""
        self._sources, self._loop = dict(sources), asyncio.get_running_loop()
        return [
            asyncio.create_task(supervise(name, source, inbox, stop), name=f"source-{name}")
            for name, source in sources.items()
        ]

    def stopped(self) -> None:
        self._sources, self._loop = {}, None

    def wake(self, name: str) -> bool:
        """Call source ``name``'s ``wake()`` in its loop; ``False`` when no such source
        runs or it takes no wake-ups."""
        wake = getattr(self._sources.get(name), "wake", None)
        loop = self._loop
        if loop is None or not callable(wake) or loop.is_closed():
            return False
        loop.call_soon_threadsafe(wake)
        return True


async def supervise(
    name: str, source: TurnSource, inbox: Inbox, stop: asyncio.Event, *, max_backoff: float = 60.0
) -> None:
    """Run one source; if it raises, log it and restart it with growing back-off.

    A source with no ``run`` method is a plugin bug no retry can fix: it is logged once
    (naming the source and its type) and not run."""
    if not callable(getattr(source, "run", None)):
        log.error(
            "source.invalid",
            source=name,
            error=f"{type(source).__name__} has no run(inbox, stop) method; the source "
            "is not run (see docs/hooks/sources.md)",
        )
        return
    delay = 1.0
    while not stop.is_set():
        try:
            await source.run(inbox, stop)
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.error(
                "source.failed", source=name, error=describe_exception(exc), retry_in_seconds=delay
            )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)
            delay = min(delay * 2, max_backoff)
