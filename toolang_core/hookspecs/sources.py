"""Turn-source hooks: loops that place turn requests into the inbox."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolang_core.markers import hookspec

if TYPE_CHECKING:
    from toolang_core.plugins.registrars import RegisterFactory


@hookspec
def toolang_register_turn_sources(register: RegisterFactory) -> None:
    """Offer turn sources.

    Call ``register(name, factory)``. For every source enabled in the configuration the
    runtime calls ``factory(context)`` and runs the returned object's loop, which may
    only submit turn requests to the inbox — never execute work itself. Return nothing.
    """
