"""The network of a sandbox with ``network = "allow"``: a forwarding proxy in the runtime.

The sandbox has no network of its own (a network namespace with loopback only). The
runtime listens on a Unix socket mounted into it (one per program, in a private
directory); the bridge inside (:mod:`.bridge`) turns it into ``127.0.0.1:3128``, named
by ``HTTP_PROXY``/``HTTPS_PROXY``/``ALL_PROXY``. Everything is decided here, outside
the sandbox:

- ``CONNECT host:port`` (HTTPS, or any TCP a client tunnels) and plain HTTP requests in
  absolute form (``GET http://host/path``) — nothing else;
- the host must match ``allow_hosts`` (:class:`~toolang_core.config.sandbox.HostRule`),
  by the name the client asked for;
- the name is resolved here, and each address is checked again: loopback, unspecified,
  link-local (cloud metadata services live there), multicast and every address of this
  machine are refused — unless ``[tools] unsafe_allow_local`` names that exact
  ``address:port`` — and a port the runtime itself listens on is refused on this
  machine's addresses always; the connection goes to the address checked, never to a
  second resolution.

What it does not do: look inside TLS, limit what is sent to an allowed host, or stop a
program that ignores the proxy variables from failing (it simply has no network).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import shutil
import socket
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import attrs
import structlog

from toolang_core.sandbox.rules import HostRule

log = structlog.get_logger("toolang.sandbox")

_HEAD_LIMIT: Final = 64 * 1024
_HEAD_SECONDS: Final = 30.0
_CONNECT_SECONDS: Final = 30.0
_HOP_HEADERS: Final = frozenset(
    {"proxy-connection", "proxy-authorization", "connection", "keep-alive"}
)


@attrs.frozen
class ProxyRules:
    """What a sandbox's proxy lets through (see the module docstring)."""

    allow_hosts: tuple[HostRule, ...] = ()
    local_targets: tuple[tuple[str, int], ...] = ()

    def refuse_host(self, host: str, port: int) -> str | None:
        """Why a request for ``host:port`` is refused by name (``None``: it is allowed)."""
        if any(rule.matches(host, port) for rule in self.allow_hosts):
            return None
        allowed = ", ".join(map(str, self.allow_hosts)) or "nothing"
        return f"{host}:{port} is not in allow_hosts (allowed: {allowed})"

    def refuse_address(
        self, address: str, port: int, *, local: bool, own_ports: frozenset[int]
    ) -> str | None:
        """Why connecting to ``address:port`` is refused (``None``: it may be reached).
        ``local``: the address is this machine's; ``own_ports``: the ports the runtime
        listens on."""
        ip = ipaddress.ip_address(address)
        special = (
            ip.is_loopback or ip.is_unspecified or ip.is_link_local or ip.is_multicast or local
        )
        if special and port in own_ports:
            return f"{address} port {port} is the runtime's own"
        if not special or (str(ip), port) in self.local_targets:
            return None
        return f"{address} is this machine's (or link-local, or multicast)"


@attrs.frozen
class Request:
    """The head of a proxy request: where to and, for plain HTTP, what to send there."""

    host: str
    port: int
    tunnel: bool
    head: bytes = b""


class RequestError(ValueError):
    """A request the proxy does not serve (the message goes back as a 400)."""


def parse_head(raw: bytes) -> Request:
    """Parse a request head (up to and including the blank line).

    :raises RequestError: for anything but ``CONNECT host:port`` or an absolute
        ``http://`` request.
    """
    text = raw.decode("latin-1")
    line, _, rest = text.partition("\r\n")
    parts = line.split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise RequestError(f"not an HTTP/1 request line: {line[:100]!r}")
    method, target, version = parts
    if method.upper() == "CONNECT":
        host, port = _host_port(target, None)
        return Request(host, port, tunnel=True)
    if not target.lower().startswith("http://"):
        raise RequestError(
            f"{method} {target[:100]}: only CONNECT and http:// requests go through the proxy"
        )
    authority, slash, path = target[7:].partition("/")
    host, port = _host_port(authority.rpartition("@")[2], 80)
    headers = [
        header
        for header in rest.split("\r\n")
        if header and header.partition(":")[0].strip().lower() not in _HOP_HEADERS
    ]
    head = f"{method} {slash}{path} {version}\r\n" + "".join(f"{h}\r\n" for h in headers)
    return Request(host, port, tunnel=False, head=(head + "Connection: close\r\n\r\n").encode())


