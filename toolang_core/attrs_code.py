"""The code attrs generates for each class, kept on disk as the interpreter keeps bytecode.

attrs writes the methods of every class it makes (``__init__``, ``__repr__``, ``__eq__``,
…) as Python source and compiles it, in every process, each time the class's module is
imported: a one-shot ``toolang chat`` makes some 240 classes and spent about a fifth of
its start in that ``compile`` (python-attrs/attrs#575 asks for a cache upstream). Once
``attr._make`` is imported, its module is given a ``compile`` (:class:`CachedCompile`)
that looks the code object up first, by a hash of the interpreter's magic number, the
file name attrs gives the code and its source, so a changed class (or attrs) is never
served stale code.

The files live where Python keeps this package's bytecode (under
``sys.pycache_prefix`` when set, else in ``toolang_core/__pycache__``) and are trusted
as its bytecode is: whoever may write there may change the package's code already. They
are written as Python writes bytecode: not under ``-B``/``PYTHONDONTWRITEBYTECODE``,
atomically (a temporary file renamed), and a directory that cannot be written is
given up for the process. A file that does not load as code is compiled again. Past
:data:`MOST_FILES` files the oldest written go (a changed class leaves its old code
behind).
Anything else attrs compiles, and any other module, gets the builtin ``compile``.
"""

from __future__ import annotations

import builtins
import contextlib
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import marshal
import os
import re
import sys
import tempfile
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

MODULE: Final = "attr._make"
"""attrs' module that compiles the generated source (by the name ``compile``)."""
GENERATED: Final = "<attrs generated"
"""How the file names attrs gives generated code begin."""
MOST_FILES: Final = 4096
"""Files kept at most (:meth:`CachedCompile._bound`): a toolang with every plugin makes
about 500 classes."""


def directory() -> Path:
    """Where the code files go: beside this package's bytecode."""
    package = Path(__file__).resolve().parent
    tag = sys.implementation.cache_tag or "python"
    if sys.pycache_prefix:
        return Path(sys.pycache_prefix, *package.parts[1:], f"attrs-code.{tag}")
    return package / "__pycache__" / f"attrs-code.{tag}"


class CachedCompile:
    """``compile`` for attrs' module: code attrs generated comes from :attr:`where`
    when it is there, and is put there when it is not; everything else goes to the
    builtin."""

    def __init__(self, where: Path, *, most: int = MOST_FILES) -> None:
        self.where = where
        self._writable = True
        self._most = most
        self._bounded = False

    def __call__(self, source: Any, filename: Any, mode: str, *args: Any, **kwargs: Any) -> Any:
        if (
            args
            or kwargs
            or mode != "exec"
            or not isinstance(source, str)
            or not isinstance(filename, str)
            or not filename.startswith(GENERATED)
        ):
            return builtins.compile(source, filename, mode, *args, **kwargs)
        key = hashlib.sha256(
            importlib.util.MAGIC_NUMBER
            + f"{filename}\0{_without_type_hash(source, filename)}".encode("utf-8", "surrogatepass")
        ).hexdigest()
        path = self.where / key
        with contextlib.suppress(OSError, ValueError, EOFError, TypeError):
            code = marshal.loads(path.read_bytes())
            if isinstance(code, types.CodeType) and code.co_filename == filename:
                return code
        code = builtins.compile(source, filename, mode)
        if self._writable and not sys.dont_write_bytecode:
            self._write(path, marshal.dumps(code))
        return code

    def _write(self, path: Path, data: bytes) -> None:
        """``data`` to ``path`` whole or not at all; a directory that cannot be written
        is not tried again by this process."""
        try:
            try:
                handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
            except FileNotFoundError:  # the folder's first file (or it was deleted)
                path.parent.mkdir(parents=True, exist_ok=True)
                handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
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
        """Past ``most`` files, the folder keeps the three quarters written last: each
        changed class adds one (old code is never asked for again), and a deleted file
        is only compiled again."""
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


def _without_type_hash(source: str, filename: str) -> str:
    """``source`` without the number attrs seeds a class's ``__hash__`` with: the
    ``hash()`` of the class's name, which differs from process to process (string hashes
    are randomised), so the key would too. Code loaded from another process keeps that
    process's number: a hash is only ever compared within one process, and all of a
    class's instances there share the one ``__hash__``."""
    for name in {filename, re.sub(r"-\d+>$", ">", filename)}:
        seed = f" {hash(name.replace(' methods ', ' hash ', 1))},\n"
        if seed in source:
            return source.replace(seed, " <seed>,\n", 1)
    return source


def cache_module(module: types.ModuleType) -> None:
    """Give attrs' compiling ``module`` the cached ``compile`` (once)."""
    if not isinstance(vars(module).get("compile"), CachedCompile):
        module.compile = CachedCompile(directory())  # type: ignore[attr-defined]


class _Loader(importlib.abc.Loader):
    """Runs ``attr._make``'s own loader, then gives the module the cached ``compile``."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self.loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        self.loader.exec_module(module)
        cache_module(module)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds ``attr._make`` as the other finders do, with :class:`_Loader` around its
    loader; once, then it leaves ``sys.meta_path``."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != MODULE:
            return None
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)  # the other finders' answer
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _Loader(spec.loader)
        return spec


def install() -> None:
    """Cache attrs' generated code from now on: at once when ``attr._make`` is
    imported already, else when it is (nothing is imported here: a command that makes
    no attrs class pays nothing). ``TOOLANG_ATTRS_CODE_CACHE=0`` leaves attrs alone."""
    if os.environ.get("TOOLANG_ATTRS_CODE_CACHE") == "0":
        return
    module = sys.modules.get(MODULE)
    if module is not None:
        cache_module(module)
    elif not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
