"""toolang-otel: OpenTelemetry traces and metrics of a runtime's turns.

Spans and metrics follow the GenAI semantic conventions (``invoke_agent``, ``chat``,
``execute_tool``, ``gen_ai.usage.*``); they are made with the official SDK and sent by
its own exporters (console, OTLP over HTTP or gRPC, in-memory for tests) from its own
threads. See docs/otel.md.

Importing this module stays cheap (``toolang --help`` imports every plugin): the SDK
loads when a runtime with ``[plugins.otel] exporter`` set starts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

from toolang_core import hookimpl

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export import SpanExporter

    from toolang_core import (
        DoctorCheck,
        RegisterSettings,
        Runtime,
        StageDone,
        StepRecord,
        TurnRequest,
    )
    from toolang_otel.plugin import OtelPlugin
    from toolang_otel.settings import OtelSettings

NAME = "otel"


class Holder:
    """Per-runtime state: the running telemetry, once a runtime started with an exporter;
    the last one after it stopped (to read what an in-memory exporter kept); and, for
    tests, a replacement for the span exporter the settings name."""

    __slots__ = ("last", "plugin", "span_exporter_factory")

    def __init__(self) -> None:
        self.plugin: OtelPlugin | None = None
        self.last: OtelPlugin | None = None
        self.span_exporter_factory: Callable[[OtelSettings], SpanExporter] | None = None


def holder_of(runtime: Runtime) -> Holder:
    return runtime.plugin_state(NAME, Holder)


def plugin_of(runtime: Runtime) -> OtelPlugin | None:
    """This runtime's telemetry once it started with an exporter, else ``None``."""
    return holder_of(runtime).plugin


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    from toolang_otel.settings import OtelSettings

    register(OtelSettings)


TURN_HOOKS: Final = (
    "toolang_turn_started",
    "toolang_turn_step",
    "toolang_turn_finished",
    "toolang_outbound_headers",
)
"""What the plugin does on a turn's path: nothing at all while export is off."""


@hookimpl
def toolang_inactive_hooks(runtime: Runtime) -> tuple[str, ...]:
    """Installed but not exporting (``exporter = "none"``, the default): a run calls
    none of the turn hooks, so their turns pay nothing for the plugin."""
    from toolang_otel.settings import OtelSettings

    settings = runtime.settings.get(NAME) or OtelSettings()
    return () if settings.enabled else TURN_HOOKS


@hookimpl
async def toolang_startup(runtime: Runtime) -> None:
    from toolang_otel.settings import OtelSettings

    settings = runtime.settings.get(NAME) or OtelSettings()
    holder = holder_of(runtime)
    if settings.enabled and holder.plugin is None:
        # The SDK comes with the plugin module: imported only when telemetry is on.
        from toolang_otel.plugin import OtelPlugin

        factory = {"span_exporter_factory": holder.span_exporter_factory}
        holder.plugin = holder.last = OtelPlugin(
            runtime, settings, **{k: v for k, v in factory.items() if v is not None}
        )
        holder.plugin.start()


@hookimpl
async def toolang_shutdown(runtime: Runtime, reason: str) -> None:
    holder = holder_of(runtime)
    plugin, holder.plugin = holder.plugin, None
    if plugin is not None:
        await plugin.stop()


# The turn hooks run several times a turn: the lookup is inlined (no helper calls).


@hookimpl
def toolang_turn_started(turn: TurnRequest, runtime: Runtime) -> None:
    plugin = runtime.plugin_state(NAME, Holder).plugin
    if plugin is not None:
        plugin.turns.started(turn)


@hookimpl
def toolang_turn_step(step: StepRecord, runtime: Runtime) -> None:
    plugin = runtime.plugin_state(NAME, Holder).plugin
    if plugin is not None:
        plugin.turns.step(step)


@hookimpl
def toolang_turn_finished(turn: TurnRequest, stages: Sequence[StageDone], runtime: Runtime) -> None:
    plugin = runtime.plugin_state(NAME, Holder).plugin
    if plugin is not None:
        plugin.turns.finished(turn, stages)


@hookimpl
def toolang_outbound_headers(
    turn: TurnRequest, key: str, runtime: Runtime
) -> dict[str, str] | None:
    plugin = runtime.plugin_state(NAME, Holder).plugin
    return None if plugin is None else plugin.turns.headers(turn, key)


@hookimpl
def toolang_doctor_checks(runtime: Runtime) -> list[DoctorCheck]:
    from toolang_otel.doctor import checks

    return checks(runtime)