def _host_port(authority: str, default: int | None) -> tuple[str, int]:
    if authority.startswith("["):
        host, _, port = authority[1:].partition("]")
        port = port.removeprefix(":")
    elif authority.count(":") == 1:
        host, _, port = authority.partition(":")
    else:
        host, port = authority, ""
    if not host:
        raise RequestError(f"no host in {authority!r}")
    if not port:
        if default is None:
            raise RequestError(f"CONNECT needs host:port, got {authority!r}")
        return host, default
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        raise RequestError(f"bad port in {authority!r}")
    return host, int(port)


def is_local_address(address: str) -> bool:
    """Whether ``address`` is one of this machine's (the kernel would answer it from
    the local routing table: a datagram socket "connected" to it takes it as its own
    source). Nothing is sent."""
    ip = ipaddress.ip_address(address)
    if ip.is_loopback or ip.is_unspecified:
        return True
    family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.connect((address, 9))
            return bool(probe.getsockname()[0] == str(ip))
    except OSError:
        return False


def listening_ports() -> frozenset[int]:
    """The TCP ports this process listens on (from ``/proc``; empty elsewhere)."""
    inodes = set()
    with contextlib.suppress(OSError):
        for fd in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):
                target = os.readlink(f"/proc/self/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
    ports = set()
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if len(fields) > 9 and fields[3] == "0A" and fields[9] in inodes:
                    ports.add(int(fields[1].rpartition(":")[2], 16))
    return frozenset(ports)


class NetworkProxy:
    """The proxy of one sandboxed program: :meth:`start` it, mount :attr:`socket_path`
    into the sandbox, :meth:`close` it when the program ended. ``label`` (the call's
    marker) names it in the log lines of what it refuses."""

    def __init__(self, rules: ProxyRules, label: str = "") -> None:
        self.rules = rules
        self.label = label
        self._directory: Path | None = None
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def socket_path(self) -> Path:
        assert self._directory is not None, "start() the proxy first"
        return self._directory / "proxy.sock"

    async def start(self) -> Path:
        """Listen on a Unix socket in a new private directory; return its path."""
        self._directory = Path(tempfile.mkdtemp(prefix="toolang-proxy-"))
        self._server = await asyncio.start_unix_server(self._accept, path=self.socket_path)
        return self.socket_path

    async def close(self) -> None:
        """Stop listening, end every connection, remove the socket's directory."""
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._serve(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async with asyncio.timeout(_HEAD_SECONDS):
            raw = await reader.readuntil(b"\r\n\r\n")
        if len(raw) > _HEAD_LIMIT:
            await _answer(writer, 431, "request head too large")
            return
        try:
            request = parse_head(raw)
        except RequestError as exc:
            await _answer(writer, 400, str(exc))
            return
        refused = self.rules.refuse_host(request.host, request.port)
        if refused is None:
            upstream, refused = await self._open(request.host, request.port)
        if refused is not None:
            log.info("sandbox.network_refused", call=self.label, reason=refused)
            await _answer(writer, 403, f"toolang sandbox: {refused}")
            return
        assert upstream is not None
        up_reader, up_writer = upstream
        if request.tunnel:
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            up_writer.write(request.head)
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            up_writer.close()

    async def _open(
        self, host: str, port: int
    ) -> tuple[tuple[asyncio.StreamReader, asyncio.StreamWriter] | None, str | None]:
        """Resolve ``host``, check each address, connect to the first allowed one."""
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            return None, f"{host} does not resolve: {exc}"
        own = listening_ports()
        refused = []
        for _, _, _, _, sockaddr in infos:
            address = str(sockaddr[0])
            why = self.rules.refuse_address(
                address, port, local=is_local_address(address), own_ports=own
            )
            if why is not None:
                refused.append(why)
                continue
            try:
                async with asyncio.timeout(_CONNECT_SECONDS):
                    return await asyncio.open_connection(address, port), None
            except (OSError, TimeoutError) as exc:
                refused.append(f"{address} port {port}: {exc or 'timed out'}")
        return None, f"{host}:{port}: " + "; ".join(refused or ["no address"])


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    finally:
        with contextlib.suppress(OSError):
            if writer.can_write_eof():
                writer.write_eof()


async def _answer(writer: asyncio.StreamWriter, status: int, message: str) -> None:
    reason = {400: "Bad Request", 403: "Forbidden", 431: "Request Header Fields Too Large"}
    body = (message + "\n").encode()
    writer.write(
        f"HTTP/1.1 {status} {reason[status]}\r\nContent-Type: text/plain\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )
    with contextlib.suppress(OSError):
        await writer.drain()


def proxy_env(port: int) -> dict[str, str]:
    """The variables that send a sandboxed program's HTTP(S) through the bridge."""
    url = f"http://127.0.0.1:{port}"
    names: Sequence[str] = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
    env = {name: url for name in names}
    env.update({name.lower(): url for name in names})
    env["NO_PROXY"] = env["no_proxy"] = ""
    return env
