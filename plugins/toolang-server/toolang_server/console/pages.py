"""The web console (filled in below)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolang_core import RegisterRoute


def register(register_route: RegisterRoute) -> None:
    pass
