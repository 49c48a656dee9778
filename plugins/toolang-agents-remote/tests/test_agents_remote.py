"""Remote agents from a real A2A server on loopback: discovery, listing, health."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys

import pytest

import toolang_agents_remote
from toolang_agents_remote.testing import A2AServer
from toolang_core import AgentDefinition, ConfigError
from toolang_core.testing.agents import AgentsPlugin


def config(*urls: str) -> str:
    return f"[plugins.agents-remote]\nendpoints = {json.dumps(list(urls))}\n"


def LocalAgents(*names):
    """A stand-in user source defining the given names."""
    return AgentsPlugin(*(AgentDefinition(name=n) for n in names), name="test-user")


@pytest.fixture
def catalog(toolang_runtime):
    def make(*urls, local=()):
        plugins = {"agents-remote": toolang_agents_remote, "local": LocalAgents(*local)}
        return toolang_runtime(config(*urls), plugins=plugins).agents

    return make


def listed(toolang_cli):
    result = toolang_cli("agents", "list", "--json")
    assert result.returncode == 0, result.stderr
    return {row["name"]: row for row in json.loads(result.stdout)}


def test_a_served_agent_is_listed_with_its_cards_name_and_skills(toolang_cli, toolang_home):
    with A2AServer("polyglot") as server:
        toolang_home.write_config(config(server.url))
        row = listed(toolang_cli)["polyglot"]
    assert (row["source"], row["status"], row["origin"]) == ("remote", "active", server.url)
    assert row["skills"] == ["Translate", "Detect language"]
    assert row["health"]["state"] == "ok"


def test_stopping_the_server_makes_it_unreachable_and_leaves_local_agents_alone(
    toolang_cli, toolang_home
):
    with A2AServer("polyglot") as server:
        toolang_home.write_config(config(server.url))
        before = listed(toolang_cli)
    after = listed(toolang_cli)
    assert after["polyglot"]["health"]["state"] == "unreachable"
    assert "All connection attempts failed" in after["polyglot"]["health"]["detail"]
    assert after["polyglot"]["skills"] == before["polyglot"]["skills"]
    local = {name: row for name, row in before.items() if row["source"] != "remote"}
    assert local
    assert {name: after[name] for name in local} == local


def test_the_text_listing_shows_health_and_skills(toolang_cli, toolang_home):
    with A2AServer("polyglot") as server:
        toolang_home.write_config(config(server.url))
        result = toolang_cli("agents", "list")
    line = next(line for line in result.stdout.splitlines() if line.startswith("polyglot"))
    assert line.split()[1:4] == ["remote", "active", "ok"]
    assert line.endswith("Translate, Detect language")


def free_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_an_endpoint_never_reached_is_an_error_naming_it(catalog):
    url = free_port_url()
    registry = catalog(url).registry
    (error,) = registry.errors
    assert error.origin == url
    assert error.message.startswith("no agent card, none known:")
    assert [d.source for d in registry.all()] == ["builtin"]  # the [agents] default only


def test_a_remote_agent_never_shadows_a_local_one(catalog):
    with A2AServer("polyglot") as server:
        registry = catalog(server.url, local=["polyglot"]).registry
    assert registry.get("polyglot").source == "user"
    (error,) = registry.errors
    assert error.origin == server.url
    assert "would shadow the user agent" in error.message


def test_a_remote_agent_never_takes_the_default_agents_name(catalog):
    with A2AServer("assistant") as server:
        registry = catalog(server.url).registry
    assert registry.get("assistant").source == "builtin"
    (error,) = registry.errors
    assert error.origin == server.url


def test_a_reachable_remote_agent_is_routed_to_by_its_skills(catalog):
    with A2AServer("polyglot") as server:
        agents = catalog(server.url)
        proposal = asyncio.run(agents.route("translation of this into french", "assistant"))
    assert proposal.agent == "polyglot"


def test_an_unreachable_remote_agent_is_never_routed_to(catalog):
    with A2AServer("polyglot") as server:
        catalog(server.url).registry  # noqa: B018 - reads (and remembers) the card
    agents = catalog(server.url)
    assert agents.registry.health["polyglot"].state == "unreachable"
    assert asyncio.run(agents.route("translation into french", "assistant")) is None


def test_a_bad_endpoint_is_a_configuration_error_naming_the_key(toolang_runtime):
    with pytest.raises(ConfigError) as raised:
        toolang_runtime(
            config("ftp://example.com"), plugins={"agents-remote": toolang_agents_remote}
        )
    assert "plugins.agents-remote" in str(raised.value)
    assert "endpoints[0]: expected an http:// or https:// URL" in str(raised.value)


def test_importing_the_plugin_does_not_import_the_a2a_sdk():
    code = "import sys, toolang_agents_remote; print('a2a' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def test_the_pools_ping_reads_each_card_again(toolang_runtime):
    """``toolang_ping_agents``: ok while the endpoint answers, unreachable (with the
    reason) once it is gone; another plugin's agents are not pinged."""
    server = A2AServer("polyglot").start()
    try:
        runtime = toolang_runtime(
            config(server.url), plugins={"agents-remote": toolang_agents_remote}
        )
        agents = runtime.agents.registry.active()
        remote = [d for d in agents if d.source == "remote"]
        stranger = AgentDefinition(name="stranger", origin="http://127.0.0.1:9/other")
        up = runtime.host.hooks.ping_agents([*remote, stranger], runtime)
    finally:
        server.stop()
    down = runtime.host.hooks.ping_agents(remote, runtime)
    assert set(up) == {"polyglot"}
    assert (up["polyglot"].state, up["polyglot"].detail) == ("ok", f"card read from {server.url}")
    assert down["polyglot"].state == "unreachable"
    assert down["polyglot"].detail.startswith("ping: ")
    assert down["polyglot"].checked_at >= up["polyglot"].checked_at
