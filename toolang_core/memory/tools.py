"""The per-agent memory tools: ``memory_agent_save``, ``memory_agent_recall``,
``memory_agent_forget``.

A built-in plugin (registered by every host, offered to agents only while a memory
plugin is configured). Each tool works on the calling agent's own memory — the scope
comes from the call's context, never from a parameter, so an agent cannot read or
delete another agent's entries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolang_core.markers import hookimpl
from toolang_core.memory.service import MemoryService, MemoryUnavailable
from toolang_core.memory.types import MemoryForget, MemoryLimits
from toolang_core.tools.types import Tool, ToolCallContext  # the hints make the schema

if TYPE_CHECKING:
    from toolang_core.plugins.registrars import RegisterTool

MAX_KEY = 200
MAX_CONTENT = 20_000


def _memory(context: ToolCallContext | None) -> MemoryService:
    memory = context.runtime.memory if context is not None else None
    if memory is None:
        raise MemoryUnavailable("memory is off: set [memory] plugin in toolang.toml")
    return memory


def _owner(context: ToolCallContext) -> str | None:
    """The owner of the calling turn: an agent's memory is its owner's, never shared."""
    return context.turn.request.owner if context.turn is not None else None


def _key(key: str) -> str:
    key = key.strip()
    if not key or len(key) > MAX_KEY:
        raise ValueError(f"key must be 1 to {MAX_KEY} characters, got {len(key)}")
    return key


async def memory_agent_save(
    key: str, content: str, context: ToolCallContext | None = None
) -> dict[str, Any]:
    """Remember CONTENT under KEY for yourself (saving the same key again replaces it).

    :param key: a short name for what you remember, e.g. "user.timezone"
    :param content: what to remember
    """
    if not content.strip() or len(content) > MAX_CONTENT:
        raise ValueError(f"content must be 1 to {MAX_CONTENT} characters, got {len(content)}")
    assert context is not None
    written = await _memory(context).save(
        context.agent,
        content,
        key=_key(key),
        kind="fact",
        thread_id=context.thread_id,
        turn_id=context.turn_id,
        origin="tool",
        owner=_owner(context),
    )
    return {"saved": bool(written), "key": key.strip()}


async def memory_agent_recall(
    query: str, limit: int = 5, context: ToolCallContext | None = None
) -> list[dict[str, Any]]:
    """Look up what you remember about QUERY, best matches first.

    :param query: words to look for
    :param limit: at most this many results (1 to 20)
    """
    assert context is not None
    memory = _memory(context)
    limits = MemoryLimits(max_items=max(1, min(limit, 20)), max_chars=memory.config.max_chars)
    result = await memory.search(context.agent, query, limits=limits, owner=_owner(context))
    found: list[dict[str, Any]] = [{"fact": f.text, "key": f.key} for f in result.facts]
    found += [
        {"text": item.text, "key": item.key, "score": round(item.score, 4)} for item in result.items
    ]
    return found


async def memory_agent_forget(key: str, context: ToolCallContext | None = None) -> dict[str, Any]:
    """Forget what you saved under KEY.

    :param key: the key you saved it under
    """
    assert context is not None
    forgotten = await _memory(context).forget(
        MemoryForget(agent_id=context.agent, keys=(_key(key),), owner=_owner(context))
    )
    return {"forgotten": forgotten, "key": key.strip()}


@hookimpl
def toolang_register_tools(register: RegisterTool) -> None:
    for function in (memory_agent_save, memory_agent_recall, memory_agent_forget):
        # Keyed writes (saving a key again replaces it) and a read: safe to run again.
        register(Tool.from_function(function, requires=("memory",), idempotent=True))
