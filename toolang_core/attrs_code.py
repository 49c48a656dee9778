"""The code attrs (and cattrs) generate for each class, kept on disk as bytecode is.

attrs writes the methods of every class it makes (``__init__``, ``__repr__``, ``__eq__``,
…) as Python source and compiles it, in every process, each time the class's module is
imported: a one-shot ``toolang chat`` makes some 240 classes and spent about a fifth of
its start in that ``compile`` (python-attrs/attrs#575 asks for a cache upstream). Once
``attr._make`` is imported, its module is given a ``compile`` (:class:`CachedCompile`)
that looks the code object up first, by a hash of the interpreter's magic number, the
file name attrs gives the code and its source, so a changed class (or attrs) is never
served stale code. cattrs writes and compiles the functions that structure each class
the same way (``cattrs.gen``: a one-shot ``toolang chat`` structures its configuration
with some 15, about 9 ms of ``compile``); its module is given the same ``compile``.

The files are kept with :class:`toolang_core.kept.KeptFiles` beside this package's
bytecode (under ``sys.pycache_prefix`` when set, else in ``toolang_core/__pycache__``),
trusted and written as that bytecode is; a file that does not load as code is
compiled again.
Anything else attrs compiles, and any other module, gets the builtin ``compile``.
"""

from __future__ import annotations
import __future__

import builtins
import contextlib
import functools
import hashlib
import importlib.util
import marshal
import operator
import os
import re
import sys
import types
from pathlib import Path
from typing import Any, Final

from toolang_core.kept import MOST_FILES, KeptFiles, after_import, folder

MODULE: Final = "attr._make"
"""attrs' module that compiles the generated source (by the name ``compile``)."""
GENERATED: Final = "<attrs generated"
"""How the file names attrs gives generated code begin."""
GENERATORS: Final = {MODULE: GENERATED, "cattrs.gen": "<cattrs generated"}
"""Each module given the cached ``compile``, and how the file names it gives the code
it generates begin (nothing else it compiles is kept)."""


FUTURE_FLAGS: Final = functools.reduce(
    operator.or_,
    (
        getattr(__future__, n).compiler_flag
        for n in __future__.all_feature_names
        if n != "nested_scopes"  # its bit is CO_NESTED, which compile never inherits
    ),
)
"""The ``from __future__`` imports' compiler flags ``compile`` inherits from the code
calling it."""


def directory() -> Path:
    """Where the code files go: beside this package's bytecode."""
    return folder(__file__, "attrs-code")


class CachedCompile:
    """``compile`` for attrs' (or cattrs') module: generated code (its file name begins
    with ``generated``) comes from :attr:`where` when it is there, and is put there when
    it is not; everything else goes to the builtin."""

    def __init__(self, where: Path, *, most: int = MOST_FILES, generated: str = GENERATED) -> None:
        self.where = where
        self.generated = generated
        self._kept = KeptFiles(where, most=most)

    def __call__(
        self,
        source: Any,
        filename: Any,
        mode: str,
        flags: int = 0,
        dont_inherit: bool = False,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        # What the builtin would take from the code calling it (attrs' module), not
        # from this one: that code's ``from __future__`` imports.
        if not dont_inherit:
            flags |= sys._getframe(1).f_code.co_flags & FUTURE_FLAGS
        if (
            args
            or kwargs
            or flags & ~FUTURE_FLAGS  # e.g. an AST asked for: not code to keep
            or mode != "exec"
            or not isinstance(source, str)
            or not isinstance(filename, str)
            or not filename.startswith(self.generated)
        ):
            return builtins.compile(source, filename, mode, flags, True, *args, **kwargs)
        key = hashlib.sha256(
            importlib.util.MAGIC_NUMBER
            + f"{flags}\0{filename}\0{_without_type_hash(source, filename)}".encode(
                "utf-8", "surrogatepass"
            )
        ).hexdigest()
        kept = self._kept.read(key)
        if kept is not None:
            with contextlib.suppress(ValueError, EOFError, TypeError):
                code = marshal.loads(kept)
                if isinstance(code, types.CodeType) and code.co_filename == filename:
                    return code
        code = builtins.compile(source, filename, mode, flags, True)
        self._kept.write(key, marshal.dumps(code))
        return code


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
    """Give ``module`` (one of :data:`GENERATORS`) the cached ``compile`` (once)."""
    if not isinstance(vars(module).get("compile"), CachedCompile):
        generated = GENERATORS.get(module.__name__, GENERATED)
        module.compile = CachedCompile(directory(), generated=generated)  # type: ignore[attr-defined]


def install() -> None:
    """Cache attrs' and cattrs' generated code from now on: at once for a module of
    :data:`GENERATORS` imported already, else when it is (nothing is imported here: a
    command that makes no attrs class pays nothing). ``TOOLANG_ATTRS_CODE_CACHE=0``
    leaves both alone."""
    if os.environ.get("TOOLANG_ATTRS_CODE_CACHE") == "0" or _installed:
        return
    _installed.append(True)
    for module in GENERATORS:
        after_import(module, cache_module)


_installed: list[bool] = []
"""Whether :func:`install` ran in this process (once is enough)."""
