"""What a package computes the same way in every process, kept beside its bytecode.

Some work is done again by every process though its result never changes between
them: attrs compiles the methods it generates for each class (:mod:`.attrs_code`), a
parser generator builds its tables on import. :class:`KeptFiles` keeps such results
where Python keeps the package's bytecode, under a key the caller derives from
everything the result depends on, and :func:`after_import` lets a package reach into
a module the moment it is first imported (to look its work up there first).

The files are trusted as that bytecode is: whoever may write there may change the
package's code already. They are written as Python writes bytecode: never under
``-B``/``PYTHONDONTWRITEBYTECODE``, each whole (a temporary file, then renamed), and a
folder that cannot be written is given up for the process. Past ``most`` files a
folder keeps the three quarters written last (an old key is never asked for again).
A file that is missing or does not load is only computed again: callers check what
they read.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import tempfile
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

__all__ = ["KeptFiles", "after_import"]

MOST_FILES: Final = 4096
"""Files a folder keeps at most, by default (:meth:`KeptFiles._bound`)."""


def folder(package_file: str | Path, kind: str) -> Path:
    """Where the files of ``kind`` go for the package of the module at
    ``package_file``: beside its bytecode (under ``sys.pycache_prefix`` when set, else
    in its ``__pycache__``), one folder per interpreter."""
    package = Path(package_file).resolve().parent
    tag = sys.implementation.cache_tag or "python"
    if sys.pycache_prefix:
        return Path(sys.pycache_prefix, *package.parts[1:], f"{kind}.{tag}")
    return package / "__pycache__" / f"{kind}.{tag}"


class KeptFiles:
    """Files kept in the folder ``where`` by key: a name of letters and digits, e.g. a
    hex digest of what the content depends on. :meth:`beside` gives a package's."""

    def __init__(self, where: Path, *, most: int = MOST_FILES) -> None:
        self.where = where
        self._writable = True
        self._most = most
        self._bounded = False

    @classmethod
    def beside(cls, package_file: str | Path, kind: str) -> KeptFiles:
        """The files of one ``kind`` kept for the package of ``package_file`` (pass the
        ``__file__`` of one of its modules), beside its bytecode (:func:`folder`)."""
        return cls(folder(package_file, kind))

    @property
    def writable(self) -> bool:
        """Whether :meth:`write` may keep anything now (bytecode is written, and this
        process has not found the folder unwritable): work done only to be kept can
        be skipped when not."""
        return self._writable and not sys.dont_write_bytecode

    def read(self, key: str) -> bytes | None:
        """The content kept under ``key``; ``None`` when there is none."""
        try:
            return (self.where / key).read_bytes()
        except (OSError, ValueError):
            return None

    def write(self, key: str, data: bytes) -> None:
        """Keep ``data`` under ``key``, whole or not at all; nothing when bytecode is not
        written, or this process found the folder cannot be."""
        if not self.writable:
            return
        path = self.where / key
        try:
            try:
                handle, temporary = tempfile.mkstemp(dir=self.where, prefix=".", suffix=".tmp")
            except FileNotFoundError:  # the folder's first file (or it was deleted)
                self.where.mkdir(parents=True, exist_ok=True)
                handle, temporary = tempfile.mkstemp(dir=self.where, prefix=".", suffix=".tmp")
            try:
                with os.fdopen(handle, "wb") as file:
                    file.write(data)
                os.replace(temporary, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
        except OSError:
            self._writable = False
            return
        if not self._bounded:  # once a process: it adds a few hundred files at most
            self._bounded = True
            self._bound()

    def _bound(self) -> None:
        """Past ``most`` files, the folder keeps the three quarters written last."""
        with contextlib.suppress(OSError):
            with os.scandir(self.where) as listing:
                files = [
                    (entry.stat().st_mtime, entry.path)
                    for entry in listing
                    if entry.is_file(follow_symlinks=False)
                ]
            if len(files) <= self._most:
                return
            files.sort()
            for _, name in files[: len(files) - self._most * 3 // 4]:
                with contextlib.suppress(OSError):
                    os.unlink(name)


def after_import(name: str, then: Callable[[types.ModuleType], None]) -> None:
    """Call ``then(module)`` once the module ``name`` has run its code: at once when it
    is imported already, else right after it is first imported, before the module
    that imported it goes on (nothing is imported here). A module whose loader cannot
    be wrapped is left alone."""
    module = sys.modules.get(name)
    if module is not None:
        then(module)
    else:
        sys.meta_path.insert(0, _Finder(name, then))


class _Loader(importlib.abc.Loader):
    """Runs the module's own loader, then ``then``."""

    def __init__(
        self, loader: importlib.abc.Loader, then: Callable[[types.ModuleType], None]
    ) -> None:
        self.loader = loader
        self.then = then

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        self.loader.exec_module(module)
        self.then(module)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds one module as the other finders do, with :class:`_Loader` around its
    loader; once, then it leaves ``sys.meta_path``."""

    def __init__(self, name: str, then: Callable[[types.ModuleType], None]) -> None:
        self.name = name
        self.then = then

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.name:
            return None
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)  # the other finders' answer
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _Loader(spec.loader, self.then)
        return spec
