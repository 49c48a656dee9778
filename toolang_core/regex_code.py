"""Regular expressions that modules compile as they load, from engine code kept on disk.

``re`` compiles an expression in Python (it parses it, then writes the matching
engine's code) and hands the code to its C engine (``_sre.compile``). Modules compile
their expressions as they load — sqlite-utils' statement parsers, PyYAML's reader,
``tokenize``, toolang's redaction — some 130 of them in a one-shot ``toolang chat``,
in every process. :func:`install` (run when ``toolang_core`` is imported, before
those modules are) puts the patterns an earlier process kept into ``re``'s own cache,
made from their engine code: a module's ``re.compile`` finds its pattern there, as it
would have had the module compiled it before. At exit, the expressions compiled since
that a module holds — in a global, or a class's attribute — are added to what is kept.

What is kept is checked when it is written: only a pattern the engine makes equal to
``re.compile``'s (flags, code, groups) from the kept code (:func:`regex_engine_code`), so an
interpreter whose ``re`` works otherwise keeps nothing. Only expressions held by a
module or a class are kept, never others from the cache: those are built at run time,
from what a program was given (a pattern of the secrets a redactor hides, a user's
search), and must not reach the disk. The file is kept with
:class:`toolang_core.kept.KeptFiles` beside this package's bytecode, trusted and
written as that bytecode is, and keyed by the interpreter's exact version and engine;
what does not read back as written is compiled as usual.
``TOOLANG_REGEX_CODE_CACHE=0`` leaves ``re`` alone.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib
import marshal
import os
import re
import sys
import types
from collections.abc import Iterator
from typing import Any, Final

from toolang_core.kept import KeptFiles

__all__ = ["install", "regex_engine_code", "regex_from_engine_code"]

try:  # CPython's engine and compiler (3.11+); elsewhere nothing is kept
    _sre: Any = importlib.import_module("_sre")
    _parser: Any = importlib.import_module("re._parser")
    _compiler: Any = importlib.import_module("re._compiler")
except ImportError:  # pragma: no cover - other interpreters
    _sre = None

MOST_PATTERNS: Final = 256
"""Expressions kept at most (``re`` caches 512: seeding leaves it room for others)."""
MOST_MODULES: Final = 10_000
"""Names of modules loaded by the processes that kept them, at most."""
_KEY: Final = hashlib.sha256(
    f"{sys.version}\0{getattr(_sre, 'MAGIC', '')}\0module expressions".encode()
).hexdigest()

CacheKey = tuple[type, Any, int]
"""How ``re`` caches a pattern: the expression's type (``str``/``bytes``), the expression,
the flags it was compiled with."""


class Kept:
    """What the processes before kept: :attr:`patterns` (their engine code, by the key
    ``re`` caches them under) and the :attr:`modules` they had loaded when they looked.
    (Not an attrs class: this module loads before attrs' code is kept.)"""

    __slots__ = ("modules", "patterns")

    def __init__(
        self, patterns: dict[CacheKey, Any] | None = None, modules: set[str] | None = None
    ) -> None:
        self.patterns = patterns if patterns is not None else {}
        self.modules = modules if modules is not None else set()


def regex_engine_code(compiled: re.Pattern[Any]) -> tuple[Any, ...] | None:
    """What ``re`` hands its engine to make ``compiled`` (its flags, code, groups and
    group names, in a form :mod:`marshal` keeps), when the engine, given it, makes a
    pattern equal to ``compiled``; else ``None``. :func:`regex_from_engine_code` makes the
    pattern of it."""
    if _sre is None:
        return None
    try:
        parsed = _parser.parse(compiled.pattern, compiled.flags)
        code = _compiler._code(parsed, compiled.flags)
        groupindex = dict(parsed.state.groupdict)
        indexgroup: list[str | None] = [None] * parsed.state.groups
        for name, index in groupindex.items():
            indexgroup[index] = name
        arguments = (  # plain ints (the opcodes are an int subclass marshal refuses)
            int(compiled.flags | parsed.state.flags),
            [int(word) for word in code],
            int(parsed.state.groups - 1),
            {str(name): int(index) for name, index in groupindex.items()},
            tuple(indexgroup),
        )
        made = _sre.compile(compiled.pattern, *arguments)
        marshal.dumps(arguments)  # (what cannot be kept is not)
    except Exception:
        return None
    same = (
        made == compiled  # flags, code and expression
        and made.groups == compiled.groups
        and made.groupindex == compiled.groupindex
    )
    return arguments if same else None


def regex_from_engine_code(pattern: str | bytes, code: Any) -> re.Pattern[Any] | None:
    """The pattern of ``pattern`` made by the engine from ``code`` (what
    :func:`regex_engine_code` gave, read back), without compiling it; ``None`` when ``code``
    is not of that shape or the engine refuses it."""
    if _sre is None or not _well_formed(code):
        return None
    try:
        made = _sre.compile(pattern, *code)
    except Exception:
        return None
    return made if isinstance(made, re.Pattern) else None


def _well_formed(arguments: Any) -> bool:
    """Whether ``arguments`` have the shape :func:`regex_engine_code` gives (a second look:
    the kept file's digest already says they are what was written)."""
    if not (isinstance(arguments, tuple) and len(arguments) == 5):
        return False
    flags, code, groups, groupindex, indexgroup = arguments
    return (
        type(flags) is int
        and isinstance(code, list)
        and set(map(type, code)) <= {int}  # (in C: a kept file holds some 17,000 words)
        and (not code or (min(code) >= 0 and max(code) < 2**32))
        and type(groups) is int
        and isinstance(groupindex, dict)
        and isinstance(indexgroup, tuple)
        and groups == len(indexgroup) - 1
    )


def install() -> None:
    """Seed ``re``'s cache with the patterns kept by earlier processes, and keep those
    compiled since at exit (when bytecode is written). Once a process; nothing when
    ``TOOLANG_REGEX_CODE_CACHE=0`` or ``re`` does not cache as this module expects."""
    if _installed or os.environ.get("TOOLANG_REGEX_CODE_CACHE") == "0" or _sre is None:
        return
    _installed.append(True)
    cache = _re_cache()
    if cache is None:
        return
    files = KeptFiles.beside(__file__, "module-regex")
    kept = _read(files)
    room = getattr(re, "_MAXCACHE", 0) // 2 - len(cache)
    for key, code in list(kept.patterns.items())[: max(room, 0)]:
        if key not in cache:
            made = regex_from_engine_code(key[1], code)
            if made is not None and made.pattern == key[1]:
                cache[key] = made
    if files.writable:
        atexit.register(keep, files, kept)


def keep(files: KeptFiles, kept: Kept) -> None:
    """Add to ``kept`` (and write) the patterns in ``re``'s cache that a module holds
    (:func:`_held`) and ``kept`` has not: at exit. Looking for them takes a while (every
    module's globals and classes), so only a process that loaded a module none before
    it did looks (a module's expressions are compiled as it loads)."""
    cache = _re_cache()
    loaded = set(sys.modules)
    if cache is None or loaded <= kept.modules:
        return
    held = _held()
    for key, pattern in list(cache.items()):
        if len(kept.patterns) >= MOST_PATTERNS:
            break
        if key not in kept.patterns and id(pattern) in held and _cache_entry(key, pattern):
            code = regex_engine_code(pattern)
            if code is not None:
                kept.patterns[key] = code
    # (past the bound, this process's only: a process like it does not look again)
    kept.modules = kept.modules | loaded if len(kept.modules | loaded) <= MOST_MODULES else loaded
    records = [
        (kind is bytes, text, flags, code) for (kind, text, flags), code in kept.patterns.items()
    ]
    files.write(_KEY, marshal.dumps((sorted(kept.modules), records)))


def _read(files: KeptFiles) -> Kept:
    """What an earlier process kept."""
    data = files.read(_KEY)
    kept = Kept()
    if data is None:
        return kept
    with contextlib.suppress(Exception):  # not as written: nothing kept
        modules, records = marshal.loads(data)
        patterns: dict[CacheKey, Any] = {}
        for is_bytes, text, flags, code in records:
            kind = bytes if is_bytes else str
            if type(text) is kind and type(flags) is int:
                patterns[(kind, text, flags)] = code
        kept = Kept(patterns, {name for name in modules if type(name) is str})
    return kept


def _re_cache() -> dict[Any, Any] | None:
    """``re``'s cache of compiled patterns, when it is one this module knows: a dict
    from ``(type, expression, flags)`` to the pattern (checked by compiling one)."""
    cache = getattr(re, "_cache", None)
    if not isinstance(cache, dict):
        return None
    probe = "(?:toolang regex-code probe)"
    re.compile(probe)
    found = cache.pop((str, probe, 0), None)
    return cache if isinstance(found, re.Pattern) and found.pattern == probe else None


def _cache_entry(key: Any, pattern: Any) -> bool:
    """Whether ``key`` and ``pattern`` are an entry of ``re``'s cache as it keeps them."""
    return (
        isinstance(key, tuple)
        and len(key) == 3
        and key[0] in (str, bytes)
        and type(key[1]) is key[0]
        and type(key[2]) is int
        and isinstance(pattern, re.Pattern)
        and pattern.pattern == key[1]
    )


def _held() -> set[int]:
    """The ids of the patterns modules hold in their globals, or in the attributes of
    the classes among those (what a module compiles as it loads)."""
    return {id(value) for value in _module_values() if type(value) is re.Pattern}


def _module_values() -> Iterator[Any]:
    """What every loaded module holds, and the attributes of the classes it defines.
    Types are compared, never ``isinstance``: that may ask an object its
    ``__class__``, and a proxy's may run code."""
    for module in list(sys.modules.values()):
        if type(module) is not types.ModuleType:  # e.g. not loaded yet (a LazyLoader's)
            continue
        name = module.__dict__.get("__name__")
        for value in list(module.__dict__.values()):
            yield value
            if issubclass(type(value), type) and value.__dict__.get("__module__") == name:
                yield from list(value.__dict__.values())


_installed: list[bool] = []
"""Whether :func:`install` ran in this process (once is enough)."""
