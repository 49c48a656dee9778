"""``[plugins.server]``: where the server listens and who may call it."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping

import attrs

from toolang_core import Secret

_OWNER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


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
        if len(token.reveal()) < 16:
            raise ValueError(
                f"tokens.{owner}: a token of 16 characters or more (e.g. `openssl rand -hex 24`)"
            )


@attrs.frozen
class ServerSettings:
    """``enabled`` starts the server with ``toolang run``. ``tokens`` maps an owner name
    to its bearer token (``${ENV}`` expanded; never logged): a caller is that owner and
    sees only its own work. Without tokens the server listens on loopback only and every
    caller is the local operator (as on the command line)."""

    enabled: bool = False
    host: str = "127.0.0.1"
    port: int = attrs.field(default=8765, validator=_port)
    tokens: Mapping[str, Secret] = attrs.field(factory=dict, validator=_tokens)
    max_body_bytes: int = 1_000_000
    cors_origins: tuple[str, ...] = ()

    def __attrs_post_init__(self) -> None:
        # Never open the runtime to the network without a token.
        if not self.tokens and not is_loopback(self.host):
            raise ValueError(
                f"host: {self.host!r} is reachable from other machines, and no tokens are set; "
                'set [plugins.server] tokens (owner = "${TOKEN}") or listen on 127.0.0.1'
            )
