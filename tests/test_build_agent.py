"""``toolang_build_agent`` (issue #37 item 11): a plugin builds the agent for one request —
a tenant's instruction and fewer tools — through a real runtime with a scripted model,
and never beyond the registry's limits: a widened scope, a renamed agent, a raised step
limit or a builder that raises fails the turn, naming the plugin."""

from __future__ import annotations

import asyncio

import attrs
import pytest
from bump_tools import BUMPED, BumpTools, clear_bumps  # noqa: F401 (a fixture)

from toolang_core import Tool, hookimpl
from toolang_core.config import ToolangConfig
from toolang_core.config.model import ModelsConfig, RuntimeConfig
from toolang_core.runtime import Runtime
from toolang_core.store.types import NewTurnRequest, TurnStatus
from toolang_core.testing.models import ScriptedModel, text


def tools() -> BumpTools:
    """``bump`` and ``fs_secret``: two tools of the default agent."""
    return BumpTools(
        Tool(
            name="fs_secret",
            description="",
            parameters={"type": "object"},
            function=lambda **kw: "ok",
            blocking=False,
        )
    )


class Tenants:
    """Builds the agent per owner: ``acme`` gets its own instruction and ``bump`` only;
    the other owners try what a builder may not do."""

    def __init__(self) -> None:
        self.seen: list[tuple[str | None, str]] = []

    @hookimpl
    async def toolang_build_agent(self, definition, request, runtime):
        self.seen.append((request.owner, definition.name))
        owner = request.owner
        if owner == "acme":
            return attrs.evolve(
                definition, instruction="You answer for ACME only.", tools=("bump",)
            )
        if owner == "widen":
            return attrs.evolve(definition, tools=("bump", "not_a_tool_of_yours"))
        if owner == "rename":
            return attrs.evolve(definition, name="someone_else")
        if owner == "steps":
            return attrs.evolve(definition, max_steps=10_000)
        if owner == "broken":
            raise RuntimeError("tenant table unreachable")
        return None


def make(tmp_path, model, builder):
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.05, shutdown_grace_seconds=0),
        models=ModelsConfig(default="scripted"),
    )
    plugins = [("scripted", model.plugin()), ("tools", tools()), ("tenants", builder)]
    return Runtime.with_plugins(config, plugins, env={})


def run(runtime, owner):
    inbox = runtime.open_inbox()
    request = NewTurnRequest(source="chat", thread_id=f"cli:{owner}", input="hi", owner=owner)
    turn_id = inbox.submit(request).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    try:
        return inbox.get(turn_id), inbox.store.steps(turn_id)
    finally:
        inbox.store.close()


def test_a_tenant_gets_its_own_instruction_and_fewer_tools(tmp_path):
    model = ScriptedModel([text("for acme"), text("for bob")])
    builder = Tenants()
    runtime = make(tmp_path, model, builder)
    acme, acme_steps = run(runtime, "acme")
    bob, bob_steps = run(runtime, "bob")
    assert (acme.status, acme.output, bob.status) == (
        TurnStatus.COMPLETED,
        "for acme",
        TurnStatus.COMPLETED,
    )
    acme_call, bob_call = model.calls
    assert "You answer for ACME only." in acme_call.messages[0].content
    assert "ACME" not in bob_call.messages[0].content
    assert [t.name for t in acme_call.tools] == ["bump"]
    assert {"bump", "fs_secret"} <= {t.name for t in bob_call.tools}
    assert acme_steps[0].data["built_by"] == ["tenants"]
    assert acme_steps[0].data["tools"] == ["bump"]
    assert "built_by" not in bob_steps[0].data
    assert [owner for owner, _ in builder.seen] == ["acme", "bob"]


@pytest.mark.parametrize(
    ("owner", "said"),
    [
        ("widen", "gave agent 'assistant' tools outside its scope"),
        ("rename", "changed name of agent 'assistant'"),
        ("steps", "raised max_steps of agent 'assistant' from 20 to 10000"),
        ("broken", "plugin 'tenants' failed in toolang_build_agent"),
    ],
)
def test_a_builder_beyond_the_registrys_limits_fails_the_turn(tmp_path, owner, said):
    model = ScriptedModel([])
    turn, _ = run(make(tmp_path, model, Tenants()), owner)
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "agent_error")
    assert said in turn.error
    assert "tenants" in turn.error or owner == "broken"
    assert model.calls == []  # refused before any model call
