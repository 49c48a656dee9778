"""The API's rules in one place: JSON errors, body limits, attribution (who is calling
is :mod:`toolang_server.auth`'s).

Every 4xx and 5xx the API returns is ``{"error": {"status", "message", "field",
"expected"}}`` — the field at fault and what was expected, so a program can say what
to fix. A rejected request stores nothing: bodies are validated whole before anything
is written.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

import attrs
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from toolang_core import HttpError, redact, redact_text
from toolang_server.settings import ServerSettings

if TYPE_CHECKING:
    from toolang_core import ExecutionStore, Runtime


class ApiError(HttpError):
    """A request the API refuses; becomes a JSON error response (any plugin's endpoint
    raises the core's ``HttpError`` to the same effect)."""

    def response(self) -> JSONResponse:
        return error_response(self.status, self.message, field=self.field, expected=self.expected)


class MaskedJSON(JSONResponse):
    """A JSON response whose content passed the redaction policy (:func:`ok`,
    :func:`error_response`): the server sends it as it is. Any other ``JSONResponse``
    an endpoint returns is masked on its way out (``app.guarded``)."""


def mask_strings(value: Any) -> Any:
    """A decoded JSON value with every string (keys too) masked by the policy's text
    rules; its structure is kept as it is."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, list):
        return [mask_strings(item) for item in value]
    if isinstance(value, dict):
        return {mask_strings(k): mask_strings(v) for k, v in value.items()}
    return value


def error_response(
    status: int, message: str, *, field: str | None = None, expected: str | None = None
) -> JSONResponse:
    # A refusal may quote what was sent (a thread id, an agent name): masked too.
    body = {"status": status, "message": redact_text(message), "field": field, "expected": expected}
    return MaskedJSON({"error": body}, status_code=status)


def not_found(what: str, ident: str) -> ApiError:
    return ApiError(404, f"no {what} with id {ident!r}", field="id", expected=f"the id of a {what}")


_PLAIN: Final = frozenset({str, int, float, bool, type(None)})


def to_json(value: Any) -> Any:
    """attrs values, enums and sets as plain JSON."""
    if type(value) in _PLAIN:  # most values: answered before the slower checks below
        return value
    if attrs.has(type(value)):
        to = getattr(value, "to_json", None)
        return to_json(to() if callable(to) else attrs.asdict(value, recurse=False))
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    if isinstance(value, frozenset | set):
        return sorted(to_json(v) for v in value)
    if hasattr(value, "value") and type(value).__module__ != "builtins":  # an enum
        return value.value
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def ok(value: Any, status: int = 200) -> JSONResponse:
    """``value`` as JSON, masked by the redaction policy (what the store holds is masked
    already; what an endpoint made from a request, such as a task it just added, may
    not be)."""
    return MaskedJSON(redact(to_json(value)), status_code=status)


@attrs.frozen
class Caller:
    """Who is calling: ``owner`` is ``None`` for the local operator (sees all, like the
    CLI); ``sender`` is what writes are attributed to; ``principal`` names the signed-in
    person (``token:alice``, ``console:operator`` …), ``None`` for an anonymous caller on
    this machine, who is no person (see :mod:`toolang_server.auth`)."""

    owner: str | None
    sender: str
    principal: str | None = None


def host_name(header: str) -> str:
    """The name in a ``Host`` header, without its port or an IPv6 address's brackets
    (``[::1]:8765`` → ``::1``)."""
    header = header.lower()
    if header.startswith("["):
        return header[1:].partition("]")[0]
    return header.partition(":")[0]


SAFE_METHODS: Final = frozenset({"GET", "HEAD", "OPTIONS"})


def check_origin(request: Request, settings: ServerSettings) -> None:
    """Refuse a write a browser sends from another site's page (cross-site request
    forgery: CORS hides the answer, not the side effect).

    :raises ApiError: 403 when ``Origin`` names another origin than this server's and
        not one of ``cors_origins``."""
    if request.method in SAFE_METHODS:
        return
    origin = request.headers.get("origin")
    if origin is None:
        return  # not a browser's cross-site request (curl, programs)
    own = f"{request.url.scheme}://{request.url.netloc}"
    if origin != own and origin not in settings.cors_origins:
        raise ApiError(
            403,
            f"a request from {origin!r} may not change anything here",
            field="Origin",
            expected=f"{own} (or one of [plugins.server] cors_origins)",
        )


async def read_json(request: Request, limit: int) -> dict[str, Any]:
    """The request's JSON object body, read up to ``limit`` bytes.

    :raises ApiError: 413 when larger, 400 when not a JSON object.
    """
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ApiError(
            413,
            f"the body is {declared} bytes; at most {limit} are accepted",
            field="body",
            expected=f"a JSON object of at most {limit} bytes",
        )
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ApiError(
                413,
                f"the body exceeds {limit} bytes",
                field="body",
                expected=f"a JSON object of at most {limit} bytes",
            )
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw, parse_constant=_no_constant)
    except ValueError as exc:
        raise ApiError(
            400, f"the body is not JSON: {exc}", field="body", expected="a JSON object"
        ) from None
    except RecursionError:  # the decoder's own guard against a stack overflow
        raise too_deep() from None
    if not isinstance(data, dict):
        raise ApiError(
            400,
            f"the body is a JSON {type(data).__name__}, not an object",
            field="body",
            expected="a JSON object",
        )
    if b"\\u0000" in raw:  # JSON can only spell a NUL so (the field is found only then)
        try:
            where = _nul_at(data, "")
        except RecursionError:
            raise too_deep() from None
        if where is not None:
            raise ApiError(
                400,
                f"{where or 'body'}: the text holds a NUL character (U+0000), which the "
                "API does not take (no store keeps one)",
                field=where.split(".", 1)[0].split("[", 1)[0] or "body",
                expected="text without NUL characters",
            )
    return data


def _no_constant(name: str) -> object:
    """``NaN``, ``Infinity`` and ``-Infinity``, which Python's decoder reads but JSON
    does not have (nor can a store keep them): the body is not JSON."""
    raise ValueError(f"{name} is not a JSON value")


def _nul_at(value: object, path: str) -> str | None:
    """The path (``a.b[2]``) of the first key or text in ``value`` holding a NUL."""
    if isinstance(value, str):
        return path if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            shown = key.replace("\x00", "\\x00")
            inner = f"{path}.{shown}" if path else shown
            if "\x00" in key:
                return inner
            found = _nul_at(item, inner)
            if found is not None:
                return found
    if isinstance(value, list):
        for n, item in enumerate(value):
            found = _nul_at(item, f"{path}[{n}]")
            if found is not None:
                return found
    return None


def too_deep() -> ApiError:
    """The refusal of a body nested deeper than the JSON decoder goes (a client's bug or
    an attack, never a request the API could serve)."""
    return ApiError(
        400,
        "the body's JSON is nested too deeply to read",
        field="body",
        expected="a JSON object nested at most a few levels deep",
    )


class Body:
    """Typed access to a JSON body's fields; unknown fields are refused."""

    def __init__(self, data: Mapping[str, Any], allowed: set[str]) -> None:
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise ApiError(
                400,
                f"unknown field {unknown[0]!r}",
                field=unknown[0],
                expected=f"one of: {', '.join(sorted(allowed))}",
            )
        self.data = data

    def text(
        self,
        name: str,
        *,
        required: bool = False,
        default: str | None = None,
        max_len: int = 100_000,
        choices: tuple[str, ...] | None = None,
    ) -> str | None:
        value = self.data.get(name)
        if value is None:
            if required:
                raise ApiError(400, f"{name} is required", field=name, expected="a string")
            return default
        if not isinstance(value, str):
            raise ApiError(
                400,
                f"{name} must be a string, got {type(value).__name__}",
                field=name,
                expected="a string",
            )
        if required and not value.strip():
            raise ApiError(
                400, f"{name} must not be empty", field=name, expected="a non-empty string"
            )
        if len(value) > max_len:
            raise ApiError(
                400,
                f"{name} is {len(value)} characters long",
                field=name,
                expected=f"at most {max_len} characters",
            )
        if choices is not None and value not in choices:
            raise ApiError(
                400,
                f"{name} {value!r} is not allowed",
                field=name,
                expected=f"one of: {', '.join(choices)}",
            )
        return value

    def number(
        self, name: str, *, default: float | None = None, low: float = 0, high: float = 86400
    ) -> float | None:
        value = self.data.get(name)
        if value is None:
            return default
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not low <= value <= high
        ):
            raise ApiError(
                400,
                f"{name} must be a number from {low:g} to {high:g}, got {value!r}",
                field=name,
                expected=f"a number from {low:g} to {high:g}",
            )
        return float(value)

    def flag(self, name: str, *, default: bool = False) -> bool:
        value = self.data.get(name, default)
        if not isinstance(value, bool):
            raise ApiError(
                400,
                f"{name} must be true or false, got {value!r}",
                field=name,
                expected="a boolean",
            )
        return value


def query_int(request: Request, name: str, default: int, low: int = 1, high: int = 1000) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = low - 1
    if not low <= value <= high:
        raise ApiError(
            400,
            f"query parameter {name}={raw!r} is out of range",
            field=name,
            expected=f"an integer from {low} to {high}",
        )
    return value


def query_choice(request: Request, name: str, choices: tuple[str, ...]) -> str | None:
    raw = request.query_params.get(name)
    if raw is not None and raw not in choices:
        raise ApiError(
            400,
            f"query parameter {name}={raw!r} is not allowed",
            field=name,
            expected=f"one of: {', '.join(choices)}",
        )
    return raw


def runtime_of(request: Request) -> Runtime:
    return request.app.state.runtime  # type: ignore[no-any-return]


def store_of(runtime: Runtime) -> ExecutionStore:
    """The store the serving runtime uses. :raises ApiError: 503 when it is not serving."""
    if runtime.inbox is None:
        raise ApiError(503, "the runtime is not serving (starting or stopping)")
    return runtime.inbox.store


def caller_of(request: Request) -> Caller:
    return request.state.caller  # type: ignore[no-any-return]


Endpoint = Callable[[Request], Awaitable[Response]]
