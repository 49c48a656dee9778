"""A remote agent a local agent shadows (same name) is said wherever a person looks:
``toolang agents list`` (a ``shadowed`` row and a warning), ``toolang doctor`` (a
failure naming both) and the log of ``toolang run`` at start — the name reaches the
local agent, never the remote one."""

from __future__ import annotations

import json

import pytest

from toolang_core import AgentDefinition, AgentHealth, AgentLoad
from toolang_core.agents.registry import AgentRegistry, SourceInput
from toolang_core.testing.cli import assert_no_traceback, run_toolang

URL = "http://127.0.0.1:9/a2a/reviewer"
FIXTURE = f"""
from toolang_core import AgentDefinition, AgentHealth, AgentLoad, hookimpl


class Local:
    label = "embedded"
    name = "defaults"

    def load(self, context):
        return AgentLoad(definitions=(
            AgentDefinition(name="reviewer", description="local", origin="defaults/reviewer"),
        ))


class Remote:
    label = "remote"
    name = "a2a"

    def load(self, context):
        return AgentLoad(
            definitions=(
                AgentDefinition(name="reviewer", origin="{URL}", model="a2a/{URL}"),
                AgentDefinition(name="far", origin="http://127.0.0.1:9/a2a/far"),
            ),
            health={{
                "reviewer": AgentHealth("ok", "card read", 1.0),
                "far": AgentHealth("ok", "card read", 1.0),
            }},
        )


@hookimpl
def toolang_agent_sources():
    return [Local(), Remote()]
"""
CONFIG = """
[runtime]
poll_seconds = 0.05
shutdown_grace_seconds = 0
"""
ENV = {"TOOLANG_LOAD_PLUGINS": "shadow-agents"}
SAID = (
    f"remote agent 'reviewer' ({URL}) is shadowed by the embedded agent of the same name "
    "(defaults/reviewer): work for 'reviewer' is answered locally, never by the remote agent"
)


@pytest.fixture
def cli(tmp_path, toolang_distribution):
    toolang_distribution(
        "toolang-shadow-agents",
        entry_points={"toolang": {"shadow-agents": "shadowfix"}},
        modules={"shadowfix": FIXTURE},
    )
    (tmp_path / "toolang.toml").write_text(CONFIG)

    def run(*args: str):
        result = run_toolang(*args, cwd=tmp_path, env=ENV, pythonpath=[toolang_distribution.root])
        assert_no_traceback(result)
        return result

    return run


def test_the_registry_keeps_the_shadowed_remote_agent_and_who_shadows_it():
    local = AgentDefinition(name="reviewer", origin="defaults/reviewer")
    remote = AgentDefinition(name="reviewer", origin=URL)
    health = AgentHealth("ok", "card read", 1.0)
    registry = AgentRegistry.merge(
        [
            SourceInput(
                "a2a", "remote", "agents-remote", AgentLoad((remote,), health={"reviewer": health})
            ),
            SourceInput("defaults", "embedded", "agents-embedded", AgentLoad((local,))),
        ]
    )
    assert registry.get("reviewer").source == "embedded"
    (hidden,) = registry.shadowed
    assert (hidden.remote.origin, hidden.by.source, hidden.health) == (URL, "embedded", health)
    assert hidden.message.startswith(SAID)
    assert hidden.diagnostic in registry.errors


def test_agents_list_shows_the_shadowed_remote_agent_after_the_local_one_and_warns(cli):
    result = cli("agents", "list")
    assert result.returncode == 0
    rows = [line.split() for line in result.stdout.splitlines()[1:]]
    names = [(row[0], row[1], row[2]) for row in rows]
    at = names.index(("reviewer", "embedded", "active"))
    assert names[at + 1] == ("reviewer", "remote", "shadowed")
    assert rows[at + 1][3:5] == ["ok", URL]
    assert ("far", "remote", "active") in names
    assert f"warning: {SAID}" in result.stderr
    assert "not loaded" not in result.stderr  # said once, as what it is


def test_agents_list_json_names_what_shadows_it(cli):
    rows = json.loads(cli("agents", "list", "--json").stdout)
    (hidden,) = [r for r in rows if r["status"] == "shadowed"]
    assert (hidden["name"], hidden["source"], hidden["origin"]) == ("reviewer", "remote", URL)
    assert hidden["shadowed_by"] == {"source": "embedded", "origin": "defaults/reviewer"}


def test_doctor_fails_naming_the_shadowed_remote_agent(cli):
    result = cli("doctor")
    assert result.returncode == 1
    (line,) = [line for line in result.stdout.splitlines() if "is shadowed by" in line]
    assert line.split()[:2] == ["FAIL", "agents"]
    assert SAID in line
    assert "agent definitions: 1 not loaded" not in result.stdout


def test_toolang_run_warns_at_start(cli):
    result = cli("run", "--no-sources", "--until-idle")
    assert result.returncode == 0, result.stderr
    (line,) = [line for line in result.stderr.splitlines() if "agents.remote_shadowed" in line]
    assert "warning" in line and "agent=reviewer" in line and URL in line
    assert result.stderr.index("agents.remote_shadowed") < result.stderr.index("runtime.started")
