"""Logging set-up for the CLI.

Library code only ever calls ``structlog.get_logger(...)``; this module, called once
by the CLI, decides how those events are written: readable lines on a terminal,
JSON lines with ``--log-format json``. Logs go to stderr so command output on stdout
stays machine-readable. Secrets are masked before anything is rendered.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from typing import Any, Literal, TextIO

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
    """Configure structlog for this process: ``fmt`` ``json`` or ``console``/``auto``.

    ``auto`` renders with colours on a terminal and plain ``key=value`` lines otherwise.
    """
    out = stream if stream is not None else sys.stderr
    renderer: Any
    if fmt == "json":
        renderer = structlog.processors.JSONRenderer(sort_keys=False)
    else:
        colors = fmt == "console" or (fmt == "auto" and out.isatty())
        renderer = structlog.dev.ConsoleRenderer(colors=colors and out.isatty())
    processors: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    if fmt == "json":
        # Before masking: a traceback quotes values (and secrets) too.
        processors.append(structlog.processors.format_exc_info)
    processors += [_redact_event, renderer]
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS.get(level, logging.INFO)),
        logger_factory=structlog.PrintLoggerFactory(file=out),
        cache_logger_on_first_use=False,
    )
