"""Logging set-up for the CLI.

Library code only ever calls ``structlog.get_logger(...)``; this module, called once
by the CLI, decides how those events are written: readable lines on a terminal,
JSON lines with ``--log-format json``. Logs go to stderr so command output on stdout
stays machine-readable. Secrets are masked before anything is rendered.

The libraries the plugins use (httpx, uvicorn, the MCP SDK, …) log through the
standard library's ``logging``. Their records are written the same way — one JSON line
each with ``--log-format json``, masked, the logger's name under ``logger`` — from
``WARNING`` up (``ERROR`` with ``--log-level error``; all with ``--log-level debug``
but the header lines of httpcore and hpack): httpx's request lines, for one, show URLs,
and a URL may carry a key. The handler sits on the root logger, so a
library's own ``logging.basicConfig`` (the MCP SDK calls it when a server is built)
finds it there and adds nothing. Python's warnings (``warnings.warn``) become records of
the ``py.warnings`` logger.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping, MutableMapping
from typing import Any, Final, Literal, TextIO

import structlog

from toolang_core.redaction import redact

LogFormat = Literal["auto", "console", "json"]

_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


def _redact_event(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """Mask every field with the redaction policy in effect where the event is logged.

    structlog hands a processor no runtime: the policy comes from the context (see
    :mod:`toolang_core.redaction`) — inside ``Runtime.serve``, that runtime's; outside
    any runtime (or in a thread started by hand), the core's rules alone."""
    for key, value in list(event.items()):
        if key not in ("event", "level", "timestamp", "logger"):
            event[key] = redact(value, key=key)
    return event


def configure_logging(
    *, level: str = "info", fmt: LogFormat = "auto", stream: TextIO | None = None
) -> None:
    """Configure structlog for this process: ``fmt`` ``json`` or ``console``/``auto``,
    and the standard library's records alike (see the module's docstring).

    ``auto`` renders with colours on a terminal and plain ``key=value`` lines otherwise.
    """
    out = stream if stream is not None else sys.stderr
    renderer: Any
    if fmt == "json":
        renderer = structlog.processors.JSONRenderer(sort_keys=False)
    else:
        colors = fmt == "console" or (fmt == "auto" and out.isatty())
        renderer = structlog.dev.ConsoleRenderer(colors=colors and out.isatty())
    stamped: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    # A traceback is formatted before masking, in both formats: it quotes values (and
    # secrets) too. (The console renderer's own tracebacks, drawn after, were not.)
    masked: list[Any] = [structlog.processors.format_exc_info, _redact_event]
    structlog.configure(
        processors=[*stamped, *masked, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS.get(level, logging.INFO)),
        logger_factory=structlog.PrintLoggerFactory(file=out),
        cache_logger_on_first_use=False,
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[*stamped, structlog.stdlib.add_logger_name],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            _library_message,
            *masked,
            renderer,
        ],
        use_get_message=False,  # the message is made by _library_message, its args masked
        pass_foreign_args=True,
    )
    handler = logging.StreamHandler(out)
    handler.set_name(_HANDLER)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == _HANDLER]:
        root.removeHandler(old)  # configured again (tests, a second CLI call)
    root.addHandler(handler)
    wanted = _LEVELS.get(level, logging.INFO)
    root.setLevel(wanted if wanted == logging.DEBUG else max(wanted, logging.WARNING))
    for name in _HEADERS_AT_DEBUG:  # their debug lines hold whole headers (cookies)
        logging.getLogger(name).setLevel(max(root.level, logging.INFO))
    logging.captureWarnings(True)  # a library's warnings.warn(): a record, not raw lines


_HANDLER = "toolang"
"""The name of the root logger's handler :func:`configure_logging` adds."""


_HEADERS_AT_DEBUG: Final = ("httpcore", "hpack")
"""Libraries whose debug records print HTTP headers whole (``Set-Cookie``, tokens under
names no rule knows): not shown even with ``--log-level debug``."""


def _library_message(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """A library's message, made from its format and its arguments masked one by one
    (a mapping's secret-named keys are known there, not in the text), then masked as
    text: unlike the runtime's event names it is free text (a URL with a key, a DSN
    with its password). A format its arguments do not fit is shown with them after it."""
    message = str(event.get("event", ""))
    args = event.pop("positional_args", None)
    if args:
        shown = redact(args) if isinstance(args, Mapping) else tuple(redact(list(args)))
        try:
            message = message % shown
        except (TypeError, ValueError, KeyError):
            message = f"{message} {shown!r}"
    event["event"] = redact(message).rstrip()
    return event
