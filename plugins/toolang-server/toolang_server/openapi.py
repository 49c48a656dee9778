"""The OpenAPI 3.1 document of every mounted route, written from the typed models the
handlers validate with (:mod:`toolang_server.models`).

A handler says what it takes and answers with :func:`operation`; the same models parse
its request (:func:`~toolang_server.schema.parse_body`). Another plugin's route that
declares nothing is listed with its summary, its path parameters and the error shape.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, TypeVar

import attrs

from toolang_core import __version__
from toolang_server.models import SSE_EVENTS, Error
from toolang_server.schema import fields_of, model_ref, rules_of, schema_of, wire_name

if TYPE_CHECKING:
    from toolang_core import RouteRegistration
    from toolang_server.settings import ServerSettings

F = TypeVar("F", bound=Callable[..., Any])
_CONVERTER: Final = re.compile(r"\{(\w+)(:\w+)?\}")
_ATTR: Final = "__toolang_operation__"
IDEMPOTENCY_HEADER: Final = "Idempotency-Key"
_REASONS: Final = {
    200: "done",
    201: "created",
    202: "accepted (not finished yet)",
}
_ERRORS: Final = {
    "400": "the request is malformed: the error names the field and what was expected",
    "401": "no credential, or a wrong one; or a person must sign in for this",
    "404": "no such object, or not yours",
    "409": "the object is not in a state that allows this",
    "413": "the body is too large",
    "422": "the request is well formed but cannot be carried out",
    "429": "too many failed authentications from this client (see Retry-After)",
    "503": "the runtime is not serving, or a plugin it needs failed",
}


@attrs.frozen
class Operation:
    """What one endpoint takes and answers.

    ``responses`` maps a status to a model, ``list[model]``, or ``None`` (no schema);
    ``stream`` says the endpoint answers ``text/event-stream`` with the events of
    :data:`~toolang_server.models.SSE_EVENTS` (on ``stream_status``);
    ``raw_body`` names a body that is bytes, not JSON; ``headers`` the request headers
    it reads (name → description)."""

    responses: Mapping[int, Any] = attrs.field(factory=dict)
    body: type[Any] | None = None
    query: type[Any] | None = None
    stream: bool = False
    stream_status: int = 200
    raw_body: str | None = None
    raw_response: str | None = None
    headers: Mapping[str, str] = attrs.field(factory=dict)
    errors: tuple[int, ...] = (400, 401, 404)


def operation(**described: Any) -> Callable[[F], F]:
    """Declare an endpoint's :class:`Operation` (read by :func:`document`)."""
    op = Operation(**described)

    def mark(endpoint: F) -> F:
        setattr(endpoint, _ATTR, op)
        return endpoint

    return mark


def operation_of(endpoint: Any) -> Operation | None:
    found = getattr(endpoint, _ATTR, None)
    return found if isinstance(found, Operation) else None


def _content(tp: Any, refs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"application/json": {"schema": schema_of(tp, refs)}}


