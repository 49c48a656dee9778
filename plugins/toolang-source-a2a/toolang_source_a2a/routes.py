"""The HTTP routes: agent cards at the well-known paths, one JSON-RPC endpoint per
served agent. Offered to the server plugin and, standalone, to the plugin's own port.

Each JSON-RPC request is authenticated (bearer token or ``X-API-Key`` from
``[plugins.source-a2a] tokens``), size-checked, then handed to a2a-sdk's own JSON-RPC
dispatcher — so malformed JSON-RPC, unknown methods and bad params get the spec's
error objects — whose handler reads and writes the execution store.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import attrs

from toolang_source_a2a.settings import NAME, is_loopback

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from toolang_core import Runtime
    from toolang_source_a2a.settings import A2ASettings

OWNER_PREFIX = "a2a:"
"""A2A callers' owners live in their own namespace: ``a2a:<caller>``. An HTTP owner's
name cannot hold a ``:``, so an A2A caller never shares an HTTP owner's threads,
memory or task runs, whatever the two are named."""
ANONYMOUS = f"{OWNER_PREFIX}local"
"""The owner of what arrives when no tokens are configured (loopback only)."""


@attrs.frozen
class A2ARoute:
    path: str
    endpoint: Callable[[Request], Awaitable[Response]]
    methods: tuple[str, ...]
    name: str
    summary: str
    auth: bool


def _runtime(request: Request) -> Runtime:
    return request.app.state.runtime  # type: ignore[no-any-return]


def _settings(runtime: Runtime) -> A2ASettings:
    from toolang_source_a2a import settings_of

    return settings_of(runtime)


def _base_url(request: Request, settings: A2ASettings) -> str:
    return settings.public_url or str(request.base_url).rstrip("/")


def _error(status: int, code: int, message: str, headers: dict[str, str] | None = None) -> Response:
    from starlette.responses import JSONResponse

    body = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    return JSONResponse(body, status_code=status, headers=headers)


async def _card(request: Request, name: str | None) -> Response:
    from a2a.server.request_handlers.response_helpers import agent_card_to_dict
    from starlette.responses import JSONResponse

    from toolang_source_a2a.cards import cards, served_agents

    runtime = _runtime(request)
    settings = _settings(runtime)
    served = served_agents(runtime, settings)
    wanted = name or served[0]
    if wanted not in served:
        return JSONResponse({"error": f"agent {wanted!r} is not served over A2A"}, 404)
    try:
        card = cards(runtime, settings, _base_url(request, settings))[wanted]
    except LookupError as exc:
        return JSONResponse({"error": str(exc)}, 404)
    # Not masked: a card is made from configuration, and its security schemes are named
    # by the protocol's keys ("apiKey"), which the policy would take for secrets.
    return JSONResponse(agent_card_to_dict(card))


async def default_card(request: Request) -> Response:
    """The agent card of this runtime's first served agent (A2A discovery)."""
    return await _card(request, None)


async def agent_card(request: Request) -> Response:
    """One served agent's A2A agent card."""
    return await _card(request, request.path_params["agent"])


def authenticate(request: Request, settings: A2ASettings) -> str | None:
    """The owner of the caller presenting a configured token (``a2a:<caller>``);
    without tokens, the server's caller (when a server plugin authenticated it) or the
    anonymous loopback caller."""
    if not settings.tokens:
        owner = getattr(request.state, "owner", None)
        if owner:
            return str(owner)
        # Without tokens only this machine may call (whatever the server binds to).
        client = request.client.host if request.client else ""
        return ANONYMOUS if is_loopback(client) else None
    from toolang_source_a2a.cards import API_KEY_HEADER

    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    presented = token.strip() if scheme.lower() == "bearer" else ""
    presented = presented or request.headers.get(API_KEY_HEADER, "")
    caller = settings.caller_for(presented) if presented else None
    return None if caller is None else OWNER_PREFIX + caller


def _dispatcher(runtime: Runtime) -> Any:
    def build() -> Any:
        from a2a.server.routes.common import DefaultServerCallContextBuilder
        from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher

        from toolang_source_a2a.handler import StoreRequestHandler

        class Builder(DefaultServerCallContextBuilder):
            def build(self, request: Request) -> Any:
                context = super().build(request)
                # Tokens stay out of the handler (the A2A-Version header is needed).
                headers = context.state.get("headers", {})
                for secret in ("authorization", "x-api-key"):
                    headers.pop(secret, None)
                context.state["a2a_caller"] = request.state.a2a_caller
                context.state["a2a_agent"] = request.state.a2a_agent
                return context

        return JsonRpcDispatcher(
            StoreRequestHandler(runtime, _settings(runtime)),
            context_builder=Builder(),
            enable_v0_3_compat=True,  # message/send, tasks/get… as well as SendMessage…
        )

    return runtime.plugin_state(f"{NAME}:dispatcher", build)


