"""Errors about the execution store, each naming the store and what to do."""

from __future__ import annotations

from typing import ClassVar

from toolang_core.errors import ToolangError


class StoreError(ToolangError):
    """The execution store cannot be used as asked."""

    exit_code: ClassVar[int] = 4


class StoreMissing(StoreError):
    """A read-only command found no store (nothing has run yet)."""


class StoreCorrupt(StoreError):
    """The file is not a readable toolang store; it is reported, never overwritten."""


class StoreSchemaTooNew(StoreError):
    """The store was written by a newer toolang; this one refuses to touch it."""


class StoreNeedsMigration(StoreError):
    """A read-only command found a store with pending migrations (it never migrates)."""


class StoreBusy(StoreError):
    """Someone else holds the store: another runtime owns it (the embedded store allows
    one), or another process kept the file locked longer than we could wait.

    ``holder`` describes the runtime holding it (``pid N, run R``) when known."""

    def __init__(self, message: str, *, holder: str | None = None) -> None:
        super().__init__(message)
        self.holder = holder


class StoreReplaced(StoreError):
    """The store's database or log file was deleted or replaced under the running
    runtime: it stops instead of acknowledging into a file nobody will read."""


class StoreUnavailable(StoreError):
    """The store cannot be reached right now (a database server down or unreachable).

    Transient: the runtime logs it and tries again at its next poll.
    """


class SubmitRejected(ToolangError):
    """A turn request was refused by the thread's busy strategy or the group's overflow rule."""

    exit_code: ClassVar[int] = 5

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class NotThreadOwner(SubmitRejected):
    """A thread belongs to the owner of its first request, and someone else asked to use
    it (see :mod:`toolang_core.store.owners`). Every door answers it the same way: HTTP
    403 (:attr:`http_status`), CLI exit 5, the same message; which owner the thread
    belongs to is never said."""

    http_status: ClassVar[int] = 403

    def __init__(self, message: str) -> None:
        super().__init__(message, reason="wrong_owner")


class TurnNotFound(ToolangError):
    """No turn request has this id (or it belongs to another owner)."""

    exit_code: ClassVar[int] = 6


class RecordConflict(StoreError):
    """A record changed since it was read (optimistic concurrency)."""
