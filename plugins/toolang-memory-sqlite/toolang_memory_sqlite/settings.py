"""``[plugins.memory-sqlite]``: where entries live, how recall ranks, what is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final, Literal

import attrs

from toolang_core.memory.kit import RankingSettings, at_least

NAME: Final = "memory-sqlite"
"""The entry-point name: the settings section and the migration set."""

PROVIDER: Final = "sqlite"
"""The memory plugin's name: ``[memory] plugin = "sqlite"``."""


def _path_only_for_own(instance: MemorySQLiteSettings, _: Any, value: Path | None) -> None:
    if value is not None and instance.database == "store":
        raise ValueError(
            'path: set only with database = "own" (with database = "store" the entries '
            "live in the execution store's file, [store] path)"
        )


@attrs.frozen
class MemorySQLiteSettings(RankingSettings):
    """``[plugins.memory-sqlite]``.

    ``database``: ``"own"`` keeps entries in their own file, ``path`` (default
    ``<home>/plugins/memory-sqlite.db``); ``"store"`` keeps them in the SQLite execution
    store's file (one file to back up; needs ``[store] backend = "sqlite"``).

    Recall ranks the ``candidates`` best full-text matches (bm25) and blends in recency
    and uses; those keys and the other shared ones are
    :class:`toolang_core.memory.kit.RankingSettings`'s. ``ranked_matches`` bounds one
    recall's work: the query's rarest words are kept while their matches fit; when even
    the rarest word matches more, the newest matches are ranked by how many query words
    they hold.
    """

    ranked_matches: int = attrs.field(default=100, validator=at_least(10))
    """The bound on one recall's work (:mod:`toolang_memory_sqlite.search`): 100 here,
    not the kit's 1000. bm25 costs about 0.6 µs per row it scores; on
    ``bench/memory_quality.py`` (with and without 20,000 distractors) recall@5 and MRR
    are the same at 100 as at 1000, and an agent turn's recall costs a fifth less
    (``bench/memory_split.py``'s workload, whose ``add a b`` queries hold a number in a
    hundred or more entries)."""
    database: Literal["own", "store"] = "own"
    path: Path | None = attrs.field(default=None, validator=_path_only_for_own)
    busy_timeout_seconds: float = attrs.field(default=10.0, validator=at_least(0))
    """How long a write waits for another process's write (e.g. the store's) to finish."""
