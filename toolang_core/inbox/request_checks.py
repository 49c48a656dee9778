"""Checks on a new turn request at the door: anything the store or the scheduler
could not honour is refused here, with the field and what was expected, before
anything is stored."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from toolang_core import spend
from toolang_core.errors import UsageError
from toolang_core.ids import is_valid_id
from toolang_core.limits import PRIORITY_LIMIT, THREAD_ID_MAX
from toolang_core.store.json_text import check
from toolang_core.store.types import NewTurnRequest
from toolang_core.tools.validate import schema_problem

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class InvalidRequest(UsageError, ValueError):
    """A turn request field that cannot be stored; the message names the field.

    (A ``ValueError`` too: callers that caught the old invalid-id error still do.)
    """


def check_request(request: NewTurnRequest) -> None:
    """Refuse ``request`` if one of its fields is out of bounds.

    :raises InvalidRequest: naming the first bad field and what was expected.
    """
    if request.id is not None:
        _check_id("id", request.id)
    if request.parent is not None:
        _check_id("parent", request.parent)
    _check_name("source", request.source)
    if request.thread_group is not None:
        _check_name("thread group", request.thread_group)
    _check_thread_id(request.thread_id)
    _check_text("input", request.input)
    for field, value in (("dedupe key", request.dedupe_key), ("agent", request.agent)):
        if value is not None:
            _check_name(field, value)
    if request.priority is not None and not (
        isinstance(request.priority, int) and -PRIORITY_LIMIT <= request.priority <= PRIORITY_LIMIT
    ):
        raise InvalidRequest(
            f"priority {request.priority!r}: expected an integer from {-PRIORITY_LIMIT} "
            f"to {PRIORITY_LIMIT}"
        )
    if request.not_before is not None and not math.isfinite(request.not_before):
        raise InvalidRequest(
            f"not-before {request.not_before!r}: expected a finite time (a POSIX time, "
            "+SECONDS or an ISO 8601 date-time)"
        )
    timeout = request.timeout_seconds
    if timeout is not None and not (math.isfinite(timeout) and timeout > 0):
        raise InvalidRequest(f"timeout {timeout!r}: expected a finite number of seconds > 0")
    if request.meta:
        _check_meta(request.meta)
    # A typed answer's schema (toolang_core.turn.output) is refused here, not mid-turn.
    if request.meta and "output_schema" in request.meta:
        problem = schema_problem(request.meta["output_schema"])
        if problem is not None:
            raise InvalidRequest(f"meta.output_schema: {problem}")
    _check_spend(request)


def _check_meta(meta: Mapping[str, Any]) -> None:
    """``meta`` as the store writes it: JSON, no NaN or infinity, UTF-8 text (a program
    submitting directly could hand in anything)."""
    try:
        check(dict(meta))
    except (TypeError, ValueError) as exc:
        raise InvalidRequest(f"meta: expected JSON values a store can keep: {exc}") from None


def _check_spend(request: NewTurnRequest) -> None:
    """A request's own spend limits and budget (:mod:`toolang_core.spend`)."""
    try:
        if "limits" in request.meta:
            spend.check_request_limits(request.meta["limits"])
        if "budget" in request.meta:
            spend.check_budget(request.meta["budget"])
    except ValueError as exc:
        raise InvalidRequest(str(exc)) from None


def _check_id(field: str, value: str) -> None:
    if not isinstance(value, str) or not is_valid_id(value):
        raise InvalidRequest(
            f"{field} {_show(value)}: expected lowercase letters, digits, '_' and '-' "
            "(at most 128 characters, starting with a letter or digit)"
        )


def _check_thread_id(value: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise InvalidRequest("thread id: expected a non-empty string, e.g. cli:default")
    if len(value) > THREAD_ID_MAX:
        raise InvalidRequest(
            f"thread id {_show(value)}: expected at most {THREAD_ID_MAX} characters, "
            f"found {len(value)}"
        )
    if _CONTROL.search(value):
        raise InvalidRequest(
            f"thread id {_show(value)}: expected no control characters (NUL, newline, tab, …)"
        )
    _check_utf8("thread id", value)


def _check_name(field: str, value: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise InvalidRequest(f"{field}: expected a non-empty string")
    if len(value) > THREAD_ID_MAX or _CONTROL.search(value):
        raise InvalidRequest(
            f"{field} {_show(value)}: expected at most {THREAD_ID_MAX} characters and no "
            "control characters"
        )
    _check_utf8(field, value)


def _check_text(field: str, value: str) -> None:
    if not isinstance(value, str):
        raise InvalidRequest(f"{field}: expected text, found {type(value).__name__}")
    if "\x00" in value:
        raise InvalidRequest(f"{field}: expected text without NUL bytes")
    _check_utf8(field, value)


def _check_utf8(field: str, value: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        # Undecodable bytes from the command line arrive as lone surrogates.
        raise InvalidRequest(f"{field}: expected valid UTF-8 text") from None


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
