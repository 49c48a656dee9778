"""toolang-events-frozen: a toolang event subscriber that counts events by kind."""

from __future__ import annotations

from collections import Counter

from toolang_core import Event, Runtime, hookimpl


def counts(runtime: Runtime) -> Counter[str]:
    """This runtime's event counts (per-runtime state, never a module global)."""
    return runtime.plugin_state("events-frozen", Counter)


@hookimpl
def toolang_on_event(event: Event, runtime: Runtime) -> None:
    counts(runtime)[event.kind] += 1
