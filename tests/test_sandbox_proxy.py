"""The network proxy of sandboxes with ``network = "allow"`` (toolang_core.sandbox.proxy):
host rules, what a request head may be, which addresses are refused however a name
resolves, and real forwarded connections through its Unix socket."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest

from toolang_core.config.converter import KeyProblems
from toolang_core.config.sandbox import check_host_rules
from toolang_core.sandbox.proxy import (
    NetworkProxy,
    ProxyRules,
    RequestError,
    is_local_address,
    listening_ports,
    parse_head,
    proxy_env,
)
from toolang_core.sandbox.rules import HostRule, parse_host_rule, parse_local_target

# -- host rules ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "host", "port", "allowed"),
    [
        ("pypi.org", "pypi.org", 443, True),
        ("pypi.org", "PyPI.org.", 80, True),
        ("pypi.org", "pypi.org", 8080, False),  # without a port: 80 and 443 only
        ("pypi.org", "evil-pypi.org", 443, False),
        ("pypi.org", "pypi.org.evil.com", 443, False),
        ("*.pythonhosted.org", "files.pythonhosted.org", 443, True),
        ("*.pythonhosted.org", "a.b.pythonhosted.org", 443, True),
        ("*.pythonhosted.org", "pythonhosted.org", 443, False),
        ("*.pythonhosted.org", "evilpythonhosted.org", 443, False),
        ("example.com:8443", "example.com", 8443, True),
        ("example.com:8443", "example.com", 443, False),
        ("10.0.0.5:8080", "10.0.0.5", 8080, True),
        ("[2001:db8::1]:80", "[2001:db8::1]", 80, True),
        ("[2001:db8::1]:80", "2001:db8:0::1", 80, True),
    ],
)
def test_a_host_rule_matches_its_host_and_port_only(rule, host, port, allowed):
    assert parse_host_rule(rule).matches(host, port) is allowed


@pytest.mark.parametrize(
    "bad",
    ["", "http://pypi.org", "pypi.org/simple", "a b", "*", "a.*.org", "x.org:0", "x.org:99999"],
)
def test_a_bad_host_rule_is_refused_saying_what_one_looks_like(bad):
    with pytest.raises(ValueError, match=r"host rule|port"):
        parse_host_rule(bad)


def test_the_configuration_names_each_bad_rule_by_its_index():
    with pytest.raises(KeyProblems) as found:
        check_host_rules("allow_hosts", ("pypi.org", "a b", "x:0"))
    assert [path for path, _ in found.value.items] == [("allow_hosts", 1), ("allow_hosts", 2)]


def test_a_local_target_names_an_address_and_a_port():
    assert parse_local_target("127.0.0.2:8080") == ("127.0.0.2", 8080)
    for bad in ("127.0.0.2", "localhost:80", "*.x:80"):
        with pytest.raises(ValueError, match=r"IP address and a port|name the port"):
            parse_local_target(bad)


# -- request heads ------------------------------------------------------------------------


def test_connect_names_where_to_tunnel():
    request = parse_head(b"CONNECT pypi.org:443 HTTP/1.1\r\nHost: pypi.org:443\r\n\r\n")
    assert (request.host, request.port, request.tunnel) == ("pypi.org", 443, True)


def test_a_plain_http_request_is_rewritten_to_origin_form_without_proxy_headers():
    request = parse_head(
        b"GET http://user@example.com:8080/a?b=1 HTTP/1.1\r\nHost: example.com:8080\r\n"
        b"Proxy-Authorization: Basic eA==\r\nProxy-Connection: keep-alive\r\n"
        b"Connection: keep-alive\r\nAccept: */*\r\n\r\n"
    )
    assert (request.host, request.port, request.tunnel) == ("example.com", 8080, False)
    assert request.head == (
        b"GET /a?b=1 HTTP/1.1\r\nHost: example.com:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n"
    )


@pytest.mark.parametrize(
    "head",
    [
        b"GET /relative HTTP/1.1\r\n\r\n",
        b"GET https://example.com/ HTTP/1.1\r\n\r\n",
        b"CONNECT example.com HTTP/1.1\r\n\r\n",
        b"SSH-2.0-OpenSSH\r\n\r\n",
    ],
)
def test_anything_else_is_a_bad_request(head):
    with pytest.raises(RequestError):
        parse_head(head)


# -- addresses ----------------------------------------------------------------------------

RULES = ProxyRules(allow_hosts=(HostRule("example.com"),), local_targets=(("127.0.0.2", 8080),))


@pytest.mark.parametrize(
    ("address", "port", "local", "refused"),
    [
        ("93.184.215.14", 443, False, None),
        ("127.0.0.1", 443, True, "this machine's"),
        ("::1", 443, True, "this machine's"),
        ("0.0.0.0", 80, True, "this machine's"),
        ("169.254.169.254", 80, False, "this machine's (or link-local"),  # cloud metadata
        ("224.0.0.1", 80, False, "this machine's"),
        ("192.168.1.10", 80, True, "this machine's"),  # an address of this host
        ("127.0.0.2", 8080, True, None),  # named in unsafe_allow_local
        ("127.0.0.2", 8765, True, "the runtime's own"),  # never, whatever is allowed
        ("192.168.1.10", 8765, True, "the runtime's own"),
    ],
)
def test_local_link_local_and_the_runtimes_own_addresses_are_refused(address, port, local, refused):
    found = RULES.refuse_address(address, port, local=local, own_ports=frozenset({8765}))
    if refused is None:
        assert found is None
    else:
        assert found is not None and refused in found


def test_a_host_not_allowed_is_refused_by_name_listing_what_is():
    assert RULES.refuse_host("example.com", 443) is None
    refused = RULES.refuse_host("evil.com", 443)
    assert refused == "evil.com:443 is not in allow_hosts (allowed: example.com)"


def test_this_machines_addresses_are_known_without_sending_anything():
    assert is_local_address("127.0.0.1") and is_local_address("0.0.0.0")
    assert not is_local_address("192.0.2.1")  # TEST-NET-1: documentation only


def test_the_ports_this_process_listens_on_are_found():
    with socket.create_server(("127.0.0.1", 0)) as server:
        assert server.getsockname()[1] in listening_ports()


def test_the_program_is_pointed_at_the_bridge():
    env = proxy_env(3128)
    assert env["HTTPS_PROXY"] == env["http_proxy"] == env["ALL_PROXY"] == "http://127.0.0.1:3128"
    assert env["NO_PROXY"] == ""


# -- a real proxy ---------------------------------------------------------------------------


@pytest.fixture
def local_server() -> Iterator[int]:
    """An HTTP server on 127.0.0.2 in another process (not this one's own port)."""
    # -u: its "Serving HTTP on" line comes at once, not when a block of output is full.
    server = subprocess.Popen(
        [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert server.stdout is not None
    line = server.stdout.readline()  # "Serving HTTP on 127.0.0.2 port N (…) ..."
    port = int(line.split(" port ")[1].split()[0])
    yield port
    server.terminate()
    server.wait(timeout=10)


async def ask(proxy: NetworkProxy, head: bytes, then: bytes = b"") -> bytes:
    reader, writer = await asyncio.open_unix_connection(str(proxy.socket_path))
    writer.write(head)
    answer = await reader.readuntil(b"\r\n\r\n")
    if then:
        writer.write(then)
    answer += await reader.read()
    writer.close()
    return answer


def test_a_plain_request_and_a_tunnel_reach_an_allowed_target_and_nothing_else(local_server):
    rules = ProxyRules(
        allow_hosts=(parse_host_rule(f"127.0.0.2:{local_server}"),),
        local_targets=(("127.0.0.2", local_server),),
    )

    async def talk() -> list[bytes]:
        proxy = NetworkProxy(rules, "t-1:c-1")
        await proxy.start()
        try:
            plain = await ask(
                proxy, f"GET http://127.0.0.2:{local_server}/ HTTP/1.1\r\nHost: x\r\n\r\n".encode()
            )
            tunnel = await ask(
                proxy,
                f"CONNECT 127.0.0.2:{local_server} HTTP/1.1\r\n\r\n".encode(),
                b"GET / HTTP/1.0\r\n\r\n",
            )
            refused = await ask(proxy, b"CONNECT 127.0.0.1:22 HTTP/1.1\r\n\r\n")
            loopback = await ask(
                proxy, f"GET http://127.0.0.3:{local_server}/ HTTP/1.1\r\n\r\n".encode()
            )
        finally:
            await proxy.close()
        assert not proxy.socket_path.parent.exists()
        return [plain, tunnel, refused, loopback]

    plain, tunnel, refused, loopback = asyncio.run(talk())
    assert plain.startswith(b"HTTP/1.0 200") and b"Directory listing" in plain
    assert tunnel.startswith(b"HTTP/1.1 200 Connection established")
    assert b"HTTP/1.0 200" in tunnel and b"Directory listing" in tunnel
    assert refused.startswith(b"HTTP/1.1 403") and b"not in allow_hosts" in refused
    assert loopback.startswith(b"HTTP/1.1 403")


def test_an_allowed_name_resolving_to_this_machine_is_refused(local_server):
    """A name passes the allow-list, and resolves to loopback: the address is checked
    too (what an allowed name resolves to is not trusted)."""
    rules = ProxyRules(allow_hosts=(parse_host_rule(f"localhost:{local_server}"),))

    async def talk() -> bytes:
        proxy = NetworkProxy(rules)
        await proxy.start()
        try:
            return await ask(proxy, f"CONNECT localhost:{local_server} HTTP/1.1\r\n\r\n".encode())
        finally:
            await proxy.close()

    answer = asyncio.run(talk())
    assert answer.startswith(b"HTTP/1.1 403") and b"this machine's" in answer
