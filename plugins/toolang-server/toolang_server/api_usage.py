"""Token usage over HTTP (docs/spend-limits.md): ``GET /api/usage`` sums the model
calls of the caller's own turns (an owner never sees another's; the operator sees
every owner's, and each one's), by turn, thread or task run (its child runs' too),
since a time (default: 00:00 UTC today). ``limits`` on ``POST /api/turns`` is read here
too."""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

from toolang_core import UsageFilter, check_request_limits, day_start, sees_every_owner
from toolang_server import models
from toolang_server.http import ApiError, caller_of, ok, runtime_of, store_of
from toolang_server.openapi import operation
from toolang_server.schema import parse_query

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from toolang_core import RegisterRoute


def request_limits(value: Any) -> dict[str, Any]:
    """The ``meta`` a submitted body's ``limits`` asks for (empty when absent).

    :raises ApiError: 400 naming the limit and what was expected.
    """
    if value is None:
        return {}
    try:
        check_request_limits(value)
    except ValueError as exc:
        raise ApiError(
            400,
            str(exc),
            field="limits",
            expected="an object of max_tokens_per_turn and max_model_calls, integers >= 1",
        ) from None
    return {"limits": dict(value)}


def _since(raw: str | None) -> float:
    if raw is None:
        return day_start(time.time())
    try:
        since = float(raw)
    except ValueError:
        since = math.nan
    if not math.isfinite(since):
        raise ApiError(
            400,
            f"query parameter since={raw!r} is not a time",
            field="since",
            expected="seconds since the epoch",
        )
    return since


@operation(query=models.UsageQuery, responses={200: models.Usage}, errors=(400,))
async def usage(request: Request) -> Response:
    """Tokens and model calls of the caller's own turns (docs/spend-limits.md).

    Query: ``turn_id``, ``thread_id`` (a task run's is ``task:<id>``), ``task_run`` (a
    task run's id: its thread's turns and those of the runs it spawned), ``since``
    (seconds since the epoch; default 00:00 UTC today)."""
    runtime, caller = runtime_of(request), caller_of(request)
    query = parse_query(models.UsageQuery, request.query_params)
    where = UsageFilter(
        turn_id=query.turn_id,
        thread_id=query.thread_id,
        task_run=query.task_run,
        owner=caller.owner,  # an owner's own turns only; the operator's: every owner's
        since=_since(query.since),
    )
    store = store_of(runtime)
    body: dict[str, Any] = {"since": where.since, **store.usage(where).to_json()}
    if sees_every_owner(caller.owner):
        by_owner = store.usage_by_owner(where)
        body["owners"] = {owner: used.to_json() for owner, used in by_owner.items()}
    return ok(body)


def register(register_route: RegisterRoute) -> None:
    register_route("/api/usage", usage)
