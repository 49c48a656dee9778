"""Lifecycle hooks: plugin settings, runtime start-up and shutdown, the serving
runtime's upkeep, and the hooks a plugin has nothing to do in for a run
(``toolang_inactive_hooks``).

``toolang_startup``, ``toolang_upkeep`` and ``toolang_shutdown`` are broadcast: every
implementation is called, each in isolation — one that raises is recorded against its
plugin and the others still run. An implementation may return an awaitable; the runtime
awaits it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable
from typing import TYPE_CHECKING

from toolang_core.hookspecs.rules import BROADCAST, COLLECT, REGISTRATION, calling_rule
from toolang_core.markers import hookspec

if TYPE_CHECKING:
    from toolang_core.plugins.registrars import RegisterSettings
    from toolang_core.runtime_view import RuntimeView


@calling_rule(REGISTRATION)
@hookspec
def toolang_register_settings(register: RegisterSettings) -> None:
    """Declare the attrs class that validates this plugin's ``[plugins.<name>]`` section.

    Called once per plugin host, before any component is built. Call
    ``register(settings_class)`` with an attrs class; your section is
    ``[plugins.<entry-point name>]``. The section is then
    validated with the core's rules (unknown keys, wrong types and missing keys are
    errors naming the file and key path) and the instance reaches your factories as
    ``context.settings``. Return nothing.
    """


@calling_rule(COLLECT)
@hookspec
def toolang_inactive_hooks(runtime: RuntimeView) -> Iterable[str] | None:
    """Name those of this plugin's hooks that have nothing to do in ``runtime``'s run.

    Asked once when the runtime starts serving, before ``toolang_startup`` and before
    the core asks which hooks are implemented. Until the run ends, the core calls
    none of this plugin's implementations of the named hooks — and builds no arguments
    for a hook no plugin is left implementing. Answer from what is fixed for the run
    (your settings), e.g. a tracer with no exporter names its turn hooks. The hooks of
    the tool-call chain and the lifecycle hooks cannot be named: every stage plugin sees
    every call. A name that is not one of your hooks is logged and ignored.
    """


@calling_rule(BROADCAST)
@hookspec
def toolang_startup(runtime: RuntimeView) -> Awaitable[None] | None:
    """Called once when a runtime starts, after its plugins are loaded and configured.

    Return ``None``, or an awaitable the runtime awaits before admitting work. An
    exception is recorded against the plugin and does not stop the runtime.
    """


@calling_rule(BROADCAST)
@hookspec
def toolang_upkeep(runtime: RuntimeView) -> Awaitable[None] | None:
    """Look after your plugin's state while a runtime serves.

    Called by the serving runtime at start-up and after every scheduler heartbeat,
    after the core's own upkeep (task runs ended unnoticed, expired approvals) — e.g.
    toolang-agent-pool pings the remote agents when due (first: ``tryfirst``) and
    toolang-teams replaces unhealthy members of active teams here. ``runtime.store`` is
    the served store. When several runtimes share one store, only the holder of the
    upkeep lease (:mod:`toolang_core.runtime.upkeep_lease`) calls it: do here what one
    node should do for all. Return ``None`` or an awaitable the runtime awaits; keep it short
    (the next upkeep waits for this one). An exception is logged against the plugin;
    the others still run and the runtime goes on.
    """


@calling_rule(BROADCAST)
@hookspec
def toolang_shutdown(runtime: RuntimeView, reason: str = "stop") -> Awaitable[None] | None:
    """Called once when a runtime stops, after running turns have wound down.

    ``reason`` is ``"stop"`` for a normal stop, ``"signal"`` for SIGINT/SIGTERM and
    ``"error"`` when the runtime is stopping because of a failure. Return ``None`` or
    an awaitable. Exceptions are recorded and the other plugins still shut down.
    """
