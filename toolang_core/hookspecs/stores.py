"""Store hooks: execution-store backends."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolang_core.hookspecs.rules import REGISTRATION, calling_rule
from toolang_core.markers import hookspec

if TYPE_CHECKING:
    from toolang_core.plugins.registrars import RegisterFactory


@calling_rule(REGISTRATION)
@hookspec
def toolang_register_stores(register: RegisterFactory) -> None:
    """Offer execution-store backends.

    Call ``register(name, factory)`` once per backend. ``[store] backend = "<name>"``
    selects one; its ``factory(context)`` is then called once per runtime and returns
    an object implementing the execution-store contract. Return nothing.
    """
