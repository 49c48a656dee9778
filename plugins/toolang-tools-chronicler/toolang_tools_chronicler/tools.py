"""The chronicler's tools. Entries are memory entries of the calling agent:
observations of kind ``observation``, reflections of kind ``reflection``, each keyed
by the call that made it (``observation:<turn>:<call>``) so a replayed call replaces
its own entry instead of adding another."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from toolang_core import Tool, ToolCallContext
from toolang_core.memory import MemoryItem, MemoryListRequest

About = Literal["conversation", "user"]
MAX_TEXT = 4_000
LIST_SCAN = 500
"""Newest entries looked through for one kind (memory lists every kind together)."""


class ChroniclerError(ValueError):
    """A chronicler tool cannot do what it was asked; the message says what to change."""


def _memory(context: ToolCallContext | None) -> Any:
    runtime = context.runtime if context is not None else None
    memory = runtime.memory if runtime is not None else None
    if memory is None:
        raise ChroniclerError("memory is off: set [memory] plugin in toolang.toml")
    return memory


def _owner(context: ToolCallContext) -> str | None:
    """The calling turn's owner: memory is kept per owner and agent."""
    return context.turn.request.owner if context.turn is not None else None


def _key(kind: str, context: ToolCallContext) -> str:
    return f"{kind}:{context.turn_id}:{context.call_id}"


async def _recent(context: ToolCallContext, kind: str, limit: int) -> list[MemoryItem]:
    items = await _memory(context).list_entries(
        MemoryListRequest(agent_id=context.agent, limit=LIST_SCAN, owner=_owner(context))
    )
    return [i for i in items if i.kind == kind][:limit]


def _shown(item: MemoryItem) -> dict[str, Any]:
    return {
        "text": item.text,
        "key": item.key,
        "thread_id": item.provenance.thread_id,
        "at": item.provenance.updated_at or item.provenance.created_at,
    }


async def observe_record(
    observation: str, about: About = "conversation", context: ToolCallContext | None = None
) -> dict[str, Any]:
    """Record an observation about the conversation or the user in your memory.

    :param observation: what you noticed, written so it stands on its own
    :param about: what it is about: "conversation" or "user"
    """
    assert context is not None
    text = observation.strip()
    if not text:
        raise ChroniclerError("observation is empty: write what you noticed")
    key = _key("observation", context)
    written = await _memory(context).save(
        context.agent,
        f"Observation about the {about}: {text}",
        key=key,
        kind="observation",
        thread_id=context.thread_id,
        turn_id=context.turn_id,
        origin="tool",
        owner=_owner(context),
    )
    return {"recorded": bool(written), "key": key}


async def observe_list(
    limit: int = 10, context: ToolCallContext | None = None
) -> list[dict[str, Any]]:
    """Your most recent observations, newest first.

    :param limit: at most this many (1 to 100)
    """
    assert context is not None
    return [_shown(item) for item in await _recent(context, "observation", limit)]


async def reflect_create(
    limit: int = 20, focus: str = "", context: ToolCallContext | None = None
) -> dict[str, Any]:
    """Summarise your recent observations into a reflection, written by your model and
    kept in your memory.

    :param limit: how many of the newest observations to reflect on (1 to the plugin's max)
    :param focus: an optional theme to reflect on, e.g. "the user's preferences"
    """
    assert context is not None
    from toolang_tools_chronicler import NAME, ChroniclerSettings

    runtime = context.runtime
    settings = runtime.settings.get(NAME) if runtime is not None else None
    if not isinstance(settings, ChroniclerSettings):
        settings = ChroniclerSettings()
    if limit > settings.max_observations:
        raise ChroniclerError(
            f"limit: expected at most max_observations ({settings.max_observations}), found {limit}"
        )
    observations = await _recent(context, "observation", limit)
    if not observations:
        raise ChroniclerError("no observations to reflect on yet: record some with observe_record")
    if context.turn is None:
        raise ChroniclerError("reflect_create needs the turn it is called from (its model)")
    listing = "\n".join(f"- {item.text}" for item in reversed(observations))
    theme = f"\nFocus on: {focus.strip()}" if focus.strip() else ""
    reflection = (
        await context.turn.complete(
            context, settings.instruction, f"Observations:\n{listing}{theme}"
        )
    ).strip()
    if not reflection:
        raise ChroniclerError("the model wrote an empty reflection; nothing was kept")
    key = _key("reflection", context)
    await _memory(context).save(
        context.agent,
        f"Reflection: {reflection[:MAX_TEXT]}",
        key=key,
        kind="reflection",
        thread_id=context.thread_id,
        turn_id=context.turn_id,
        origin="tool",
        owner=_owner(context),
    )
    return {"reflection": reflection[:MAX_TEXT], "observations": len(observations), "key": key}


async def reflect_list(
    limit: int = 5, context: ToolCallContext | None = None
) -> list[dict[str, Any]]:
    """Your most recent reflections, newest first.

    :param limit: at most this many (1 to 50)
    """
    assert context is not None
    return [_shown(item) for item in await _recent(context, "reflection", limit)]


def constrained(function: Callable[..., Any], **properties: Mapping[str, Any]) -> Tool:
    """A memory tool (offered only while memory is on) with extra JSON Schema keywords."""
    return Tool.from_function(function, requires=("memory",)).constrain(**properties)


TOOLS = (
    constrained(
        observe_record,
        observation={"minLength": 1, "maxLength": MAX_TEXT, "pattern": r"\S"},
    ),
    constrained(observe_list, limit={"minimum": 1, "maximum": 100}),
    constrained(reflect_create, limit={"minimum": 1, "maximum": 500}, focus={"maxLength": 300}),
    constrained(reflect_list, limit={"minimum": 1, "maximum": 50}),
)
