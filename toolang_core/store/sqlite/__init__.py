"""The embedded SQLite execution store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolang_core.store.sqlite.store import SQLiteStore

__all__ = ["SQLiteStore"]


def __getattr__(name: str) -> Any:
    # Imported on first use, not with the package: every command imports the built-in
    # plugin module next door (``plugin.py``), few open the store (and sqlite-utils).
    if name == "SQLiteStore":
        from toolang_core.store.sqlite.store import SQLiteStore

        return SQLiteStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
