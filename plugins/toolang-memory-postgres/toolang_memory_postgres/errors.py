"""The plugin's failures: database errors turned into :class:`PostgresMemoryError` naming
the operation and the database, and the last one remembered for ``health``
(:class:`toolang_core.memory.kit.Failures`)."""

from __future__ import annotations

from collections.abc import Callable

import psycopg

from toolang_core import StoreError
from toolang_core.memory.kit import Failures
from toolang_memory_postgres.settings import NAME

__all__ = ["Failures", "PostgresMemoryError", "failures"]


class PostgresMemoryError(RuntimeError):
    """The database failed (unreachable, locked, refused); the message names the call."""


def failures(clock: Callable[[], float]) -> Failures:
    """The plugin's failures: psycopg's errors (and the plugin database's) become
    :class:`PostgresMemoryError`. ``where`` names the database in messages (its server
    and schema, the password masked) once it is open."""
    return Failures(
        plugin=NAME,
        where=f"the {NAME} database",
        database_errors=(psycopg.Error, StoreError),
        error=PostgresMemoryError,
        clock=clock,
    )
