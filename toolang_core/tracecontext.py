"""W3C trace context (``traceparent``, ``tracestate``) carried into a turn request.

The core knows no tracing library. A turn source that receives work over HTTP (the
server's submit endpoint, the A2A endpoint) keeps the caller's trace context in the
turn request's metadata under :data:`TRACE_CONTEXT_META` — checked here, so a
malformed header is dropped as the W3C rule says (the receiver then starts a trace of
its own) — and an observability plugin parents the turn's span from it. The other
direction, headers for calls a turn makes, is the ``toolang_outbound_headers`` hook.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

TRACE_CONTEXT_META: Final = "trace_context"
"""The turn request's ``meta`` key holding ``{"traceparent": …, "tracestate": …}``."""

MAX_TRACESTATE: Final = 512
"""The W3C limit a receiver may hold ``tracestate`` to; a longer one is dropped."""

_TRACEPARENT: Final = re.compile(r"^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$")
_TRACESTATE: Final = re.compile(r"^[\x20-\x7e]*$")


def trace_context_of(headers: Mapping[str, str]) -> dict[str, str]:
    """The W3C trace context in HTTP ``headers`` (names in any case), or ``{}`` when
    there is none or its ``traceparent`` is malformed (version ``ff``, an all-zero trace
    or parent id, not lowercase hex). ``tracestate`` is kept only beside a valid
    ``traceparent`` and only when it is printable and at most 512 characters."""
    found: dict[str, str] = {}
    for name, value in headers.items():
        lowered = name.lower()
        if lowered in ("traceparent", "tracestate"):
            found[lowered] = value.strip()
    parent = _TRACEPARENT.match(found.get("traceparent", ""))
    if parent is None:
        return {}
    version, trace_id, span_id = parent.groups()
    if version == "ff" or set(trace_id) == {"0"} or set(span_id) == {"0"}:
        return {}
    context = {"traceparent": parent.group(0)}
    state = found.get("tracestate", "")
    if state and len(state) <= MAX_TRACESTATE and _TRACESTATE.match(state):
        context["tracestate"] = state
    return context


def trace_context_meta(headers: Mapping[str, str]) -> dict[str, Any]:
    """The turn request metadata entry for ``headers``' trace context: ``{}`` without
    one, else ``{TRACE_CONTEXT_META: {...}}`` to merge into ``NewTurnRequest.meta``."""
    context = trace_context_of(headers)
    return {TRACE_CONTEXT_META: context} if context else {}
