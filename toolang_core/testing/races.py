"""A race a program in the sandbox can run against a tool that opens paths under a
root: swapping a name between a file and a symbolic link out of the root, as fast as
it can, while the tool checks and opens it (:func:`toolang_core.open_beneath` is the
defence; a test of a tool that opens paths a model names runs it)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def swapping_for_a_link(path: Path, target: Path, text: str) -> Iterator[None]:
    """While the block runs, a thread swaps ``path`` between a file holding ``text``
    and a symbolic link to ``target`` (outside the root), each swap atomic
    (``os.replace``), so the name always exists as one or the other."""
    stop = threading.Event()
    link, plain = path.with_name(f".{path.name}.link"), path.with_name(f".{path.name}.file")

    def swap() -> None:
        while not stop.is_set():
            os.symlink(target, link)
            os.replace(link, path)
            plain.write_text(text)
            os.replace(plain, path)

    swapper = threading.Thread(target=swap, name="swapping-for-a-link", daemon=True)
    swapper.start()
    try:
        yield
    finally:
        stop.set()
        swapper.join()
