"""The plugin's database as :class:`~.memory.PostgresMemory` uses it: opened on first use
(and prepared for vectors when semantic recall is on), its failures recorded for
``health``, and its write transactions bounded by ``lock_timeout_seconds``.

Pending use counts are written here too, in a transaction of their own
(:func:`Connection.flush`): the bound of the write-behind (:mod:`.uses`) and ``close``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress

from toolang_core import PluginDatabase
from toolang_core.memory import kit
from toolang_core.models import EmbeddingModel
from toolang_memory_postgres import semantic, uses
from toolang_memory_postgres.counts import ScopeCounts
from toolang_memory_postgres.errors import PostgresMemoryError, failures
from toolang_memory_postgres.settings import MemoryPostgresSettings


class Connection:
    """The plugin's database (``open_database`` called on first use and again after
    :meth:`close`), the embedding model and where its vectors go, and the failures."""

    def __init__(
        self,
        open_database: Callable[[], PluginDatabase],
        settings: MemoryPostgresSettings,
        *,
        clock: Callable[[], float],
        embedder: EmbeddingModel | None,
    ) -> None:
        self.settings = settings
        self.clock = clock
        self.embedder = embedder
        self.vectors: semantic.Vectors | None = None
        self.failures = failures(clock)
        self.counts = ScopeCounts(clock)  # recall's count of a scope's entries, kept
        self.guard = self.failures.guard
        self._open = open_database
        self._db: PluginDatabase | None = None
        self._db_lock = threading.Lock()

    def database(self) -> PluginDatabase:
        """The database, opened (and its vectors prepared) on first use."""
        with self._db_lock:
            if self._db is None:
                db = self._open()
                self.failures.where = db.where
                if self.embedder is not None:
                    try:
                        self.vectors = semantic.prepare(
                            db,
                            self.embedder,
                            str(self.settings.embedding_model),
                            lock_timeout_ms=self._lock_timeout_ms(),
                        )
                    except BaseException:
                        db.close()
                        raise
                self._db = db
            return self._db

    @contextmanager
    def transaction(self, db: PluginDatabase) -> Iterator[None]:
        """A transaction of ``db`` that waits at most ``lock_timeout_seconds`` for a lock."""
        with db.transaction():
            db.execute(
                "SELECT set_config('lock_timeout', ?, true)", [f"{self._lock_timeout_ms()}ms"]
            )
            yield

    def flush(self, operation: str) -> Callable[[Mapping[int, tuple[int, float]]], None]:
        """Commit pending uses (taken), for ``operation``, in a transaction of their own."""

        def flush(taken: Mapping[int, tuple[int, float]]) -> None:
            with self.guard(operation):
                db = self.database()
                with self.transaction(db):
                    uses.flush(db, taken)

        return flush

    def flush_if_full(self, pending: kit.PendingUses) -> None:
        """Commit the pending uses once ``pending_uses`` entries wait (the bound of the
        write-behind), in a transaction of their own; on failure they are kept for the
        next recall or write."""
        if len(pending) < self.settings.pending_uses:
            return
        with suppress(PostgresMemoryError), pending.taken() as taken:
            self.flush("recall")(taken)

    def close(self) -> None:
        """Close the database's connections (it opens again on next use)."""
        with self._db_lock:
            db, self._db = self._db, None
        if db is not None:
            db.close()

    def _lock_timeout_ms(self) -> int:
        return max(1, round(self.settings.lock_timeout_seconds * 1000))