def _query_parameters(model: type[Any], refs: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    params = []
    for attribute in fields_of(model):
        rules = rules_of(attribute)
        schema = dict(rules.schema) if rules.schema is not None else schema_of(attribute.type, refs)
        if rules.choices is not None:
            schema = {"type": "string", "enum": list(rules.choices)}
        if rules.low is not None:
            schema["minimum"] = rules.low
        if rules.high is not None:
            schema["maximum"] = rules.high
        if attribute.default not in (None, attrs.NOTHING):
            schema["default"] = attribute.default
        param: dict[str, Any] = {
            "name": wire_name(attribute),
            "in": "query",
            "required": rules.required,
            "schema": schema,
        }
        if rules.doc:
            param["description"] = rules.doc
        if rules.example is not None:
            param["example"] = rules.example
        params.append(param)
    return params


def _stream(refs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The SSE answer: each event's name and the schema of its ``data``."""
    events = {name: schema_of(model, refs) for name, model in SSE_EVENTS.items()}
    return {
        "text/event-stream": {
            "schema": {
                "type": "string",
                "description": "Server-Sent Events: `event: <name>` and `data: <JSON>`; "
                "the events and their data are listed in x-events (`finished` is last).",
            },
            "x-events": events,
        }
    }


def operation_id(route: RouteRegistration, method: str) -> str:
    """``get_api_turns_turn_id``: the method and the route's name (its path by
    default), in the letters a generated client's function names take."""
    name = _CONVERTER.sub(r"\1", route.name)
    return re.sub(r"[^A-Za-z0-9]+", "_", f"{method.lower()}_{name}").strip("_")


def _operation(
    route: RouteRegistration, method: str, refs: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    op = operation_of(route.endpoint) or Operation()
    out: dict[str, Any] = {
        "summary": route.summary,
        "operationId": operation_id(route, method),
        "tags": [route.plugin],
    }
    parameters = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        for name, _ in _CONVERTER.findall(route.path)
    ]
    if op.query is not None:
        parameters += _query_parameters(op.query, refs)
    parameters += [
        {
            "name": name,
            "in": "header",
            "required": False,
            "schema": {"type": "string"},
            "description": text,
        }
        for name, text in op.headers.items()
    ]
    if parameters:
        out["parameters"] = parameters
    if op.body is not None:
        schema = model_ref(op.body, refs)
        example = {
            wire_name(a): rules_of(a).example
            for a in fields_of(op.body)
            if rules_of(a).example is not None
        }
        media: dict[str, Any] = {"schema": schema}
        if example:
            media["example"] = example
        out["requestBody"] = {"required": True, "content": {"application/json": media}}
    elif op.raw_body is not None:
        out["requestBody"] = {
            "required": True,
            "content": {
                "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}
            },
            "description": op.raw_body,
        }
    responses: dict[str, Any] = {}
    for status, tp in op.responses.items():
        entry: dict[str, Any] = {"description": _REASONS.get(status, "answered")}
        if tp is not None:
            entry["content"] = _content(tp, refs)
        responses[str(status)] = entry
    if op.stream:
        entry = responses.setdefault(str(op.stream_status), {"description": "the event stream"})
        entry.setdefault("content", {}).update(_stream(refs))
    if op.raw_response is not None:
        responses["200"] = {
            "description": op.raw_response,
            "content": {
                "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}
            },
        }
    if not responses:  # a route that declares nothing: JSON of its own shape
        any_json = (
            {"application/json": {"schema": {}}}
            if route.path.startswith("/api")
            else {"text/html": {"schema": {"type": "string"}}}
        )
        responses["200"] = {"description": "success", "content": any_json}
    error = model_ref(Error, refs)
    for status in sorted({*op.errors, 401} if route.auth else set(op.errors)):
        responses[str(status)] = {
            "description": _ERRORS.get(str(status), "refused"),
            "content": {"application/json": {"schema": error}},
        }
    responses["default"] = {
        "description": "any other refusal, in the same shape",
        "content": {"application/json": {"schema": error}},
    }
    out["responses"] = responses
    if not route.auth:
        out["security"] = []
    return out


def document(routes: list[RouteRegistration], settings: ServerSettings) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``routes`` (the console's pages left out: they answer
    HTML, not the API)."""
    refs: dict[str, dict[str, Any]] = {}
    model_ref(Error, refs)
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        path = _CONVERTER.sub(r"{\1}", route.path)
        for method in route.methods:
            paths.setdefault(path, {})[method.lower()] = _operation(route, method, refs)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "toolang",
            "version": __version__,
            "description": "The toolang runtime over HTTP: threads, turn requests "
            "(submit, stream, cancel), task runs, approvals, questions, memory search, "
            "usage. Every refusal is an `Error`. See docs/api.md.",
        },
        "paths": paths,
        "components": {
            "securitySchemes": {"token": {"type": "http", "scheme": "bearer"}},
            "schemas": refs,
        },
        "security": [{"token": []}] if settings.tokens else [],
    }


def add_own_routes(document: dict[str, Any]) -> None:
    """List the document's own routes and the API index in ``document``."""
    refs = document["components"]["schemas"]
    own = {
        "description": "the OpenAPI 3.1 document",
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
    for path, op_id in (
        ("/api/openapi.json", "get_openapi"),
        ("/openapi.json", "get_openapi_root"),
    ):
        document["paths"][path] = {
            "get": {
                "summary": "This document.",
                "operationId": op_id,
                "tags": ["server"],
                "security": [],
                "responses": {"200": own},
            }
        }
    from toolang_server.models import ApiIndex

    document["paths"]["/api"] = {
        "get": {
            "summary": "Where the OpenAPI document is, and every route's method and path.",
            "operationId": "get_api_index",
            "tags": ["server"],
            "security": [],
            "responses": {"200": {"description": "the index", "content": _content(ApiIndex, refs)}},
        }
    }


def api_document() -> dict[str, Any]:
    """This plugin's own API document, built without a runtime (for the docs and for
    generating clients): its routes as ``toolang_register_routes`` registers them,
    without tokens configured."""
    import inspect

    from toolang_core import RouteRegistration
    from toolang_server import toolang_register_routes
    from toolang_server.settings import ServerSettings

    routes: list[RouteRegistration] = []

    def register(
        path: str,
        endpoint: Any,
        *,
        methods: tuple[str, ...] = ("GET",),
        name: str = "",
        summary: str = "",
        auth: bool = True,
    ) -> None:
        doc = summary or (inspect.getdoc(endpoint) or "").strip().splitlines()[0]
        wanted = tuple(m.upper() for m in methods)
        routes.append(RouteRegistration(path, endpoint, wanted, "server", name or path, doc, auth))

    toolang_register_routes(register)
    document_ = document([r for r in routes if r.path.startswith("/api")], ServerSettings())
    add_own_routes(document_)
    return document_


if __name__ == "__main__":  # python -m toolang_server.openapi > openapi.json
    import json

    # This module runs as __main__: the handlers' operations are the imported module's.
    from toolang_server.openapi import api_document as built

    print(json.dumps(built(), indent=2, ensure_ascii=False))
