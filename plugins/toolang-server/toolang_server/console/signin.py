"""Console: signing in and out.

``GET /login?token=…`` takes a one-time sign-in link (printed by ``toolang run``, or
``toolang console``) and opens an operator session; the form at ``/login`` takes an
owner's token (an owner session), the operator's credential, or a link's token.
Either way the browser keeps only a session cookie, never the token itself. A refused
attempt is logged and counted against the client like any failed authentication.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import parse_qs

from starlette.responses import HTMLResponse, RedirectResponse, Response

from toolang_server.auth import RateLimited, client_of, is_operator_credential, owner_for_token
from toolang_server.console.pages import ENV
from toolang_server.http import caller_of
from toolang_server.settings import OPERATOR
from toolang_server.signin import Session, SignInRefused

if TYPE_CHECKING:
    from starlette.requests import Request

    from toolang_core import RegisterRoute
    from toolang_server.auth import AuthFailures
    from toolang_server.signin import Sessions

NO_REFERRER = {"Referrer-Policy": "same-origin", "Cache-Control": "no-store"}
"""The sign-in URL holds a token: never sent on to another site (a "no-referrer" policy
would make the browser send ``Origin: null`` with the form, which the server refuses)."""


def _target(raw: str | None) -> str:
    """Where to go after signing in: a path on this server, never another site."""
    if not raw or not raw.startswith("/") or raw.startswith("//") or "\\" in raw:
        return "/"
    return raw


def _page(request: Request, target: str, error: str = "", status: int = 200) -> Response:
    sessions: Sessions = request.app.state.sessions
    html = ENV.get_template("login.html").render(
        title="Sign in",
        section="",
        next=target,
        error=error,
        principal=(s.principal if (s := sessions.get(request)) else None),
        tokens=bool(request.app.state.settings.tokens),
    )
    return HTMLResponse(html, status_code=status, headers=NO_REFERRER)


def _refused(request: Request, target: str, why: str) -> Response:
    failures: AuthFailures = request.app.state.auth_failures
    failures.fail(client_of(request), path=request.url.path, why=why)
    return _page(request, target, f"Not signed in: {why}.", 401)


def _signed_in(request: Request, session: Session, target: str) -> Response:
    """The session's cookie, then on to ``target`` — by a page rather than a redirect,
    so a browser that followed the link from elsewhere sends the strict cookie."""
    html = ENV.get_template("signed_in.html").render(
        title="Signed in", section="", next=target, principal=session.principal
    )
    response = HTMLResponse(html, headers=NO_REFERRER)
    request.app.state.sessions.start(response, request, session)
    return response


def _limited(request: Request, target: str) -> Response | None:
    try:
        request.app.state.auth_failures.check(client_of(request))
    except RateLimited as exc:
        page = _page(request, target, exc.message, 429)
        page.headers["Retry-After"] = str(exc.retry_after)
        return page
    return None


async def login_page(request: Request) -> Response:
    """Console: sign in — with a one-time link's ``token``, or the form."""
    target = _target(request.query_params.get("next"))
    token = request.query_params.get("token")
    if token is None:
        return _page(request, target)
    limited = _limited(request, target)
    if limited is not None:
        return limited
    try:
        session = request.app.state.sessions.redeem(token)
    except SignInRefused as exc:
        return _refused(request, target, str(exc))
    return _signed_in(request, session, target)


async def login(request: Request) -> Response:
    """Console: sign in with an owner's token, the operator's credential or a link's
    token; the browser keeps a session cookie."""
    form = parse_qs((await request.body())[:10_000].decode("utf-8", "replace"))
    token = (form.get("token") or [""])[0].strip()
    target = _target((form.get("next") or ["/"])[0])
    limited = _limited(request, target)
    if limited is not None:
        return limited
    sessions: Sessions = request.app.state.sessions
    owner = owner_for_token(request.app.state.settings, token)
    if owner is not None:
        return _signed_in(request, sessions.open(owner, f"console:{owner}"), target)
    if is_operator_credential(sessions.credential, token):
        return _signed_in(request, sessions.open(None, f"console:{OPERATOR}"), target)
    try:
        session = sessions.redeem(token)
    except SignInRefused:
        return _refused(request, target, "that token is not valid")
    return _signed_in(request, session, target)


async def logout(request: Request) -> Response:
    """Console: sign out (the session ends at once)."""
    response = RedirectResponse("/login", status_code=303)
    request.app.state.sessions.end(request, response)
    return response


async def whoami(request: Request) -> dict[str, object]:
    """Who is calling: owner (null: the operator), sender, and the signed-in principal.

    ``principal`` is null for a caller who is no person (no credential, on loopback)."""
    caller = caller_of(request)
    return {
        "owner": caller.owner,
        "sender": caller.sender,
        "principal": caller.principal,
        "person": caller.principal is not None,
    }


def register(register_route: RegisterRoute) -> None:
    register_route("/api/session", whoami)
    register_route("/login", login_page, auth=False)
    register_route("/login", login, methods=("POST",), auth=False)
    register_route("/logout", logout, methods=("POST",), auth=False)
