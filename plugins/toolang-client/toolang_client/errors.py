"""The exceptions a client raises: one per kind of refusal the API answers (its error
shape ``{"error": {"status", "message", "field", "expected"}}``), and one for a server
that could not be reached."""

from __future__ import annotations

from typing import Any, Final

import httpx


class ToolangError(Exception):
    """Anything this client raises."""


class TransportError(ToolangError):
    """The server could not be reached, or the connection broke, on every attempt (the
    cause is chained: ``__cause__`` is httpx's error)."""


class StreamError(ToolangError):
    """An event stream ended before its ``finished`` event, or sent what is not SSE."""


class ApiError(ToolangError):
    """The API refused a request. ``status`` is the HTTP status; ``message`` what
    happened; ``field`` the body field, query parameter or header at fault (or
    ``None``); ``expected`` what the server expected there."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        field: str | None = None,
        expected: str | None = None,
        response: httpx.Response | None = None,
    ) -> None:
        self.status = status
        self.message = message
        self.field = field
        self.expected = expected
        self.response = response
        where = f" [{field}]" if field else ""
        hint = f" (expected: {expected})" if expected else ""
        super().__init__(f"{status}{where}: {message}{hint}")


class BadRequest(ApiError):
    """400: a field is missing, of the wrong type or out of range."""


class Unauthorized(ApiError):
    """401: no token or a wrong one; or the action needs a signed-in person."""


class Forbidden(ApiError):
    """403: not allowed — another owner's thread, or a request from another origin."""


class NotFound(ApiError):
    """404: no such turn, thread, run, approval or question — or not yours (another
    owner's objects are as unknown as none)."""


class Conflict(ApiError):
    """409: the object is not in a state that allows this (an approval already
    decided, a busy thread whose strategy rejects, an idempotency key reused for
    another request)."""


class PayloadTooLarge(ApiError):
    """413: the body is larger than the server accepts."""


class Unprocessable(ApiError):
    """422: well formed but not usable (a bad output schema, an answer that does not
    fit the question)."""


class RateLimited(ApiError):
    """429: too many failed authentications from this client; ``retry_after`` is the
    seconds the server asks to wait."""

    @property
    def retry_after(self) -> float | None:
        raw = self.response.headers.get("retry-after") if self.response is not None else None
        try:
            return float(raw) if raw is not None else None
        except ValueError:
            return None


class ServerError(ApiError):
    """5xx: the runtime is not serving (503), or a plugin failed (500)."""


_BY_STATUS: Final[dict[int, type[ApiError]]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    422: Unprocessable,
    429: RateLimited,
}


def error_from(response: httpx.Response) -> ApiError:
    """The exception for a refused ``response`` (its body read already), from the API's
    error shape; a body that is not that shape (a proxy's page) keeps its first line."""
    status = response.status_code
    kind = _BY_STATUS.get(status, ServerError if status >= 500 else ApiError)
    detail: Any = None
    try:
        detail = response.json().get("error")
    except (ValueError, AttributeError):
        detail = None
    if not isinstance(detail, dict):
        text = response.text.strip().splitlines()[0][:200] if response.text.strip() else ""
        return kind(status, text or response.reason_phrase, response=response)
    return kind(
        status,
        str(detail.get("message") or response.reason_phrase),
        field=detail.get("field"),
        expected=detail.get("expected"),
        response=response,
    )
