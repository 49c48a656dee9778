"""The embedded SQLite execution store."""

from toolang_core.store.sqlite.store import SQLiteStore

__all__ = ["SQLiteStore"]
