"""The rules a sandbox follows, as values: its mode, its network rule, the hosts it may
reach, the limits of its processes, and their defaults.

A leaf of the package graph (it imports nothing of toolang): ``[tools]`` in
:mod:`toolang_core.config` is validated with it, and :mod:`toolang_core.sandbox` decides
each program's sandbox from it.
"""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path
from typing import Final, Literal

import attrs

Network = Literal["off", "allow"]
SandboxMode = Literal["required", "off"]

_LABEL = r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?"
_HOST_NAME = re.compile(rf"^(?:\*\.)?(?:{_LABEL}\.)*{_LABEL}$")
DEFAULT_PORTS: Final = (80, 443)


@attrs.frozen
class HostRule:
    """One entry of ``allow_hosts``: a host name (``pypi.org``), every name under a
    domain (``*.pythonhosted.org`` — not the domain itself), or an IP address; with
    ``:port`` only that port, without one the web's ports 80 and 443."""

    host: str
    ports: tuple[int, ...] = DEFAULT_PORTS

    def matches(self, host: str, port: int) -> bool:
        """Whether a connection to ``host`` (a name or an address) on ``port`` is allowed."""
        if port not in self.ports:
            return False
        wanted = _normal_host(host)
        if self.host.startswith("*."):
            return wanted.endswith(self.host[1:])
        return wanted == self.host

    def __str__(self) -> str:
        if self.ports == DEFAULT_PORTS:
            return self.host
        return f"{self.host}:{self.ports[0]}"


def _normal_host(host: str) -> str:
    host = host.strip().lower().rstrip(".")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host


def parse_host_rule(text: str) -> HostRule:
    """``"pypi.org"``, ``"*.example.com"``, ``"10.0.0.5:8080"``, ``"[::1]:80"``.

    :raises ValueError: saying what a host rule looks like.
    """
    if "/" in text:
        raise ValueError(
            f"{text!r} is not a host rule: write the host name alone (pypi.org), not a URL "
            "or a path; add :port for another port than 80 and 443"
        )
    host, ports = _split_port(text.strip())
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        if not _HOST_NAME.match(host) or "*" in host[1:]:
            raise ValueError(
                f"{text!r} is not a host rule: write a host name (pypi.org), every name "
                "under a domain (*.example.com) or an IP address, optionally with :port"
            ) from None
        return HostRule(host.lower(), ports)
    return HostRule(str(address), ports)


def _split_port(text: str) -> tuple[str, tuple[int, ...]]:
    if text.startswith("["):  # [v6]:port
        host, _, rest = text[1:].partition("]")
        if not rest:
            return host, DEFAULT_PORTS
        if not rest.startswith(":"):
            raise ValueError(f"{text!r}: expected [address]:port")
        return host, (_port(rest[1:], text),)
    if text.count(":") == 1:
        host, _, port = text.partition(":")
        return host, (_port(port, text),)
    return text, DEFAULT_PORTS


def _port(text: str, whole: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise ValueError(f"{whole!r}: the port must be a number 1-65535, found {text!r}")
    return int(text)


def parse_local_target(text: str) -> tuple[str, int]:
    """An entry of ``unsafe_allow_local``: ``"<IP address>:<port>"`` (no names, no
    ranges — each local service let through is named exactly).

    :raises ValueError: naming what was expected.
    """
    rule = parse_host_rule(text)
    try:
        ipaddress.ip_address(rule.host)
    except ValueError:
        raise ValueError(
            f"{text!r}: expected an IP address and a port, e.g. 127.0.0.2:8080"
        ) from None
    if rule.ports == DEFAULT_PORTS:  # no port written
        raise ValueError(f"{text!r}: name the port, e.g. {rule.host}:8080")
    return rule.host, rule.ports[0]


@attrs.frozen
class ProcessLimits:
    """Limits of a sandboxed program (``0``: none). The first three bind each of its
    processes (``RLIMIT_CPU``, ``RLIMIT_AS``, ``RLIMIT_FSIZE``); ``max_processes``
    bounds how many processes it may have at once."""

    cpu_seconds: int = 0
    address_space_mb: int = 0
    file_size_mb: int = 0
    max_processes: int = 0


@attrs.frozen
class Hidden:
    """A path a sandboxed program must not see, and what it is (a directory gets an
    empty tmpfs over it, anything else ``/dev/null``)."""

    path: Path
    is_dir: bool


DEFAULT_MODE: Final[SandboxMode] = "required"
DEFAULT_NETWORK: Final[Network] = "off"
DEFAULT_LIMITS: Final = ProcessLimits(
    cpu_seconds=600, address_space_mb=8192, file_size_mb=4096, max_processes=512
)
"""``[tools]``' defaults (``toolang.toml`` may change each)."""
