"""Turns as spans and metrics, following the OpenTelemetry GenAI semantic conventions.

    invoke_agent <agent>                 one per turn (a task run's: a child of its parent's)
    ├── admission                        queued → admitted (first attempt)
    ├── memory_recall
    ├── prompt_build
    ├── chat <model>                     each model call: gen_ai.* request, usage, finish
    ├── execute_tool <tool>              each tool call: one event per hook stage's verdict
    └── after_turn <stage>               prompt trace, memory write, events, delivery

Across processes the W3C trace context goes both ways: a turn whose request carries a
caller's ``traceparent`` (the A2A endpoint and the HTTP submit endpoint keep it in the
request's metadata) is a child of the caller's span, and each model call gets a
``traceparent`` to send (``toolang_outbound_headers``) naming the ``chat`` span the
call will be — a remote agent's turn is that span's child.

Spans are made from what the core stored — a step's own start and end times and its
data as stored (masked by the redaction policy) — when the step is stored, so no span is
open across an ``await`` of the turn. Content (tool arguments and results, prompts and
answers) is recorded only with ``record_content``, and then masked again with the core's
redaction entry point and cut to ``max_content_chars``.
"""

from __future__ import annotations

import json
import random
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.metrics import CallbackOptions, Observation
from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from toolang_core import TRACE_CONTEXT_META, redact
from toolang_otel.measures import SECONDS, TOKENS

if TYPE_CHECKING:
    from opentelemetry.trace import Span

    from toolang_core import Runtime, StageDone, StepRecord, TurnRequest
    from toolang_otel.settings import OtelSettings
    from toolang_otel.telemetry import Telemetry

UNSAMPLED: Final = object()
"""A turn sampled out (and so its task runs)."""

KNOWN_PARENTS: Final = 10_000
"""Span contexts of recent turns kept for their task runs (which may start after the
parent turn ended)."""

W3C: Final = TraceContextTextMapPropagator()
"""The SDK's W3C trace-context propagator: reads a caller's ``traceparent``/``tracestate``."""

_INPUT_KEYS: Final = ("input_tokens", "prompt_tokens", "input")
_OUTPUT_KEYS: Final = ("output_tokens", "completion_tokens", "output")
_GROUP: Final = ("toolang.thread.group", "toolang.turn.source")
_ENDED: Final = (*_GROUP, "toolang.turn.status")
_CHAT: Final = ("gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model")


def _ns(seconds: float) -> int:
    return int(seconds * 1e9)


def _observe(keys: Sequence[str], counts: Mapping[tuple[str, ...], int]) -> list[Observation]:
    return [Observation(n, dict(zip(keys, values, strict=True))) for values, n in counts.items()]


def _tokens(usage: Mapping[str, Any], keys: Sequence[str]) -> int | None:
    for key in keys:
        value = usage.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


