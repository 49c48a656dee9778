"""toolang-hook-frozen: a toolang SecurityFilter that blocks calls mentioning a word."""

from __future__ import annotations

import attrs

from toolang_core import Block, RegisterSettings, ToolCall, ToolCallContext, hookimpl


@attrs.frozen
class Settings:
    """[plugins.hook-frozen] in toolang.toml."""

    blocked_word: str = "forbidden"


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(Settings)


@hookimpl
def toolang_filter_tool_call(call: ToolCall, ctx: ToolCallContext) -> Block | None:
    settings = ctx.runtime.settings.get("hook-frozen") if ctx.runtime else None
    word = (settings or Settings()).blocked_word
    if any(word in str(value) for value in call.params.values()):
        return Block(f"parameters mention {word!r}")
    return None
