"""Who is calling, and whether a *person* is: the server's one authentication rule.

A caller is one of:

* an **owner** presenting its token (``[plugins.server] tokens``) as
  ``Authorization: Bearer …`` — principal ``token:<owner>``;
* the **operator** (the person running the runtime) presenting the credential file
  of the runtime's home as a bearer token — principal ``token:operator``;
* a **console session** (cookie), opened by a one-time sign-in link or by the sign-in
  form — principal ``console:<owner>`` or ``console:operator``;
* on a server without tokens, an **anonymous** caller on this machine (loopback):
  it may read and submit, but it is no person — no principal.

Approving, denying and granting, and acting on others' work (cancelling a turn it did
not submit, a task run), need a person: :func:`require_person`. Loopback alone never
is one, since any local process — a program a tool started included — can connect.

A wrong credential is logged (``server.auth_failed``: client, path, why; never what was
presented) and counted per client: after ``auth_failure_limit`` failures within
``auth_failure_window_seconds`` the client's credentials are refused with 429 and
``Retry-After`` until the window has passed (:class:`AuthFailures`, in this server
process's memory).
"""

from __future__ import annotations

import hmac
import math
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

import structlog

from toolang_server.http import ApiError, Caller, host_name
from toolang_server.settings import OPERATOR, is_loopback

if TYPE_CHECKING:
    from starlette.requests import Request

    from toolang_server.settings import ServerSettings
    from toolang_server.signin import Sessions

log = structlog.get_logger("toolang.server")
SIGN_IN_HINT: Final = (
    "a console session (the sign-in link `toolang run` printed on its terminal, or a new one "
    "from `toolang console`), or Authorization: Bearer <token> (an owner's token from "
    "[plugins.server] tokens, or the operator's credential file <home>/credential)"
)


class RateLimited(ApiError):
    """429: this client failed to authenticate too often; ``retry_after`` seconds."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(
            429,
            f"too many failed sign-ins from this client; try again in {retry_after} s",
            field="Authorization",
            expected=f"a valid credential, after {retry_after} s",
        )
        self.retry_after = retry_after


class AuthFailures:
    """Failed authentications per client, in a sliding window (this process only)."""

    def __init__(
        self, limit: int, window_seconds: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limit = limit
        self.window = window_seconds
        self.clock = clock
        self._failures: dict[str, deque[float]] = {}

    def _recent(self, client: str) -> deque[float]:
        failures = self._failures.get(client)
        if failures is None:
            return deque()
        cutoff = self.clock() - self.window
        while failures and failures[0] <= cutoff:
            failures.popleft()
        if not failures:
            del self._failures[client]
        return failures

    def check(self, client: str) -> None:
        """:raises RateLimited: while ``client`` is over the limit."""
        failures = self._recent(client)
        if len(failures) >= self.limit:
            wait = failures[len(failures) - self.limit] + self.window - self.clock()
            raise RateLimited(max(1, math.ceil(wait)))

    def fail(self, client: str, *, path: str, why: str) -> None:
        """Count and log a failure (``why`` says what failed, never what was shown)."""
        failures = self._recent(client)
        failures.append(self.clock())
        self._failures[client] = failures
        if len(self._failures) > 10_000:  # many clients: forget the oldest
            del self._failures[next(iter(self._failures))]
        log.warning(
            "server.auth_failed", client=client, path=path, reason=why, failures=len(failures)
        )


def client_of(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def presented(request: Request) -> bool:
    """Whether the request carries a credential in its headers (a bearer token or an
    ``X-API-Key``): only such a request can fail to authenticate."""
    return bool(request.headers.get("authorization") or request.headers.get("x-api-key"))


def owner_for_token(settings: ServerSettings, given: str) -> str | None:
    """The owner whose token ``given`` is (compared in constant time), or ``None``."""
    found = None
    for owner, token in settings.tokens.items():
        if given and hmac.compare_digest(given.encode(), token.reveal().encode()):
            found = owner
    return found


def is_operator_credential(credential: str | None, given: str) -> bool:
    """Whether ``given`` is the operator's credential (compared in constant time)."""
    if not credential or not given:
        return False
    return hmac.compare_digest(given.encode(), credential.encode())


def _bearer(request: Request) -> str | None:
    header = request.headers.get("authorization")
    if header is None:
        return None
    return header[7:].strip() if header.lower().startswith("bearer ") else ""


def authenticate(request: Request, settings: ServerSettings, sessions: Sessions) -> Caller:
    """The caller behind ``request``: its bearer token, else its session, else (without
    tokens, on loopback) the anonymous local caller.

    :raises ApiError: 401 for a wrong credential, or none where tokens are required;
        403 for an anonymous caller not on loopback (or naming another host).
    """
    given = _bearer(request)
    if given is not None:
        owner = owner_for_token(settings, given)
        if owner is not None:
            return Caller(owner, f"http:{owner}", f"token:{owner}")
        if is_operator_credential(sessions.credential, given):
            return Caller(None, f"http:{OPERATOR}", f"token:{OPERATOR}")
        raise ApiError(
            401,
            "a valid token is required",
            field="Authorization",
            expected="Authorization: Bearer <token> (an owner's token from [plugins.server] "
            "tokens, or the operator's credential file)",
        )
    session = sessions.get(request)
    if session is not None:
        return session.caller()
    if settings.tokens:
        raise ApiError(
            401,
            "this server requires a token",
            field="Authorization",
            expected=f"{SIGN_IN_HINT}",
        )
    return _anonymous(request, settings)


def _anonymous(request: Request, settings: ServerSettings) -> Caller:
    """A token-less server's caller without a credential: on loopback only."""
    client = client_of(request)
    if not is_loopback(client):  # bound elsewhere by mistake, or proxied: refuse
        raise ApiError(403, "this server has no tokens and serves loopback callers only")
    # A page of another site whose name was rebound to 127.0.0.1 sends its own name
    # as Host: refused, or any web page could drive the local runtime.
    host = host_name(request.headers.get("host", "")) or (request.url.hostname or "")
    if not (is_loopback(host) or host == settings.host):
        raise ApiError(
            403,
            f"this server answers to loopback names only, not {host!r}",
            field="Host",
            expected="127.0.0.1, localhost or ::1",
        )
    return Caller(None, "http:local")


def require_person(request: Request, caller: Caller, action: str) -> str:
    """The principal of ``caller``, who wants to ``action``.

    :raises ApiError: 401 when the caller is no person (anonymous, on loopback); logged
        as ``server.person_required``, as a local process trying to decide would be.
    """
    if caller.principal is not None:
        return caller.principal
    log.warning(
        "server.person_required", client=client_of(request), path=request.url.path, action=action
    )
    raise ApiError(
        401,
        f"{action} needs a signed-in person; a caller on this machine without a credential "
        "is not one",
        field="Authorization",
        expected=SIGN_IN_HINT,
    )
