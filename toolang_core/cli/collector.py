"""How often the garbage collector runs in a ``toolang`` process: the process's choice
(the console script's), never the library's — a program embedding a runtime keeps its own.

A command builds some 60,000 long-lived objects in its first few hundred milliseconds
(modules, classes, plugins' registrations and settings) and almost no cyclic garbage.
At CPython's default pace (a young collection every 700 net allocations) the collector
walks them some 150 times, a full collection among them: about a tenth of a one-shot
``toolang chat``'s CPU time, for nothing. :func:`collect_less` (called by
:func:`toolang_core.cli.main.main`) makes the young collections rare instead of off:
a long command (``toolang chat -i``) still collects, once its heap really grows.
``toolang run`` goes back to the usual pace once started (:func:`collect_as_usual`,
through :func:`toolang_core.cli.cmd_run.freeze_heap`): a serving runtime lives long
and its memory is watched.
"""

from __future__ import annotations

import gc
from typing import Final

YOUNG_THRESHOLD: Final = 100_000
"""Net allocations of tracked objects between two young collections while
:func:`collect_less` is in effect (CPython's default: 700)."""

_usual: list[tuple[int, int, int]] = []


def collect_less() -> None:
    """Collect young garbage only every :data:`YOUNG_THRESHOLD` net allocations (the
    older generations' thresholds are kept); :func:`collect_as_usual` undoes it."""
    if not _usual:
        _usual.append(gc.get_threshold())
    _, older, oldest = _usual[0]
    gc.set_threshold(YOUNG_THRESHOLD, older, oldest)


def collect_as_usual() -> None:
    """The thresholds in effect before :func:`collect_less` (nothing if it was not
    called)."""
    if _usual:
        gc.set_threshold(*_usual.pop())
