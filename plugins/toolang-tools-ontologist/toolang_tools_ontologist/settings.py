"""``[plugins.tools-ontologist]``: kept apart so registering the plugin imports little."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import attrs

NAME: Final = "tools-ontologist"
"""The entry-point name: the settings section, the state key and the database file."""


def at_least(minimum: int) -> Callable[[Any, attrs.Attribute[Any], int], None]:
    def check(_: Any, attribute: attrs.Attribute[Any], value: int) -> None:
        if value < minimum:
            raise ValueError(f"{attribute.name}: expected a number >= {minimum}, found {value}")

    return check


@attrs.frozen
class OntologistSettings:
    """``[plugins.tools-ontologist]``.

    ``ingest_root`` is the only directory ``ontology_ingest`` may read files from
    (relative to toolang.toml; default ``<home>/ingest``); a path that resolves outside
    it — ``..``, an absolute path elsewhere, a link leading out — is refused.
    """

    ingest_root: Path | None = None
    max_ingest_bytes: int = attrs.field(default=50_000_000, validator=at_least(1))
    """The largest file (or inline content) one ingest reads."""
    max_ingest_rows: int = attrs.field(default=200_000, validator=at_least(1))
    max_rejected_shown: int = attrs.field(default=1_000, validator=at_least(1))
    """How many rejected rows one ingest lists (the count is always exact)."""
    max_depth: int = attrs.field(default=5, validator=at_least(0))
    """The deepest traversal ``ontology_query`` follows."""
