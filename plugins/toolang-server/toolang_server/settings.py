"""``[plugins.server]``: where the server listens and who may call it."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from typing import Any

import attrs

from toolang_core import Secret

_OWNER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
OPERATOR = "operator"
"""The principal name of the person running the runtime (``console:operator``,
``token:operator``): reserved, so no owner's token may be named so."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) only reaches this machine."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _port(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if not 0 <= value <= 65535:
        raise ValueError(f"{attribute.name}: a TCP port 1-65535 (0: any free port), got {value}")


def _tokens(
    instance: object, attribute: attrs.Attribute[Mapping[str, Secret]], value: Mapping[str, Secret]
) -> None:
    for owner, token in value.items():
        if not _OWNER.match(owner):
            raise ValueError(f"tokens: owner name {owner!r} must match {_OWNER.pattern}")
        if owner == OPERATOR:
            raise ValueError(
                f"tokens.{owner}: the name {OPERATOR!r} is reserved for the person who runs "
                "the runtime (its credential file and sign-in links); name the owner otherwise"
            )
        if len(token.reveal()) < 16:
            raise ValueError(
                f"tokens.{owner}: a token of 16 characters or more (e.g. `openssl rand -hex 24`)"
            )


def _positive(instance: object, attribute: attrs.Attribute[Any], value: float) -> None:
    if not value > 0:
        raise ValueError(f"{attribute.name}: a number above 0, got {value!r}")


@attrs.frozen
class ServerSettings:
    """``enabled`` starts the server with ``toolang run``. ``tokens`` maps an owner name
    to its bearer token (``${ENV}`` expanded; never logged): a caller is that owner and
    sees only its own work. Without tokens the server listens on loopback only and a
    caller without a credential reads and submits as the local operator, but decides
    nothing: approvals need a signed-in person (see :mod:`toolang_server.auth`).

    ``sign_in_link_seconds``: how long a one-time console sign-in link works;
    ``session_seconds``: how long a console session lasts. After
    ``auth_failure_limit`` failed authentications within ``auth_failure_window_seconds``
    a client's credentials are refused (429) until the window has passed."""

    enabled: bool = False
    host: str = "127.0.0.1"
    port: int = attrs.field(default=8765, validator=_port)
    tokens: Mapping[str, Secret] = attrs.field(factory=dict, validator=_tokens)
    max_body_bytes: int = 1_000_000
    cors_origins: tuple[str, ...] = ()
    sign_in_link_seconds: float = attrs.field(default=900.0, validator=_positive)
    session_seconds: float = attrs.field(default=43_200.0, validator=_positive)
    auth_failure_limit: int = attrs.field(default=10, validator=_positive)
    auth_failure_window_seconds: float = attrs.field(default=60.0, validator=_positive)

    def __attrs_post_init__(self) -> None:
        # Never open the runtime to the network without a token.
        if not self.tokens and not is_loopback(self.host):
            raise ValueError(
                f"host: {self.host!r} is reachable from other machines, and no tokens are set; "
                'set [plugins.server] tokens (owner = "${TOKEN}") or listen on 127.0.0.1'
            )
