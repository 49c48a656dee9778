"""toolang-client: toolang's HTTP API from Python — sync (:class:`Client`) and async
(:class:`AsyncClient`), typed results (:mod:`toolang_client.models`, generated from the
server's OpenAPI document), streamed answers as typed events, retries with idempotency
keys on submit, and one exception per kind of refusal.

    from toolang_client import Client

    with Client("http://127.0.0.1:8765", token=TOKEN) as client:
        turn = client.run("hello", agent="operator")
        print(turn.status, turn.output)
"""

from __future__ import annotations

from toolang_client import models
from toolang_client.aio import AsyncClient, AsyncTurnStream
from toolang_client.client import Client, TurnStream
from toolang_client.errors import (
    ApiError,
    BadRequest,
    Conflict,
    Forbidden,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    ServerError,
    StreamError,
    ToolangError,
    TransportError,
    Unauthorized,
    Unprocessable,
)
from toolang_client.events import Event, ProgressEvent, UnknownEvent
from toolang_client.retry import TERMINAL, Retry

__all__ = [
    "TERMINAL",
    "ApiError",
    "AsyncClient",
    "AsyncTurnStream",
    "BadRequest",
    "Client",
    "Conflict",
    "Event",
    "Forbidden",
    "NotFound",
    "PayloadTooLarge",
    "ProgressEvent",
    "RateLimited",
    "Retry",
    "ServerError",
    "StreamError",
    "ToolangError",
    "TransportError",
    "TurnStream",
    "Unauthorized",
    "UnknownEvent",
    "Unprocessable",
    "models",
]
