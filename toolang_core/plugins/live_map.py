"""A read-only mapping replaced whole: the runtime's tool table (copy-on-write).

Its own module, apart from the offers that change it (:mod:`toolang_core.plugins.live_tools`),
so the components and the agent catalog that read it import nothing of those.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LiveMap(Mapping[K, V], Generic[K, V]):
    """A read-only mapping whose contents are replaced whole (:meth:`publish`).

    Every read goes to the snapshot current at the time of the read; iterating
    (``items()``, ``keys()``, ``values()``, ``for``) walks one snapshot to the end, so a
    change meanwhile is never half seen. Keep :attr:`current` to read one snapshot
    several times."""

    __slots__ = ("_current",)

    def __init__(self, initial: Mapping[K, V] | None = None) -> None:
        self._current: Mapping[K, V] = dict(initial or {})

    @property
    def current(self) -> Mapping[K, V]:
        """The snapshot in effect now (never changed once published)."""
        return self._current

    def publish(self, contents: Mapping[K, V]) -> None:
        """Make a copy of ``contents`` the current snapshot."""
        self._current = dict(contents)

    def __getitem__(self, key: K) -> V:
        return self._current[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._current)

    def __len__(self) -> int:
        return len(self._current)

    def __contains__(self, key: object) -> bool:
        return key in self._current

    def get(self, key: K, default: Any = None) -> Any:
        return self._current.get(key, default)

    def items(self) -> Any:
        return self._current.items()

    def keys(self) -> Any:
        return self._current.keys()

    def values(self) -> Any:
        return self._current.values()

    def __repr__(self) -> str:
        return f"LiveMap({dict(self._current)!r})"
