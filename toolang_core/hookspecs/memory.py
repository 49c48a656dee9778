"""Memory hooks: memory plugins the runtime recalls from and writes to."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolang_core.hookspecs.rules import REGISTRATION, calling_rule
from toolang_core.markers import hookspec

if TYPE_CHECKING:
    from toolang_core.plugins.registrars import RegisterFactory


@calling_rule(REGISTRATION)
@hookspec
def toolang_register_memory(register: RegisterFactory) -> None:
    """Offer memory plugins.

    Call ``register(name, factory)``. ``[memory] plugin = "<name>"`` selects exactly
    one; its ``factory(context)`` returns an object with ``recall``, ``remember``,
    ``forget`` and ``health``. With no memory plugin configured, memory is off.
    Return nothing.
    """
