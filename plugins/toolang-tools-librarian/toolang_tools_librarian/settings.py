"""``[plugins.tools-librarian]``: kept apart so registering the plugin imports little."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import attrs

NAME: Final = "tools-librarian"
"""The entry-point name: the settings section, the state key and the database file."""

KNOWLEDGE_SAVER: Final = "hook-knowledge-saver"
LEARNING_OBSERVER: Final = "hook-learning-observer"


def at_least(minimum: int) -> Callable[[Any, attrs.Attribute[Any], int], None]:
    def check(_: Any, attribute: attrs.Attribute[Any], value: int) -> None:
        if value < minimum:
            raise ValueError(f"{attribute.name}: expected a number >= {minimum}, found {value}")

    return check


@attrs.frozen
class LibrarianSettings:
    """``[plugins.tools-librarian]``.

    ``rag_root`` is the only directory ``rag_index`` may read (relative to
    toolang.toml; default ``<home>/documents``); every indexed directory is resolved
    inside it and links that lead out are skipped.
    """

    rag_root: Path | None = None
    rag_extensions: tuple[str, ...] = (".md", ".markdown", ".txt", ".rst")
    chunk_lines: int = attrs.field(default=30, validator=at_least(1))
    max_file_bytes: int = attrs.field(default=2_000_000, validator=at_least(1))
    max_files: int = attrs.field(default=5_000, validator=at_least(1))
    knowledge_scan: int = attrs.field(default=2_000, validator=at_least(1))
    """How many of the KnowledgeSaver's newest entries one search looks through."""
    learning_scan: int = attrs.field(default=20_000, validator=at_least(1))
    """How many of the LearningObserver's newest outcomes the learning tools read."""
