"""What the sandbox of a call's program is (toolang_core.sandbox.policy): whose working
directory, what is hidden, and which settings win — [tools], AGENT.md ``sandbox:``,
[tools.agent.<name>], [tools.tool.<name>]."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from toolang_core import AgentDefinition, AgentLoad, hookimpl
from toolang_core.sandbox.policy import (
    SandboxError,
    owner_dir_name,
    owner_key,
    policy_for,
    tool_workdir,
)
from toolang_core.sandbox.rules import HostRule, ProcessLimits


def turn_of(owner: str | None, sender: str = "owner") -> SimpleNamespace:
    """A running turn as a tool's context carries it (only its request is read)."""
    return SimpleNamespace(request=SimpleNamespace(owner=owner, sender=sender))


@pytest.mark.parametrize(
    ("owner", "sender", "key"),
    [
        (None, "owner", None),  # the command line, an HTTP API without tokens
        (None, "self", None),  # chores and wills
        (None, "http:local", None),  # the HTTP API without tokens
        ("http:local", "http:local", None),  # … and the task runs it spawns
        ("ada", "http:ada", "ada"),  # ada through her token
        ("owner", "owner", None),  # a task run of the operator's turn (owner = its sender)
        ("ada", "ada", "ada"),
        (None, "bob", "bob"),  # a requester's task, sent as bob
    ],
)
def test_the_operator_works_in_the_root_and_everyone_else_in_their_own(owner, sender, key):
    assert owner_key(SimpleNamespace(turn=turn_of(owner, sender))) == key


@pytest.mark.parametrize("owner", ["../x", "a/b", ".hidden", "h-1234", "x" * 101, "é"])
def test_an_owner_name_that_is_no_safe_file_name_becomes_a_hash(owner):
    name = owner_dir_name(owner)
    assert name.startswith("h-") and len(name) == 34 and "/" not in name
    assert owner_dir_name(owner) == name  # stable


def test_each_owner_gets_a_directory_under_the_roots_owners(toolang_runtime, toolang_call_context):
    runtime = toolang_runtime()
    root = runtime.config.base_dir / "workspace"
    ada = tool_workdir(toolang_call_context(runtime=runtime, turn=turn_of("ada", "ada")))
    operator = tool_workdir(toolang_call_context(runtime=runtime, turn=turn_of(None)))
    assert (ada, operator) == (root.resolve() / "owners" / "ada", root.resolve())
    assert ada.is_dir() and (root / "owners").is_dir()


def test_the_runtimes_state_other_owners_and_the_users_secrets_are_hidden(
    toolang_runtime, toolang_call_context
):
    runtime = toolang_runtime()
    config = runtime.config
    config.home.mkdir()
    for path in (config.store_path, Path(f"{config.store_path}-wal")):
        path.write_text("")
    call = toolang_call_context(runtime=runtime, turn=turn_of("ada", "ada"))
    policy = policy_for(call)
    root = (config.base_dir / "workspace").resolve()
    assert policy.workdir == root / "owners" / "ada"
    hidden = {entry.path for entry in policy.hidden}
    for path in (
        config.home,
        config.source,
        config.store_path,
        Path(f"{config.store_path}-wal"),
        root,  # the operator's files and, under it, every other owner's
        Path("/run"),
        *(p for p in (Path.home() / ".ssh", Path.home() / ".config") if p.exists()),
    ):
        assert Path(path).resolve() in hidden, path
    assert policy.workdir not in hidden
    assert {e.path for e in policy.hidden if not e.is_dir} >= {config.source.resolve()}


def test_the_operators_program_sees_the_root_but_not_the_owners_under_it(
    toolang_runtime, toolang_call_context
):
    runtime = toolang_runtime()
    policy = policy_for(toolang_call_context(runtime=runtime, turn=turn_of(None)))
    root = (runtime.config.base_dir / "workspace").resolve()
    assert policy.workdir == root
    hidden = {entry.path for entry in policy.hidden}
    assert root / "owners" in hidden and root not in hidden


def test_defaults_are_required_no_network_and_the_limits_of_tools(
    toolang_runtime, toolang_call_context
):
    policy = policy_for(toolang_call_context(runtime=toolang_runtime()))
    assert (policy.mode, policy.network, policy.allow_hosts) == ("required", "off", ())
    assert policy.limits == ProcessLimits(600, 8192, 4096, 512)


class Agents:
    """An agent source with one AGENT.md-like definition carrying ``sandbox:``."""

    def __init__(self, sandbox: object) -> None:
        self.sandbox = sandbox

    @hookimpl
    def toolang_agent_sources(self) -> object:
        sandbox = self.sandbox

        class Source:
            label = "user"
            name = "test-agents"

            def load(self, context: object) -> AgentLoad:
                return AgentLoad((AgentDefinition(name="coder", sandbox=sandbox),))

        return Source()


def test_the_narrowest_setting_wins_tool_over_agent_over_agent_md_over_tools(
    toolang_runtime, toolang_call_context, tmp_path
):
    from toolang_core.config.sandbox import SandboxOverride

    agent_md = SandboxOverride(
        network="allow", allow_hosts=("md.example",), cpu_seconds=1, workdir=tmp_path / "md"
    )
    runtime = toolang_runtime(
        """
[tools]
allow_hosts = ["tools.example"]
max_processes = 40

[tools.agent.coder]
allow_hosts = ["agent.example"]
file_size_mb = 2

[tools.tool.exec_run]
max_processes = 7
""",
        plugins={"agents": Agents(agent_md)},
    )
    policy = policy_for(toolang_call_context("exec_run", runtime=runtime, agent="coder"))
    assert policy.network == "allow"  # AGENT.md: nothing narrower sets it
    assert policy.allow_hosts == (HostRule("agent.example"),)  # [tools.agent.coder]
    assert policy.limits == ProcessLimits(
        cpu_seconds=1, address_space_mb=8192, file_size_mb=2, max_processes=7
    )
    assert policy.workdir == (tmp_path / "md").resolve()
    other = policy_for(toolang_call_context("fs_read", runtime=runtime, agent="other"))
    assert (other.network, other.allow_hosts) == ("off", (HostRule("tools.example"),))
    assert other.limits.max_processes == 40
    assert (tmp_path / "md").resolve() in {e.path for e in other.hidden}  # another agent's


def test_a_workdir_of_slash_is_refused_before_anything_is_made_there(
    toolang_runtime, toolang_call_context
):
    runtime = toolang_runtime('[tools]\nworkdir = "/"\n')
    made = Path("/owners").exists()
    with pytest.raises(SandboxError, match="every file would be writable"):
        policy_for(toolang_call_context(runtime=runtime))
    with pytest.raises(SandboxError):
        tool_workdir(toolang_call_context(runtime=runtime, turn=turn_of("ada", "ada")))
    assert Path("/owners").exists() is made