async def rpc(request: Request) -> Response:
    """A2A JSON-RPC for one served agent (SendMessage, GetTask, CancelTask…)."""
    from toolang_source_a2a.cards import served_agents

    runtime = _runtime(request)
    settings = _settings(runtime)
    agent = request.path_params["agent"]
    if agent not in served_agents(runtime, settings):
        return _error(404, -32601, f"agent {agent!r} is not served over A2A")
    caller = authenticate(request, settings)
    if caller is None:
        return _error(
            401,
            -32600,
            "authentication required: a bearer token or X-API-Key this server knows",
            {"WWW-Authenticate": 'Bearer realm="toolang-a2a"'},
        )
    declared = request.headers.get("content-length", "")
    too_big = declared.isdigit() and int(declared) > settings.max_request_bytes
    if too_big or len(await request.body()) > settings.max_request_bytes:
        return _error(413, -32600, f"Payload too large: at most {settings.max_request_bytes} bytes")
    refused = _refused_before_dispatch(request, await request.body())
    if refused is not None:
        return refused
    request.state.a2a_caller = caller
    request.state.a2a_agent = agent
    return wire_safe(await _dispatcher(runtime).handle_requests(request))


def wire_safe(response: Response) -> Response:
    """``response`` masked by the redaction policy: a JSON body decoded, masked and
    encoded again; a stream's events (each a whole JSON-RPC response) masked one by one.
    What the handler answers comes from the store, masked at rest; this holds for
    whatever else an answer may quote."""
    import json

    from starlette.responses import JSONResponse

    from toolang_core import redact

    if isinstance(response, JSONResponse):
        data = json.loads(bytes(response.body))
        masked = redact(data)
        if masked == data:
            return response
        headers = {
            k: v for k, v in response.headers.items() if k not in ("content-length", "content-type")
        }
        return JSONResponse(masked, status_code=response.status_code, headers=headers)
    events = getattr(response, "body_iterator", None)
    if events is not None:
        response.body_iterator = _masked_events(events)  # type: ignore[attr-defined]
    return response


async def _masked_events(events: Any) -> Any:
    """The SSE events of a streamed answer (sse-starlette's ``{"data": json, …}``
    items), each one's data masked."""
    import json

    from toolang_core import redact

    async for event in events:
        sent = event
        if isinstance(event, dict) and isinstance(event.get("data"), str):
            try:
                data = json.loads(event["data"])
            except ValueError:
                data = None
            if data is not None:
                masked = redact(data)
                if masked != data:
                    sent = {**event, "data": json.dumps(masked, ensure_ascii=False)}
        yield sent


def _refused_before_dispatch(request: Request, body: bytes) -> Response | None:
    """The protocol's answer to what a2a-sdk's dispatcher would answer wrongly, or
    ``None`` to dispatch.

    * A body nested past the JSON decoder's depth: JSON-RPC's parse error (-32700) with
      HTTP 400 — the dispatcher turns the decoder's ``RecursionError`` into an internal
      error (-32603).
    * A v0.3 method (``message/send``, ``tasks/get`` …) from a client whose
      ``A2A-Version`` header names another major version: the protocol's
      ``VersionNotSupportedError`` (-32009), as a ``SendMessage`` gets — the SDK's v0.3
      adapter reports it as -32603, since v0.3 has no such code; a client that sent the
      header speaks a version that has it.
    """
    import json

    try:
        data = json.loads(body) if body.strip() else None
    except RecursionError:
        return _error(400, -32700, "Parse error: the JSON is nested too deeply to read")
    except ValueError:
        return None  # the dispatcher answers it (-32700)
    if not isinstance(data, dict) or not isinstance(data.get("method"), str):
        return None
    version = request.headers.get("a2a-version", "").strip()
    if "/" not in data["method"] or not version or _speaks_v03(version):
        return None
    from a2a.server.request_handlers.response_helpers import build_error_response
    from a2a.utils import constants
    from a2a.utils.errors import VersionNotSupportedError
    from starlette.responses import JSONResponse

    request_id = data.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, str | int | None):
        request_id = None
    error = VersionNotSupportedError(
        message=f"A2A version {version!r} is not supported by method {data['method']!r} "
        f"(an A2A {constants.PROTOCOL_VERSION_0_3} method); with A2A-Version "
        f"{constants.PROTOCOL_VERSION_1_0} use its method names (SendMessage, GetTask …)"
    )
    return JSONResponse(build_error_response(request_id, error))


def _speaks_v03(version: str) -> bool:
    """Whether a client declaring ``version`` speaks A2A 0.x (the SDK's own rule: the
    major versions match; ``0.3``, ``0.3.1``)."""
    major = version.removeprefix("v").split(".", 1)[0]
    return major.isdigit() and int(major) == 0


ROUTES = (
    A2ARoute(
        "/.well-known/agent-card.json",
        default_card,
        ("GET",),
        "a2a-card",
        "The A2A agent card of the default served agent",
        False,
    ),
    A2ARoute(
        "/a2a/{agent}/.well-known/agent-card.json",
        agent_card,
        ("GET",),
        "a2a-agent-card",
        "One served agent's A2A agent card",
        False,
    ),
    # The A2A endpoint checks its own tokens (the callers' names become owners); with
    # none configured it leaves authentication to the server's token.
    A2ARoute("/a2a/{agent}", rpc, ("POST",), "a2a-rpc", "A2A JSON-RPC for one agent", False),
)
