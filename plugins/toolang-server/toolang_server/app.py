"""The ASGI app: every plugin's routes (``toolang_register_routes``) behind one auth
rule and one error format, plus the OpenAPI document that lists them all."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import structlog
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from toolang_core import HttpError, RouteRegistration, redact
from toolang_server import openapi
from toolang_server.auth import AuthFailures, RateLimited, authenticate, client_of, presented
from toolang_server.http import (
    MaskedJSON,
    check_origin,
    error_response,
    mask_strings,
    to_json,
    too_deep,
)
from toolang_server.signin import Sessions

if TYPE_CHECKING:
    from toolang_core import HookFailure, Runtime
    from toolang_server.settings import ServerSettings

log = structlog.get_logger("toolang.server")


def guarded(route: RouteRegistration, settings: ServerSettings) -> Any:
    """``route``'s endpoint behind the auth rule, with errors as JSON and a plain
    return value sent as JSON. A 401 to a request that presented a credential — from
    any plugin's route — counts as a failed authentication of its client."""
    endpoint = route.endpoint

    async def call(request: Request) -> Response:
        failures: AuthFailures = request.app.state.auth_failures
        credential = presented(request)
        try:
            check_origin(request, settings)
            if credential:
                failures.check(client_of(request))
            if route.auth:
                request.state.caller = authenticate(request, settings, request.app.state.sessions)
            result = await endpoint(request)
        except RateLimited as exc:
            refused = error_response(exc.status, exc.message, field=exc.field)
            refused.headers["Retry-After"] = str(exc.retry_after)
            return refused
        except HttpError as exc:
            if exc.status == 401 and credential:
                failures.fail(client_of(request), path=request.url.path, why=exc.message)
            if request.url.path.startswith("/api"):
                return error_response(
                    exc.status, exc.message, field=exc.field, expected=exc.expected
                )
            if exc.status == 401:
                return RedirectResponse(f"/login?next={request.url.path}", status_code=303)
            return _error_page(exc, request)
        except RecursionError:
            # A plugin's endpoint that decodes its body itself (``await request.json()``)
            # meets a body nested past the decoder's depth: the client's fault, a 400.
            refusal = too_deep()
            return error_response(
                refusal.status, refusal.message, field=refusal.field, expected=refusal.expected
            )
        except Exception as exc:  # an endpoint's bug: a JSON 500, logged with the plugin
            log.exception("server.endpoint_failed", plugin=route.plugin, path=route.path)
            return error_response(
                500, f"internal error in {route.plugin}'s {route.path}: {type(exc).__name__}"
            )
        response = wire_safe(result)
        if response.status_code == 401 and credential:
            why = f"refused by plugin {route.plugin}"
            failures.fail(client_of(request), path=request.url.path, why=why)
        return response

    call.__name__ = route.name
    return call


def wire_safe(result: Any) -> Response:
    """What an endpoint returned, as the response to send, masked by the redaction
    policy: a plain value as JSON; a ``JSONResponse`` the server did not mask itself
    (another plugin's) decoded, its strings masked, and encoded again. Other responses are sent as
    they are: pages render masked values, streams mask their own events."""
    if not isinstance(result, Response):
        return MaskedJSON(redact(to_json(result)))
    if isinstance(result, JSONResponse) and not isinstance(result, MaskedJSON):
        # Its strings, not its keys: a protocol's document (an A2A card's "apiKey"
        # security scheme) is not a mapping of secrets.
        data = json.loads(bytes(result.body))
        masked = mask_strings(data)
        if masked != data:
            headers = {
                k: v
                for k, v in result.headers.items()
                if k not in ("content-length", "content-type")
            }
            return MaskedJSON(masked, status_code=result.status_code, headers=headers)
    return result


def _error_page(exc: HttpError, request: Request) -> Response:
    """A console page's refusal, as a page (the API's are JSON), saying who is signed in."""
    from toolang_server.console.pages import ENV

    caller = getattr(request.state, "caller", None)
    html = ENV.get_template("error.html").render(
        title="Not yours" if exc.status == 403 and exc.field == "thread_id" else str(exc.status),
        section="",
        status=exc.status,
        message=exc.message,
        expected=exc.expected,
        field=exc.field,
        principal=caller.principal if caller is not None else None,
    )
    return HTMLResponse(html, status_code=exc.status)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        return error_response(
            404,
            f"no route {request.url.path}",
            field="path",
            expected="a path listed in GET /api/openapi.json",
        )
    if exc.status_code == 405:
        return error_response(
            405,
            f"{request.method} is not allowed on {request.url.path}",
            field="method",
            expected=exc.headers.get("allow", "") if exc.headers else None,
        )
    return error_response(exc.status_code, str(exc.detail))


def _credential(runtime: Runtime) -> str | None:
    """The operator's credential, or ``None`` (logged) when it cannot be read: then
    only owners' tokens sign in."""
    from toolang_core import CredentialError, read_credential

    try:
        return read_credential(runtime.config.credential_path, action="sign the operator in")
    except CredentialError as exc:
        log.error("server.no_operator_credential", error=str(exc))
        return None


def build_app(
    runtime: Runtime, settings: ServerSettings
) -> tuple[Starlette, list[RouteRegistration], list[HookFailure]]:
    """The app with every plugin's routes; also the routes and the registration failures."""
    routes, failures = runtime.routes()
    for failure in failures:
        log.error("server.routes_failed", plugin=failure.plugin, error=failure.error)
    document = openapi.document(routes, settings)

    async def openapi_document(request: Request) -> Response:
        return JSONResponse(document)

    async def api_index(request: Request) -> Response:
        # `toolang run` prints this URL: answer it with where to go, not a 404
        listed = [
            f"{method.upper()} {path}"
            for path, operations in document["paths"].items()
            if path.startswith("/api")
            for method in operations
        ]
        return JSONResponse({"openapi": "/api/openapi.json", "routes": listed})

    app = Starlette(
        routes=[
            Route("/api/openapi.json", openapi_document, methods=["GET"]),
            Route("/openapi.json", openapi_document, methods=["GET"]),
            Route("/api", api_index, methods=["GET"]),
            *(
                Route(r.path, guarded(r, settings), methods=list(r.methods), name=None)
                for r in routes
            ),
        ],
        exception_handlers={HTTPException: _http_error},
        # Off unless origins are named: browsers then refuse every cross-origin call.
        middleware=[
            Middleware(
                CORSMiddleware,
                allow_origins=list(settings.cors_origins),
                allow_methods=["GET", "POST"],
                allow_headers=["Authorization", "Content-Type"],
            )
        ]
        if settings.cors_origins
        else [],
    )
    app.state.runtime = runtime
    app.state.settings = settings
    app.state.sessions = Sessions(
        _credential(runtime),
        link_seconds=settings.sign_in_link_seconds,
        session_seconds=settings.session_seconds,
    )
    app.state.auth_failures = AuthFailures(
        settings.auth_failure_limit, settings.auth_failure_window_seconds
    )
    app.state.routes = routes
    app.state.route_failures = failures
    openapi.add_own_routes(document)
    return app, routes, failures
