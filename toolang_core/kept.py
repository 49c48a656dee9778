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
Each file carries a digest of its key and content, checked on every read: a file
damaged on disk, cut short or moved under another key reads as missing, and is only
computed again. (The digest guards against accidents, not against someone who may
write there: they may change the bytecode too.)
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import re
import sys
import tempfile
import types
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

__all__ = ["KeptFiles", "after_import"]

MOST_FILES: Final = 4096
"""Files a folder keeps at most, by default (:meth:`KeptFiles._bound`)."""
KEY: Final = re.compile(r"[A-Za-z0-9_-]{1,128}")
"""What a key may be: a file name in the folder, and nothing else."""
_DIGEST: Final = 32
"""Bytes of the SHA-256 digest each file begins with."""


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
        self._writable: bool | None = None  # (not known until asked)
        self._most = most
        self._bounded = False

    @classmethod
    def beside(cls, package_file: str | Path, kind: str) -> KeptFiles:
        """The files of one ``kind`` kept for the package of ``package_file`` (pass the
        ``__file__`` of one of its modules), beside its bytecode (:func:`folder`)."""
        return cls(folder(package_file, kind))

    @property
    def writable(self) -> bool:
        """Whether :meth:`write` may keep anything now (bytecode is written, the folder
        is one this process may write or may make, and no write to it has failed): work
        done only to be kept can be skipped when not."""
        if sys.dont_write_bytecode:
            return False
        if self._writable is None:
            self._writable = _may_write(self.where)
        return self._writable

    def read(self, key: str) -> bytes | None:
        """The content kept under ``key``; ``None`` when there is none, or the file is not
        what was written under ``key``. :raises ValueError: ``key`` is not a name of
        letters, digits, ``_`` and ``-`` (at most 128)."""
        path = self.where / _checked(key)
        try:
            kept = path.read_bytes()
        except OSError:
            return None
        digest, data = kept[:_DIGEST], kept[_DIGEST:]
        return data if digest == _digest(key, data) else None

    def write(self, key: str, data: bytes) -> None:
        """Keep ``data`` under ``key``, whole or not at all; nothing when bytecode is not
        written, or this process found the folder cannot be. :raises ValueError: as
        :meth:`read`."""
        path = self.where / _checked(key)
        if not self.writable:
            return
        data = _digest(key, data) + data
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
                files = [  # (not another process's file being written: ".*.tmp")
                    (entry.stat().st_mtime, entry.path)
                    for entry in listing
                    if entry.is_file(follow_symlinks=False) and not entry.name.startswith(".")
                ]
            if len(files) <= self._most:
                return
            files.sort()
            for _, name in files[: len(files) - self._most * 3 // 4]:
                with contextlib.suppress(OSError):
                    os.unlink(name)


def _may_write(where: Path) -> bool:
    """Whether ``where`` is a folder this process may write in, or the nearest of its
    parents that exists is (so it may be made). A look, not a promise: a write can
    still fail (and then the folder is given up)."""
    for place in (where, *where.parents):
        try:
            is_dir = place.is_dir()
        except OSError:
            return False
        if is_dir:
            return os.access(place, os.W_OK | os.X_OK)
        if place.exists() or place.is_symlink():  # a file where a folder must go
            return False
    return False


def _checked(key: str) -> str:
    if not KEY.fullmatch(key):
        raise ValueError(
            f"a kept file's key is letters, digits, '_' and '-' (at most 128), not {key!r}"
        )
    return key


def _digest(key: str, data: bytes) -> bytes:
    return hashlib.sha256(key.encode() + b"\0" + data).digest()


def after_import(name: str, then: Callable[[types.ModuleType], None]) -> None:
    """Call ``then(module)`` once the module ``name`` has run its code, before the module
    that imported it goes on: at once when it is in ``sys.modules`` already (even one
    still running its code, in a circular import), else right after its first import
    (nothing is imported here). If that import fails, ``then`` is not called. What
    ``then`` raises is a warning, not a failure of the import. A module whose loader
    cannot be wrapped is left alone."""
    module = sys.modules.get(name)
    if module is not None:
        _call(then, module)
    else:
        sys.meta_path.insert(0, _Finder(name, then))


def _call(then: Callable[[types.ModuleType], None], module: types.ModuleType) -> None:
    try:
        then(module)
    except Exception as exc:  # the module stays usable: only what then wanted is lost
        warnings.warn(
            f"after_import({module.__name__!r}): {then!r} raised {exc!r}", RuntimeWarning, 2
        )


class _Loader(importlib.abc.Loader):
    """Runs the module's own loader, then ``then``; anything else asked of it (source,
    code, resources) is the module's own loader's answer."""

    def __init__(
        self, loader: importlib.abc.Loader, then: Callable[[types.ModuleType], None]
    ) -> None:
        self.loader = loader
        self.then = then

    def __getattr__(self, name: str) -> Any:
        return getattr(self.loader, name)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        self.loader.exec_module(module)
        _call(self.then, module)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds one module as the other finders do, with :class:`_Loader` around its
    loader; once. It stays in ``sys.meta_path``, answering nothing after that (taking
    it out could make another thread's import, walking the list, skip a finder)."""

    def __init__(self, name: str, then: Callable[[types.ModuleType], None]) -> None:
        self.name = name
        self.then: Callable[[types.ModuleType], None] | None = then

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        then = self.then
        if then is None or fullname != self.name:
            return None
        self.then = None
        spec = importlib.util.find_spec(fullname)  # the other finders' answer
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _Loader(spec.loader, then)
        return spec