class TurnTelemetry:
    """Spans and metrics of one runtime's turns (the three ``toolang_turn_*`` hooks)."""

    def __init__(self, telemetry: Telemetry, settings: OtelSettings, *, default_agent: str) -> None:
        self.settings = settings
        self.default_agent = default_agent
        self.tracer = telemetry.tracer
        self.live: dict[str, Span] = {}
        self.parents: OrderedDict[str, SpanContext | object] = OrderedDict()
        """Span contexts of recent turns (``UNSAMPLED`` for those not traced), for their
        task runs."""
        self.promised: dict[str, dict[str, int]] = {}
        """Span ids promised to the model calls of a running turn (by step key), in
        ``traceparent`` headers sent before the call's span exists."""
        self.telemetry = telemetry
        self.queued: dict[str, int] = {}
        """Queued requests per thread group, refreshed from the store in the background."""
        self.started_counts: Counter[tuple[str, ...]] = Counter()
        """Turns started by (group, source): counted in a plain dict and read by the
        SDK when it collects (a counter's ``add()`` costs several microseconds)."""
        self.finished_counts: Counter[tuple[str, ...]] = Counter()
        """Turns finished by (group, source, status, outcome)."""
        meter, measures = telemetry.meter, telemetry.measures
        self.metered = meter is not None and measures is not None
        if meter is None or measures is None:
            return
        meter.create_observable_counter(
            "toolang.turns.started",
            callbacks=[lambda _options: _observe(_GROUP, self.started_counts)],
            unit="{turn}",
            description="Turns admitted",
        )
        meter.create_observable_counter(
            "toolang.turns.finished",
            callbacks=[
                lambda _options: _observe((*_ENDED, "toolang.turn.outcome"), self.finished_counts)
            ],
            unit="{turn}",
            description="Turns ended, by status",
        )
        # Histograms aggregated by the plugin (measures.py): a fifth of the SDK's cost.
        self.turn_duration = measures.histogram(
            "toolang.turn.duration",
            unit="s",
            description="Admission to end of a turn",
            keys=_ENDED,
            bounds=SECONDS,
        )
        self.admission = measures.histogram(
            "toolang.admission.duration",
            unit="s",
            description="How long a turn waited in the queue before it was admitted",
            keys=_GROUP,
            bounds=SECONDS,
        )
        self.tool_duration = measures.histogram(
            "toolang.tool_call.duration",
            unit="s",
            description="Tool calls through the chain",
            keys=("gen_ai.tool.name", "toolang.tool.outcome"),
            bounds=SECONDS,
        )
        self.token_usage = measures.histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Tokens per model call",
            keys=(*_CHAT, "gen_ai.token.type"),
            bounds=TOKENS,
        )
        self.model_duration = measures.histogram(
            "gen_ai.client.operation.duration",
            unit="s",
            description="Model calls",
            keys=(*_CHAT, "error.type"),
            bounds=SECONDS,
        )
        meter.create_observable_gauge(
            "toolang.queue.depth",
            callbacks=[self._observe_queues],
            unit="{turn}",
            description="Queued turn requests per thread group",
        )

    # -- the hooks -----------------------------------------------------------------------

    def started(self, turn: TurnRequest) -> None:
        eligible = max(turn.created_at, turn.not_before or 0.0)
        admitted = turn.started_at if turn.started_at is not None else turn.updated_at
        first = turn.attempt <= 1 and admitted >= eligible
        if self.metered:
            group = (turn.thread_group, turn.source)
            self.started_counts[group] += 1
            if first:
                self.admission.record(admitted - eligible, group)
        if self.tracer is None:
            return
        parent_context = self.parents.get(turn.parent) if turn.parent is not None else None
        if parent_context is None and turn.meta.get(TRACE_CONTEXT_META):
            parent_context = _remote_parent(turn.meta[TRACE_CONTEXT_META])
        if parent_context is UNSAMPLED or (
            parent_context is None and self.telemetry.draw_root() is None
        ):
            self._remember(turn.id, UNSAMPLED)  # its task runs are not traced either
            return
        agent = turn.agent or self.default_agent
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": agent,
            "gen_ai.conversation.id": turn.thread_id,
            "toolang.turn.id": turn.id,
            "toolang.turn.source": turn.source,
            "toolang.thread.group": turn.thread_group,
            "toolang.turn.attempt": turn.attempt,
            "toolang.turn.priority": turn.priority,
        }
        if turn.parent is not None:
            attributes["toolang.turn.parent"] = turn.parent
        if isinstance(parent_context, SpanContext) and parent_context.is_remote:
            attributes["toolang.turn.remote_parent"] = True
        # A root's parent is nothing — not whatever span the caller's context holds.
        context = (
            trace.set_span_in_context(NonRecordingSpan(parent_context))
            if isinstance(parent_context, SpanContext)
            else Context()
        )
        span = self.tracer.start_span(
            f"invoke_agent {agent}",
            context=context,
            start_time=_ns(eligible if first else admitted),
            attributes=attributes,
        )
        self.telemetry.ids.next_trace_id = None  # used by this span, or by none
        self.live[turn.id] = span
        self._remember(turn.id, span.get_span_context())
        if first and admitted > eligible and span.is_recording():
            self.tracer.start_span(
                "admission",
                context=trace.set_span_in_context(span),
                start_time=_ns(eligible),
                attributes={"toolang.thread.group": turn.thread_group},
            ).end(end_time=_ns(admitted))

    def step(self, step: StepRecord) -> None:
        span = self.live.get(step.turn_id)
        if span is not None and not span.is_recording():
            span = None  # a turn sampled out: its steps count in the metrics only
        data = step.data
        if step.kind == "model_call":
            self._model_call(span, step, data)
        elif step.kind == "tool_call":
            self._tool_call(span, step, data)
        elif span is None:
            return
        elif step.kind == "prompt_build":
            # An event, not a span: it takes microseconds and a span costs more than that.
            span.add_event(
                "prompt_build",
                {"toolang.prompt.history_messages": int(data.get("history_messages") or 0)},
                timestamp=_ns(step.finished_at),
            )
        else:
            self._other(span, step, data)

    def finished(self, turn: TurnRequest, stages: Sequence[StageDone]) -> None:
        ended = turn.finished_at or turn.updated_at
        if self.metered:
            labels = (turn.thread_group, turn.source, str(turn.status))
            self.finished_counts[(*labels, turn.outcome or "")] += 1
            if turn.started_at is not None:
                self.turn_duration.record(max(0.0, ended - turn.started_at), labels)
        self.promised.pop(turn.id, None)
        span = self.live.pop(turn.id, None)
        if span is None:
            return
        if not span.is_recording():
            span.end()
            return
        context = trace.set_span_in_context(span)
        previous = stages[0].at if stages else ended
        for stage in stages[1:]:
            child = self.tracer.start_span(  # type: ignore[union-attr]
                f"after_turn {stage.stage}",
                context=context,
                start_time=_ns(previous),
                attributes={"toolang.stage": stage.stage, "toolang.stage.ok": stage.ok},
            )
            if not stage.ok:
                child.set_status(Status(StatusCode.ERROR, f"{stage.stage} failed"))
            child.end(end_time=_ns(stage.at))
            previous = stage.at
        span.set_attribute("toolang.turn.status", str(turn.status))
        if turn.outcome:
            span.set_attribute("toolang.turn.outcome", turn.outcome)
        if str(turn.status) == "failed":
            span.set_attribute("error.type", turn.outcome or "error")
            span.set_status(Status(StatusCode.ERROR, self._text(turn.error) or turn.outcome))
        span.end(end_time=_ns(max(ended, previous)))

    def headers(self, turn: TurnRequest, key: str) -> dict[str, str] | None:
        """The W3C trace context for the model call ``key`` of ``turn`` to send: the
        call's ``chat`` span as the parent (its span id drawn now and used when the span
        is made), or — for a turn sampled out — a context that says so, so the callee
        does not trace its part either. ``None`` for a turn this plugin does not know.

        Written by hand rather than by the SDK's propagator (which reads them back in
        :func:`_remote_parent`): it runs before every model call, and the propagator
        takes ten times as long to write the same line."""
        span = self.live.get(turn.id)
        if span is not None and span.is_recording():
            span_id = random.getrandbits(64) or 1
            self.promised.setdefault(turn.id, {})[key] = span_id
            own = span.get_span_context()
            headers = {
                "traceparent": f"00-{own.trace_id:032x}-{span_id:016x}-{own.trace_flags:02x}"
            }
            if own.trace_state:
                headers["tracestate"] = own.trace_state.to_header()
            return headers
        if self.parents.get(turn.id) is UNSAMPLED:
            ids = random.getrandbits(192)  # a trace id and a span id, neither all zeros
            trace_id, span_id = ids >> 64 or 1, ids & 0xFFFF_FFFF_FFFF_FFFF or 1
            return {"traceparent": f"00-{trace_id:032x}-{span_id:016x}-00"}
        return None

    # -- steps ---------------------------------------------------------------------------

    def _model_call(self, span: Span | None, step: StepRecord, data: Mapping[str, Any]) -> None:
        model_name = str(data.get("model") or "unknown")
        provider, _, model_id = model_name.partition("/")
        response = data.get("response") or {}
        usage = response.get("usage") or {}
        request_model = model_id or str(response.get("model") or provider)
        inputs = outputs = None
        if usage:
            inputs, outputs = _tokens(usage, _INPUT_KEYS), _tokens(usage, _OUTPUT_KEYS)
        if self.metered:
            failed = "model_error" if step.status == "failed" else None
            took = max(0.0, step.finished_at - step.started_at)
            self.model_duration.record(took, ("chat", provider, request_model, failed))
            if inputs is not None:
                self.token_usage.record(inputs, ("chat", provider, request_model, "input"))
            if outputs is not None:
                self.token_usage.record(outputs, ("chat", provider, request_model, "output"))
        if span is None or self.tracer is None:
            return
        # The agent is on the turn's span (and in a transfer's); not repeated per call.
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider,
            "gen_ai.request.model": request_model,
            "gen_ai.system": provider,  # the name before gen_ai.provider.name, still read
        }
        if response.get("model"):
            attributes["gen_ai.response.model"] = str(response["model"])
        if inputs is not None:
            attributes["gen_ai.usage.input_tokens"] = inputs
        if outputs is not None:
            attributes["gen_ai.usage.output_tokens"] = outputs
        if step.status == "completed":
            finish = "tool_calls" if response.get("tool_calls") else "stop"
            attributes["gen_ai.response.finish_reasons"] = (finish,)
        if self.settings.record_content:
            attributes["gen_ai.input.messages"] = self._json(data.get("messages", ()))
            attributes["gen_ai.output.messages"] = self._json(
                {"text": response.get("text", ""), "tool_calls": response.get("tool_calls", ())}
            )
        promised = self.promised.get(step.turn_id)
        if promised:  # this call sent a traceparent naming its span: keep the promise
            key = step.idempotency_key
            # A failed call is stored without its key; it is the one asked for last.
            span_id = promised.pop(key, None) if key is not None else promised.popitem()[1]
            self.telemetry.ids.next_span_id = span_id
        child = self.tracer.start_span(
            f"chat {request_model}",
            context=trace.set_span_in_context(span),
            kind=SpanKind.CLIENT,
            start_time=_ns(step.started_at),
            attributes=attributes,
        )
        if step.status == "failed":
            child.set_attribute("error.type", "model_error")
            child.set_status(Status(StatusCode.ERROR, self._text(step.error) or "model_error"))
        child.end(end_time=_ns(step.finished_at))

    def _tool_call(self, span: Span | None, step: StepRecord, data: Mapping[str, Any]) -> None:
        call = data.get("call") or {}
        result = data.get("result") or {}
        name = str(call.get("name") or "unknown")
        outcome = "ok" if result.get("ok") else str(result.get("error_type") or "error")
        if self.metered:
            self.tool_duration.record(max(0.0, step.finished_at - step.started_at), (name, outcome))
        if span is None or self.tracer is None:
            return
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": str(call.get("id") or ""),
            "gen_ai.tool.type": "function",
            "toolang.tool.outcome": outcome,
        }
        if data.get("params_modified"):
            attributes["toolang.tool.params_modified"] = True
        if self.settings.record_content:
            attributes["gen_ai.tool.call.arguments"] = self._json(call.get("params", {}))
            attributes["gen_ai.tool.call.result"] = self._json(
                result.get("output") if result.get("ok") else result.get("error")
            )
        child = self.tracer.start_span(
            f"execute_tool {name}",
            context=trace.set_span_in_context(span),
            start_time=_ns(step.started_at),
            attributes=attributes,
        )
        for stage in data.get("chain") or ():
            event: dict[str, Any] = {
                "toolang.hook.stage": str(stage.get("stage")),
                "toolang.hook.verdict": str(stage.get("verdict")),
            }
            if stage.get("plugin"):
                event["toolang.hook.plugin"] = str(stage["plugin"])
            if self.settings.record_content and stage.get("detail"):
                event["toolang.hook.detail"] = self._text(str(stage["detail"]))
            child.add_event(str(stage.get("stage")), event, timestamp=_ns(step.finished_at))
        if outcome != "ok":
            child.set_attribute("error.type", outcome)
            child.set_status(Status(StatusCode.ERROR, outcome))
        child.end(end_time=_ns(step.finished_at))

    def _other(self, span: Span, step: StepRecord, data: Mapping[str, Any]) -> None:
        attributes: dict[str, Any] = {"toolang.step.kind": step.kind}
        if step.kind == "memory_recall":
            attributes["toolang.memory.provider"] = str(data.get("provider") or "")
            attributes["toolang.memory.items"] = len(data.get("items") or ())
            attributes["toolang.memory.degraded"] = bool(data.get("degraded"))
        elif step.kind == "transfer":
            attributes["toolang.transfer.from"] = str(data.get("from") or "")
            attributes["toolang.transfer.to"] = str(data.get("to") or "")
        assert self.tracer is not None
        child = self.tracer.start_span(
            step.kind,
            context=trace.set_span_in_context(span),
            start_time=_ns(step.started_at),
            attributes=attributes,
        )
        if step.status == "failed":
            child.set_status(Status(StatusCode.ERROR, self._text(step.error) or step.kind))
        child.end(end_time=_ns(step.finished_at))

    # -- helpers -------------------------------------------------------------------------

    def _remember(self, turn_id: str, context: SpanContext | object) -> None:
        self.parents[turn_id] = context
        if len(self.parents) > KNOWN_PARENTS:
            self.parents.popitem(last=False)

    def _text(self, text: str | None) -> str | None:
        """Content as a span may carry it: only with ``record_content``, masked, cut."""
        if text is None or not self.settings.record_content:
            return None
        masked = str(redact(text))
        limit = self.settings.max_content_chars
        return masked if len(masked) <= limit else masked[:limit] + "…"

    def _json(self, value: Any) -> str:
        masked = redact(value)
        text = json.dumps(masked, ensure_ascii=False, default=str)
        limit = self.settings.max_content_chars
        return text if len(text) <= limit else text[:limit] + "…"

    def _observe_queues(self, _options: CallbackOptions) -> Iterable[Observation]:
        return [Observation(n, {"toolang.thread.group": g}) for g, n in self.queued.items()]

    def sample_queues(self, runtime: Runtime) -> None:
        """Refresh the queue depths from the store (on the runtime's loop)."""
        store = runtime.store
        if store is None:
            return
        load = store.group_load()
        # A group seen before and empty now reports 0, not nothing.
        self.queued = {group: 0 for group in self.queued} | {
            group: queued for group, (_running, queued) in load.items()
        }


def _remote_parent(carried: Any) -> SpanContext | object | None:
    """The caller's span from a turn request's stored trace context: its
    :class:`SpanContext` when sampled, ``UNSAMPLED`` when the caller did not record its
    trace, ``None`` when there is nothing valid to continue."""
    if not isinstance(carried, Mapping):
        return None
    carrier = {str(k): str(v) for k, v in carried.items()}
    context = trace.get_current_span(W3C.extract(carrier)).get_span_context()
    if not context.is_valid:
        return None
    return context if context.trace_flags.sampled else UNSAMPLED
