"""Runtimes for delegation tests: hand-made agents (a router, specialists, one that
never finishes), a few tools (``lookup_*``, ``draft_text``, a ``hang`` a test releases),
one scripted model playing every agent (:class:`~toolang_core.testing.cast.Cast`), and
chat turns served until idle. Used by the core's delegation and task-run tests and by
the plugins built on delegation (toolang-agent-pool, toolang-teams)::

    runtime = make_runtime(tmp_path, cast, agents=(LEAD, W1), plugins=[("teams", teams)])
    turn = run_turn(runtime, "go")
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs

from toolang_core.agents.types import AgentDefinition
from toolang_core.config import ToolangConfig
from toolang_core.config.model import (
    AgentsConfig,
    DelegationConfig,
    GroupConfig,
    ModelsConfig,
    RuntimeConfig,
    SchedulerConfig,
    ToolsConfig,
)
from toolang_core.markers import hookimpl
from toolang_core.runtime import Runtime
from toolang_core.store.types import NewTurnRequest
from toolang_core.testing.agents import AgentsPlugin
from toolang_core.testing.cast import DELEGATION_TOOLS, Cast
from toolang_core.testing.models import text, tool_call
from toolang_core.tools.types import Tool, ToolCallContext


class Agents(AgentsPlugin):
    """An agent source plugin with hand-made definitions (label ``builtin``)."""

    label = "builtin"


CONTROL = DELEGATION_TOOLS

ROUTER = AgentDefinition(name="assistant", prefixes=CONTROL, description="routes work")
RESEARCHER = AgentDefinition(name="researcher", prefixes=("lookup_",), description="finds")
WRITER = AgentDefinition(name="writer", prefixes=("draft_",), description="writes")
SLOWPOKE = AgentDefinition(name="slowpoke", prefixes=("hang",), description="never done")
AUTOMATOR = AgentDefinition(name="automator", tools=CONTROL, description="nests")
DEFAULT_AGENTS = (ROUTER, RESEARCHER, WRITER, SLOWPOKE, AUTOMATOR)


def lookup_fact(topic: str) -> str:
    """Look a topic up.

    :param topic: what to look up
    """
    return f"fact about {topic}"


def lookup_source(topic: str) -> str:
    """Find a source for a topic.

    :param topic: what to find a source for
    """
    return f"source for {topic}"


def draft_text(text: str) -> str:
    """Draft a text.

    :param text: what to draft
    """
    return f"draft: {text}"


async def hang(label: str, context: ToolCallContext | None = None) -> str:
    """Wait until the test releases LABEL (or the call is cancelled).

    :param label: the gate to wait for
    """
    assert context is not None
    assert context.runtime is not None
    gates: dict[str, asyncio.Event] = context.runtime.plugin_state("gates", dict)
    started: dict[str, asyncio.Event] = context.runtime.plugin_state("started", dict)
    started.setdefault(label, asyncio.Event()).set()
    await gates.setdefault(label, asyncio.Event()).wait()
    return f"released {label}"


class Tools:
    """A plugin registering ``lookup_fact``, ``lookup_source``, ``draft_text`` (non-
    blocking) and ``hang``."""

    @staticmethod
    @hookimpl
    def toolang_register_tools(register: Any) -> None:
        for function in (lookup_fact, lookup_source, draft_text):
            register(Tool.from_function(function, blocking=False))
        register(Tool.from_function(hang))


def _gate(runtime: Runtime, kind: str, label: str) -> asyncio.Event:
    gates: dict[str, asyncio.Event] = runtime.plugin_state(kind, dict)
    return gates.setdefault(label, asyncio.Event())


def release(runtime: Runtime, label: str) -> None:
    """Let the ``hang`` call waiting for ``label`` (or the next one) return."""
    _gate(runtime, "gates", label).set()


async def started(runtime: Runtime, label: str, timeout: float = 60) -> None:
    """Wait until a ``hang`` call for ``label`` has begun."""
    await asyncio.wait_for(_gate(runtime, "started", label).wait(), timeout)


def make_config(
    tmp_path: Path,
    *,
    delegation: DelegationConfig | None = None,
    agents_config: AgentsConfig | None = None,
    task_max_running: int | None = None,
    task_max_queued: int | None = None,
    max_running: int = 8,
    tool_timeout: float = 60.0,
    executor: str = "agent",
) -> ToolangConfig:
    """A configuration for delegation tests: the agent executor, a ``task`` group with
    the given caps, the scripted model as default, quick polling."""
    groups = {"task": GroupConfig(max_running=task_max_running, max_queued=task_max_queued)}
    return ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor=executor, poll_seconds=0.05, shutdown_grace_seconds=0),
        scheduler=SchedulerConfig(max_running=max_running, groups=groups),
        models=ModelsConfig(default="scripted"),
        agents=agents_config or AgentsConfig(),
        delegation=delegation or DelegationConfig(),
        tools=ToolsConfig(timeout_seconds=tool_timeout),
    )


def make_runtime(
    tmp_path: Path,
    cast: Cast | None = None,
    *,
    agents: Iterable[AgentDefinition] = DEFAULT_AGENTS,
    plugins: Iterable[tuple[str, object]] = (),
    **config: Any,
) -> Runtime:
    """A runtime of :func:`make_config` (``**config``) with :class:`Tools`, ``agents``
    (:data:`DEFAULT_AGENTS` unless told), ``cast``'s model when given, and ``plugins``."""
    chosen = [("tools", Tools()), ("agents", Agents(*agents)), *plugins]
    if cast is not None:
        chosen.insert(0, ("scripted", cast.plugin()))
    return Runtime.with_plugins(make_config(tmp_path, **config), chosen, env={})


def with_delegation(**changes: Any) -> DelegationConfig:
    """The default ``[delegation]`` settings with ``changes``."""
    return attrs.evolve(DelegationConfig(), **changes)


def asking_cast(agent: str = "researcher", answer: str = "the moon") -> Cast:
    """A :class:`Cast` where ``assistant`` asks ``agent`` (``ask_agent``) "tides?", is
    told ``answer`` and says "ok"."""
    return Cast(
        assistant=[
            tool_call("ask_agent", {"agent": agent, "request": "tides?"}),
            text("ok"),
        ],
        **{agent: [text(answer)]},
    )


def run_turn(runtime: Runtime, text_in: str = "go", thread: str = "chat:t", **kw: Any) -> Any:
    """Submit one chat turn and serve until nothing is left to do; the finished turn."""
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id=thread, input=text_in, **kw)).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    try:
        return inbox.get(turn_id)
    finally:
        inbox.store.close()


def results(cast: Cast, agent: str = "assistant") -> list[dict[str, Any]]:
    """Every tool result ``agent``'s model was shown, in order."""
    return [
        json.loads(r.messages[-1].content)
        for r in cast.requests_of(agent)
        if r.messages[-1].role == "tool"
    ]


def outputs(cast: Cast, agent: str = "assistant") -> list[Any]:
    """Every tool output ``agent``'s model was shown (a failed call's error), in order."""
    return [r.get("output") if r["ok"] else r["error"] for r in results(cast, agent)]
