"""How a ``toolang`` process ends: as the interpreter would end it, minus the teardown.

After ``sys.exit`` the interpreter joins the threads still running, runs the ``atexit``
handlers, flushes stdout and stderr — and then takes every module and object apart one
by one, a full garbage collection among them: with the 700 modules and 100,000 objects
of a one-shot ``toolang chat``, about a fifth of its time, for a process about to be
gone. :func:`exit_without_teardown` does the first three, closes the files still open
(what taking them apart would do: their buffers reach the disk), and ends the process.

What is left out is what no toolang code relies on: the ``__del__`` of objects other
than files. Everything durable is committed before a command returns (the store and
plugins' databases commit, never at exit); a database connection left open ends as at
a crash, which the stores are built for.
"""

from __future__ import annotations

import _io
import atexit
import contextlib
import gc
import io
import os
import sys
import threading
from itertools import compress
from typing import NoReturn, cast

FLUSH_FAILED = 120
"""The exit status when stdout or stderr cannot be flushed at exit (the interpreter's)."""


def exit_without_teardown(code: object) -> NoReturn:
    """End the process with ``code`` as ``sys.exit(code)`` would (``None``: 0; an
    integer: itself; anything else: printed to stderr, 1) without the interpreter's
    teardown of its modules and objects."""
    status = _status(code)
    # The interpreter's first step at exit (joins non-daemon threads, after
    # concurrent.futures' own exit hooks); private, so only where it exists.
    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is None:
        raise SystemExit(code)
    shutdown()
    atexit._run_exitfuncs()
    _close_open_files()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            status = FLUSH_FAILED
    os._exit(status)


def _status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    with contextlib.suppress(OSError, ValueError):
        print(code, file=sys.stderr)
    return 1


_BUFFERS = (io.BufferedWriter, io.BufferedRandom, io.BufferedReader, io.BufferedRWPair)


def _layer(file: io.IOBase) -> int:
    """Outer layers first: each flushes into the one under it as it closes."""
    if isinstance(file, io.TextIOBase):
        return 0
    if isinstance(file, _BUFFERS):
        return 2
    if isinstance(file, io.RawIOBase):
        return 3
    return 1  # a wrapper written in Python (a compressed stream): over a buffer


def _close_open_files() -> None:
    """Close every open file object but the standard streams, outer layers first: what
    the teardown does as it frees them."""
    standard = {id(s) for s in (sys.stdin, sys.stdout, sys.stderr, *_layers())}
    # Every file class derives from io's C base: its subclasses, walked from it, are the
    # kinds to look for. One pass over the 100,000 objects, in C (isinstance on each,
    # io.IOBase being an ABC, cost as much as the teardown; a pass in Python, 10-20 ms).
    kinds = _file_classes()
    objects = gc.get_objects()
    found = list(compress(objects, map(kinds.__contains__, map(type, objects))))
    del objects
    files = [cast("io.IOBase", f) for f in found if id(f) not in standard]
    files.sort(key=_layer)
    for file in files:
        with contextlib.suppress(Exception):  # as an error in a __del__: ignored
            if not file.closed:
                file.close()


def _file_classes() -> set[type]:
    """``_io._IOBase`` and every class that derives from it (``type.__subclasses__``:
    a class cannot make it answer otherwise)."""
    found: set[type] = {_io._IOBase}
    waiting: list[type] = [_io._IOBase]
    while waiting:
        subclasses: list[type] = type.__subclasses__(waiting.pop())
        for kind in subclasses:
            if kind not in found:
                found.add(kind)
                waiting.append(kind)
    return found


def _layers() -> list[object]:
    """The buffers and raw files under the standard streams (left open: the interpreter
    flushes, never closes, them)."""
    found: list[object] = []
    for stream in (sys.stdin, sys.stdout, sys.stderr):
        layer: object = stream
        while layer is not None:
            layer = getattr(layer, "buffer", None) or getattr(layer, "raw", None)
            if layer is not None:
                found.append(layer)
    return found
