"""What every vault tool needs: its runtime and the caller's scope."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolang_core import tool_runtime
from toolang_tools_vault.errors import VaultError
from toolang_tools_vault.vault import Scope

if TYPE_CHECKING:
    from toolang_core import RuntimeView, ToolCallContext


def runtime_of(context: ToolCallContext | None) -> RuntimeView:
    return tool_runtime(context, VaultError)


def scope_of(context: ToolCallContext | None) -> Scope:
    """Whose items the call may touch: the turn's owner and the calling agent, never a
    parameter."""
    turn = context.turn if context is not None else None
    if context is None or turn is None:
        raise VaultError("this tool needs the turn it is called from (its owner)")
    return Scope(turn.owner, context.agent)
