"""Tool hooks: the tools agents may call."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolang_core.hookspecs.rules import REGISTRATION, calling_rule
from toolang_core.markers import hookspec

if TYPE_CHECKING:
    from toolang_core.plugins.registrars import RegisterTool


@calling_rule(REGISTRATION)
@hookspec
def toolang_register_tools(register: RegisterTool) -> None:
    """Offer tools.

    Call ``register(tool)`` with a :class:`~toolang_core.tools.Tool` for each tool.
    Tool names are global: a name another plugin already registered is reported
    against this plugin and skipped. Return nothing.
    """
