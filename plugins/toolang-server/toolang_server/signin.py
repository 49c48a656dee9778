"""Console sessions, and the one-time sign-in links that open them.

A **sign-in link** is ``<server>/login?token=<issued>.<nonce>.<mac>``: the time it was
made, a random nonce, and an HMAC-SHA256 of both keyed by the operator's credential
(``<home>/credential``). ``toolang run`` prints one; ``toolang console`` makes another
from the same file, without asking the server. The server takes a link once (its nonce
is remembered until the link would have expired), only within ``sign_in_link_seconds``
of its making, and only when it was made after this server started — so a restart,
which forgets the nonces, cannot revive a used link.

A **session** is a random id in a cookie (HttpOnly, SameSite=Strict, one name per port:
cookies are shared by every port of a host), kept in this process's memory for
``session_seconds``: a restart signs everyone out. Only a hash of the id is kept.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

import attrs

from toolang_server.http import Caller
from toolang_server.settings import OPERATOR

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

LINK_LABEL: Final = "toolang sign-in"
FUTURE_SLACK: Final = 60.0
"""A link may claim to be made this much after now (clocks of two processes)."""


def _mac(credential: str, issued: int, nonce: str) -> str:
    message = f"{LINK_LABEL}\0{issued}\0{nonce}".encode()
    return hmac.new(credential.encode(), message, hashlib.sha256).hexdigest()[:32]


def link_token(credential: str, *, now: float | None = None) -> str:
    """A new sign-in link's token, made with the operator's ``credential``."""
    issued = int(time.time() if now is None else now)
    nonce = secrets.token_hex(12)
    return f"{issued}.{nonce}.{_mac(credential, issued, nonce)}"


def sign_in_url(base_url: str, credential: str, *, now: float | None = None) -> str:
    return f"{base_url}/login?token={link_token(credential, now=now)}"


class SignInRefused(Exception):
    """A sign-in link or token that does not open a session; the message says why
    (never what was presented)."""


@attrs.frozen
class Session:
    """A signed-in person: an owner, or the operator (``owner`` ``None``)."""

    owner: str | None
    principal: str
    expires_at: float

    def caller(self) -> Caller:
        return Caller(self.owner, f"http:{self.owner or OPERATOR}", self.principal)


def _digest(session_id: str) -> str:
    return hashlib.sha256(session_id.encode()).hexdigest()


class Sessions:
    """The console's sessions and the sign-in links already used, in memory."""

    def __init__(
        self,
        credential: str | None,
        *,
        link_seconds: float,
        session_seconds: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.credential = credential
        """The operator's credential (``None``: unreadable; no operator sign-in)."""
        self.link_seconds = link_seconds
        self.session_seconds = session_seconds
        self.clock = clock
        self.started_at = clock()
        self._used: dict[str, float] = {}
        self._sessions: dict[str, Session] = {}

    def redeem(self, token: str) -> Session:
        """Open an operator session with a sign-in link's ``token`` (it is used up).

        :raises SignInRefused: malformed, not made with the credential, expired, made
            before this server started, or used already.
        """
        issued_text, _, rest = token.partition(".")
        nonce, _, mac = rest.partition(".")
        if not (issued_text.isdigit() and nonce and mac and self.credential):
            raise SignInRefused("not a sign-in link")
        issued = int(issued_text)
        if not hmac.compare_digest(mac, _mac(self.credential, issued, nonce)):
            raise SignInRefused("not a sign-in link of this runtime")
        now = self.clock()
        self._forget_expired(now)
        if issued + self.link_seconds < now or issued < int(self.started_at) - 1:
            raise SignInRefused("the sign-in link has expired")
        if issued > now + FUTURE_SLACK:
            raise SignInRefused("the sign-in link is not valid yet")
        if nonce in self._used:
            raise SignInRefused("the sign-in link was used already")
        self._used[nonce] = issued + self.link_seconds
        return self.open(None, f"console:{OPERATOR}")

    def open(self, owner: str | None, principal: str) -> Session:
        """A new session (its id: :meth:`start`'s cookie value)."""
        return Session(owner, principal, self.clock() + self.session_seconds)

    def start(self, response: Response, request: Request, session: Session) -> None:
        """Remember ``session`` and set its cookie on ``response``."""
        session_id = secrets.token_urlsafe(32)
        self._sessions[_digest(session_id)] = session
        response.set_cookie(
            cookie_name(request),
            session_id,
            max_age=int(self.session_seconds),
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )

    def get(self, request: Request) -> Session | None:
        """The live session the request's cookie names, if any."""
        session_id = request.cookies.get(cookie_name(request))
        if not session_id:
            return None
        key = _digest(session_id)
        session = self._sessions.get(key)
        if session is not None and session.expires_at <= self.clock():
            del self._sessions[key]
            return None
        return session

    def end(self, request: Request, response: Response) -> None:
        """Forget the request's session and clear its cookie on ``response``."""
        session_id = request.cookies.get(cookie_name(request))
        if session_id:
            self._sessions.pop(_digest(session_id), None)
        response.delete_cookie(cookie_name(request), httponly=True, samesite="strict")

    def _forget_expired(self, now: float) -> None:
        for nonce in [n for n, until in self._used.items() if until < now]:
            del self._used[nonce]
        for key in [k for k, s in self._sessions.items() if s.expires_at <= now]:
            del self._sessions[key]


def cookie_name(request: Request) -> str:
    """The session cookie of this server's port (two runtimes on one host keep theirs)."""
    return f"toolang_session_{request.url.port or 80}"
