"""``[plugins.hook-event-publisher]``: which sinks receive which events, and how.

The core's converter checks types and unknown keys; the checks that span several keys
(a webhook needs ``url``, ``path`` is for ``jsonl`` sinks only, bounds) run here and are
reported at the key they concern, e.g.
``toolang.toml: plugins.hook-event-publisher.sinks[0].url: a webhook sink needs a url``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

import attrs

from toolang_core import EnvStr, Secret, redact_text

SinkType = Literal["jsonl", "stdout", "webhook"]

_ONLY_FOR: dict[str, SinkType] = {"path": "jsonl", "url": "webhook", "headers": "webhook"}


def _problem(key: str, message: str) -> ValueError:
    """An error the core's converter reports at ``<section>.<key>`` rather than at the
    table: a cattrs attribute note is how it learns which key a failure belongs to."""
    from cattrs.errors import AttributeValidationNote

    error = ValueError(message)
    error.__notes__ = [AttributeValidationNote(f"Structuring @ attribute {key}", key, object)]
    return error


def _raise(problems: list[ValueError], cls: type) -> None:
    if len(problems) == 1:
        raise problems[0]
    if problems:
        from cattrs.errors import ClassValidationError

        raise ClassValidationError(f"invalid {cls.__name__}", problems, cls)


def _kinds_problems(kinds: list[str] | None) -> list[ValueError]:
    if kinds is not None and any(not pattern.strip() for pattern in kinds):
        return [_problem("kinds", 'expected glob patterns such as "turn.*", found an empty one')]
    return []


_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def _headers_problems(headers: Mapping[str, Secret]) -> list[ValueError]:
    problems = []
    for name, value in headers.items():
        if not _TOKEN.fullmatch(name):
            problems.append(_problem("headers", f"{name!r} is not a valid HTTP header name"))
        elif not all(" " <= char <= "~" or char == "\t" for char in value.reveal()):
            # The value is a secret: say what is wrong with it, never what it is.
            problems.append(
                _problem(
                    "headers", f"the value of {name!r} has characters HTTP headers cannot hold"
                )
            )
    return problems


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a webhook address, or ``None`` when it can."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- raises ValueError for a port out of range
    except ValueError as exc:
        return f"expected an http:// or https:// URL, found {redact_text(url)!r} ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"expected an http:// or https:// URL with a host, found {redact_text(url)!r}"
    return None


@attrs.frozen
class SinkSettings:
    """One entry of ``sinks``: where events go.

    ``jsonl`` appends one JSON object per line to ``path`` (relative to the
    configuration file's directory); ``stdout`` prints the same lines; ``webhook``
    POSTs each event as JSON to ``url`` with ``headers`` (secret values, ``${ENV}``
    expanded), retrying connection errors, timeouts, 429 and 5xx answers up to
    ``max_attempts`` times in all, with exponential backoff from ``backoff_seconds``.
    ``kinds`` replaces the section's ``kinds`` for this sink; ``name`` labels it in
    logs and statistics (default ``sinks[<index>]``).
    """

    type: SinkType
    name: str | None = None
    path: Path | None = None
    url: EnvStr | None = None
    headers: Mapping[str, Secret] = attrs.field(factory=dict)
    timeout_seconds: float = 5.0
    max_attempts: int = 5
    backoff_seconds: float = 0.5
    kinds: list[str] | None = None

    def __attrs_post_init__(self) -> None:
        problems: list[ValueError] = []
        for key, owner in _ONLY_FOR.items():
            if owner != self.type and getattr(self, key):
                problems.append(_problem(key, f"{key!r} is for {owner} sinks, not {self.type}"))
        if self.type == "jsonl" and self.path is None:
            problems.append(_problem("path", "a jsonl sink needs a path (the file to append to)"))
        if self.type == "webhook":
            if self.url is None:
                problems.append(_problem("url", "a webhook sink needs a url"))
            elif (why := url_problem(self.url)) is not None:
                problems.append(_problem("url", why))
        if self.timeout_seconds <= 0:
            problems.append(
                _problem("timeout_seconds", f"expected a number > 0, found {self.timeout_seconds}")
            )
        if self.max_attempts < 1:
            problems.append(
                _problem("max_attempts", f"expected an integer >= 1, found {self.max_attempts}")
            )
        if self.backoff_seconds < 0:
            problems.append(
                _problem("backoff_seconds", f"expected a number >= 0, found {self.backoff_seconds}")
            )
        problems.extend(_headers_problems(self.headers))
        problems.extend(_kinds_problems(self.kinds))
        _raise(problems, type(self))


@attrs.frozen
class PublisherSettings:
    """``[plugins.hook-event-publisher]``.

    ``kinds`` are glob patterns of the event kinds forwarded to the sinks (every kind
    by default). Each sink has its own queue of at most ``queue_size`` events; when it
    is full the oldest event is dropped and counted. Tool events carry no parameters
    or outputs unless ``include_params`` / ``include_output`` say so; then secrets are
    masked and each value is cut to ``max_value_chars``. At shutdown the queues get
    ``flush_seconds`` to drain.
    """

    sinks: list[SinkSettings] = attrs.field(factory=list)
    kinds: list[str] = attrs.field(factory=lambda: ["*"])
    queue_size: int = 1000
    include_params: bool = False
    include_output: bool = False
    max_value_chars: int = 2000
    flush_seconds: float = 5.0

    def __attrs_post_init__(self) -> None:
        problems = _kinds_problems(self.kinds)
        for key in ("queue_size", "max_value_chars"):
            if getattr(self, key) < 1:
                problems.append(
                    _problem(key, f"expected an integer >= 1, found {getattr(self, key)}")
                )
        if self.flush_seconds < 0:
            problems.append(
                _problem("flush_seconds", f"expected a number >= 0, found {self.flush_seconds}")
            )
        _raise(problems, type(self))
