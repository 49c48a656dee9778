"""The sandbox's settings — ``[tools]``, ``[tools.agent.<name>]``, ``[tools.tool.<name>]``
and AGENT.md's ``sandbox:`` — are validated with errors that name the file, the key and
what was expected."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolang_core.agents.agentmd import parse_agent_md
from toolang_core.config import parse_config
from toolang_core.config.sandbox import SandboxOverride
from toolang_core.errors import ConfigError


def problems(text: str, tmp_path: Path) -> list[str]:
    file = tmp_path / "toolang.toml"
    with pytest.raises(ConfigError) as failed:
        parse_config(text, file=file, env={})
    return [p.replace(f"{file}: ", "") for p in failed.value.problems]


def test_the_defaults_are_a_required_sandbox_without_network(tmp_path):
    tools = parse_config("", file=tmp_path / "toolang.toml", env={}).tools
    assert (tools.sandbox, tools.network, tools.allow_hosts, tools.workdir) == (
        "required",
        "off",
        (),
        None,
    )
    assert (tools.cpu_seconds, tools.address_space_mb, tools.file_size_mb) == (600, 8192, 4096)
    assert tools.max_processes == 512


def test_every_key_is_read_paths_relative_to_the_file(tmp_path):
    tools = parse_config(
        """
[tools]
sandbox = "off"
workdir = "work"
network = "allow"
allow_hosts = ["pypi.org", "*.pythonhosted.org", "10.0.0.5:8080"]
hide = ["~/notes", "secrets"]
cpu_seconds = 0
max_processes = 64
unsafe_allow_local = ["127.0.0.2:8080"]

[tools.agent.operator]
workdir = "ops"
network = "off"

[tools.tool.exec_run]
allow_hosts = []
file_size_mb = 1
""",
        file=tmp_path / "toolang.toml",
        env={"HOME": "/home/ada"},
    ).tools
    assert tools.workdir == tmp_path / "work"
    assert tools.hide == (Path("/home/ada/notes"), tmp_path / "secrets")
    assert tools.agent["operator"] == SandboxOverride(workdir=tmp_path / "ops", network="off")
    assert tools.tool["exec_run"] == SandboxOverride(allow_hosts=(), file_size_mb=1)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '[tools]\nsandbox = "maybe"',
            "tools.sandbox: expected one of 'required', 'off', found a string (\"maybe\")",
        ),
        (
            '[tools]\nnetwork = "on"',
            "tools.network: expected one of 'off', 'allow', found a string (\"on\")",
        ),
        ("[tools]\nmax_processes = -1", "tools.max_processes: expected a number >= 0, found -1"),
        (
            '[tools]\nallow_hosts = ["pypi.org", "http://x.org"]',
            "tools.allow_hosts[1]: 'http://x.org' is not a host rule",
        ),
        (
            '[tools]\nunsafe_allow_local = ["localhost:80"]',
            "tools.unsafe_allow_local[0]: 'localhost:80': expected an IP address and a port",
        ),
        (
            '[tools.agent.coder]\nnetwrk = "allow"',
            "tools.agent.coder.netwrk: unknown key (did you mean 'network'?)",
        ),
        (
            '[tools.tool.exec_run]\nallow_hosts = ["a b"]',
            "tools.tool.exec_run.allow_hosts[0]: 'a b' is not a host rule",
        ),
        ("[tools]\nworkdir = 3", "tools.workdir: expected a path (a string), found an integer (3)"),
    ],
)
def test_a_bad_value_is_named_by_its_key_with_what_was_expected(tmp_path, text, expected):
    (found,) = problems(text, tmp_path)
    assert found.startswith(expected), found


AGENT = """---
name: coder
sandbox:
  network: {network}
  allow_hosts: [pypi.org]
  workdir: ../work
  max_processes: 8
---
Write code.
"""


def test_agent_md_sandbox_takes_the_keys_of_an_agent_table(tmp_path):
    origin = tmp_path / "agents" / "coder" / "AGENT.md"
    load = parse_agent_md(
        AGENT.format(network="allow"), origin=str(origin), source="user", expected_name="coder"
    )
    (definition,) = load.definitions
    assert definition.sandbox == SandboxOverride(
        workdir=origin.parent / "../work",
        network="allow",
        allow_hosts=("pypi.org",),
        max_processes=8,
    )


def test_a_bad_agent_md_sandbox_keeps_the_agent_out_naming_the_key_and_line(tmp_path):
    origin = str(tmp_path / "agents" / "coder" / "AGENT.md")
    load = parse_agent_md(AGENT.format(network="wide"), origin=origin, source="user")
    assert load.definitions == ()
    (problem,) = load.diagnostics
    assert (problem.level, problem.line) == ("error", 3)
    assert problem.message.startswith("sandbox.network: expected one of 'off', 'allow'")
