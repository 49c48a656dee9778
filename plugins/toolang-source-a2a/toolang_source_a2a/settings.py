"""``[plugins.source-a2a]``: what is served over A2A, to whom, and where."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping

import attrs

from toolang_core import Secret

NAME = "source-a2a"


def split_listen(listen: str) -> tuple[str, int]:
    """``"127.0.0.1:8765"`` → ``("127.0.0.1", 8765)``. :raises ValueError:"""
    host, sep, port = listen.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"expected HOST:PORT (e.g. 127.0.0.1:8765), found {listen!r}")
    return host.strip("[]"), int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@attrs.frozen
class A2ASettings:
    """``[plugins.source-a2a]``.

    ``agents``: the agents served, one card each (empty: the ``[agents] default`` one).
    ``tokens``: caller name → bearer token / API key (``${ENV}`` expanded); what a
    caller submits is owned by and attributed to ``a2a:<caller>`` (a namespace of its own:
    never an HTTP owner's). Without tokens every caller is the owner ``a2a:local`` and the
    plugin's own port binds to loopback only.
    ``listen``: ``HOST:PORT`` of the plugin's own port, used only when no server plugin
    serves routes in this run (empty: serve only through the server). ``public_url``:
    the base URL the cards advertise (empty: the address the card was asked at).
    """

    agents: list[str] = attrs.field(factory=list)
    tokens: Mapping[str, Secret] = attrs.field(factory=dict)
    listen: str = ""
    public_url: str = ""
    max_request_bytes: int = 262_144
    wait_seconds: float = 30.0
    poll_seconds: float = 0.02

    def __attrs_post_init__(self) -> None:
        problems = []
        if self.listen:
            try:
                host, _port = split_listen(self.listen)
            except ValueError as exc:
                problems.append(f"listen: {exc}")
            else:
                if not self.tokens and not is_loopback(host):
                    problems.append(
                        f"listen: refusing to serve A2A on {host!r} without a token: set "
                        'tokens (caller = "${ENV_VAR}") or listen on 127.0.0.1'
                    )
        for caller, token in self.tokens.items():
            if not caller or not isinstance(token, Secret) or not token.reveal():
                problems.append(f"tokens.{caller}: expected a non-empty token")
        if self.max_request_bytes < 1024:
            problems.append(f"max_request_bytes: expected >= 1024, found {self.max_request_bytes}")
        if self.wait_seconds < 0 or self.poll_seconds <= 0:
            problems.append("wait_seconds must be >= 0 and poll_seconds > 0")
        if problems:
            raise ValueError("; ".join(problems))

    def caller_for(self, presented: str) -> str | None:
        """The caller whose token is ``presented``, or ``None``."""
        import hmac

        for caller, token in self.tokens.items():
            if hmac.compare_digest(token.reveal().encode(), presented.encode()):
                return caller
        return None
