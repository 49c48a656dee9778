"""toolang-hook-event-publisher: the EventPublisher stage of the tool-call chain.

Every executed tool call becomes a ``tool.completed`` or ``tool.failed`` event on the
runtime's event bus, so every ``toolang_on_event`` subscriber sees it next to the
core's ``turn.*`` events. This plugin also subscribes to the bus and forwards the
events to the configured sinks (JSON-lines file, stdout, HTTP webhook) from background
tasks: a slow or dead sink never blocks a turn.

Importing this module stays cheap (``toolang --help`` imports every plugin): the
delivery machinery loads on first use, httpx only when a webhook is configured.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

from toolang_core import hookimpl

if TYPE_CHECKING:
    from toolang_core import (
        Event,
        RegisterSettings,
        RuntimeView,
        ToolCall,
        ToolCallContext,
        ToolResult,
    )
    from toolang_hook_event_publisher.outlet import SinkStats
    from toolang_hook_event_publisher.publisher import Publisher

NAME = "hook-event-publisher"


def publisher_of(runtime: RuntimeView) -> Publisher:
    """This runtime's publisher (built on first use from the plugin's settings)."""

    def build() -> Publisher:
        from toolang_hook_event_publisher.publisher import Publisher
        from toolang_hook_event_publisher.settings import PublisherSettings

        return Publisher(runtime.settings.get(NAME) or PublisherSettings())

    return runtime.plugin_state(NAME, build)


def stats(runtime: RuntimeView) -> dict[str, SinkStats]:
    """What became of the events of each sink so far, by sink label."""
    return publisher_of(runtime).stats()


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    from toolang_hook_event_publisher.settings import PublisherSettings

    register(PublisherSettings)


@hookimpl
def toolang_publish_event(
    call: ToolCall, result: ToolResult, ctx: ToolCallContext
) -> Awaitable[object] | None:
    """Publish the call as a ``tool.*`` event on the runtime's bus (when anyone listens:
    building an event nobody receives would cost every tool call for nothing)."""
    runtime = ctx.runtime
    publisher = publisher_of(runtime)
    if not publisher.listened(runtime, NAME):
        return None
    from toolang_hook_event_publisher.records import tool_event

    return runtime.publish(tool_event(call, result, ctx, publisher.settings))


@hookimpl
def toolang_inactive_hooks(runtime: RuntimeView) -> tuple[str, ...]:
    """With no sink configured there is nowhere to forward events: the runtime need not
    hand this plugin any (nor build its ``turn.*`` events, when nobody else listens)."""
    from toolang_hook_event_publisher.settings import PublisherSettings

    settings = runtime.settings.get(NAME) or PublisherSettings()
    return () if settings.sinks else ("toolang_on_event",)


@hookimpl
def toolang_on_event(event: Event, runtime: RuntimeView) -> None:
    """Queue the event for the sinks that take its kind; never waits."""
    publisher_of(runtime).accept(event)


@hookimpl
async def toolang_shutdown(runtime: RuntimeView, reason: str) -> None:
    """Flush the queues for at most ``flush_seconds`` and report what was lost."""
    await publisher_of(runtime).shutdown(reason)
