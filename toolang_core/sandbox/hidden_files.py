"""Files the programs tools start must not see, named by the plugins that keep them.

The sandbox hides the runtime's home, its configuration and its store wherever they
are (:mod:`.policy`). A plugin's settings may put files of its own elsewhere — its
database (``[plugins.memory-sqlite] path``: every owner's remembered exchanges), a
sink of events, a key — and only the plugin knows them: it names each here
(:func:`hide_from_tools`, public as ``toolang_core.hide_from_tools``) when it is built,
before any tool runs, and every program started from then on has it hidden.
:func:`~toolang_core.open_plugin_database` names every file it opens, with its
``-wal`` and ``-shm``. The list is the process's: a file is hidden from every runtime
in it (a secret of one is nobody's business in another either).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

_HIDDEN: set[Path] = set()
_LOCK = threading.Lock()


def hide_from_tools(*paths: Path | str) -> None:
    """Hide ``paths`` (files or directories, existing or not yet) from every program a
    tool starts in this process from now on; relative paths are taken from the
    current directory."""
    named = {Path(os.path.abspath(path)) for path in paths}
    with _LOCK:
        _HIDDEN.update(named)


def hidden_by_plugins() -> tuple[Path, ...]:
    """What plugins named with :func:`hide_from_tools` (absolute, as named)."""
    with _LOCK:
        return tuple(_HIDDEN)
