"""What a tool needs from its call's context, or a clear error saying it is missing.

Tools that keep data per owner (a role's tools: the librarian's documents, the vault's
secrets, the ontology) need the runtime the call runs in and the owner of the turn it
belongs to. A call made outside a turn — by hand in a test, or by a plugin that builds
its own context — has neither; these say so in the error the model or caller is shown,
as the tool's own error type when it passes one::

    owner = tool_owner(context, VaultError)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolang_core.runtime_view import RuntimeView
    from toolang_core.tools.types import ToolCallContext


class ToolContextError(ValueError):
    """A tool was called without the runtime or turn it needs."""


def tool_runtime(
    context: ToolCallContext | None, error: Callable[[str], Exception] = ToolContextError
) -> RuntimeView:
    """The runtime ``context``'s call runs in.

    :raises ToolContextError: (or ``error``) outside a runtime.
    """
    runtime = context.runtime if context is not None else None
    if runtime is None:
        raise error("this tool runs only inside a turn of a runtime")
    return runtime


def tool_owner(
    context: ToolCallContext | None, error: Callable[[str], Exception] = ToolContextError
) -> str:
    """Whose data ``context``'s call may see: the owner of the turn it belongs to.

    :raises ToolContextError: (or ``error``) outside a turn.
    """
    turn = context.turn if context is not None else None
    if turn is None:
        raise error("this tool needs the turn it is called from (its owner)")
    return turn.owner
