"""Regular expressions that modules compile as they load, from engine code kept on disk.

``re`` compiles an expression in Python (it parses it, then writes the matching
engine's code) and hands the code to its C engine (``_sre.compile``). Modules compile
their expressions as they load — sqlite-utils' statement parsers, PyYAML's reader,
toolang's redaction — some 130 of them in a one-shot ``toolang chat``, in every
process. :func:`install` (run when ``toolang_core`` is imported, before those modules
are) puts the patterns an earlier process kept into ``re``'s own cache, made from their
engine code: a module's ``re.compile`` finds its pattern there, as it would have had
the module compiled it before. At exit, the expressions compiled since *as a module
loaded* (while the import system ran a module's code) that a module still holds — in a
global, or a class's attribute — are added to what is kept.

Only those: an expression built at run time may hold what a program was given (the
pattern of the secrets a redactor hides, a user's search) and must never reach the
disk, even when a module keeps it in a global; and ``__main__`` (a script) never
counts. (An expression a module builds as it loads from what it reads then — an
environment variable — would be kept: toolang's modules build none, and a plugin
should not.) What is kept is checked when it is written: only a pattern the engine
makes equal to ``re.compile``'s (flags, code, groups) from the kept code, compiled
without a warning (:func:`regex_engine_code`), so an interpreter whose ``re`` works
otherwise keeps nothing. The file is kept with :class:`toolang_core.kept.KeptFiles`
beside this package's bytecode, trusted and written as that bytecode is, and keyed by
the interpreter's exact version and engine; what does not read back as written is
compiled as usual. ``TOOLANG_REGEX_CODE_CACHE=0`` leaves ``re`` alone.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib
import importlib.machinery
import itertools
import marshal
import os
import re
import sys
import types
import warnings
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
_ModuleSpec: Final = importlib.machinery.ModuleSpec

MOST_PATTERNS: Final = 256
"""Expressions kept at most (``re`` caches 512: seeding leaves it room for others).
Past it, what is kept starts again from the expressions of the process writing."""
MOST_MODULES: Final = 10_000
"""Names of modules loaded by the processes that kept them, at most."""
_KEY: Final = hashlib.sha256(
    f"{sys.version}\0{getattr(_sre, 'MAGIC', '')}\0module expressions".encode()
).hexdigest()
_TEMPLATE: Final = int(getattr(getattr(re, "_constants", None), "SRE_FLAG_TEMPLATE", 0))
"""The deprecated ``re.TEMPLATE`` flag (compiling with it warns): never kept."""

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
    pattern equal to ``compiled`` and compiling it warns of nothing (a pattern made
    from the code would not warn again); else ``None``. :func:`regex_from_engine_code`
    makes the pattern of it."""
    if _sre is None or compiled.flags & _TEMPLATE:
        return None
    try:
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            parsed = _parser.parse(compiled.pattern, compiled.flags)
            code = _compiler._code(parsed, compiled.flags)
        if warned:
            return None
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
    """Seed ``re``'s cache with the patterns kept by earlier processes and, when the
    folder can be written, note the expressions compiled as modules load and keep
    those at exit. Once a process; nothing when ``TOOLANG_REGEX_CODE_CACHE=0`` or ``re``
    does not cache as this module expects."""
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
            if made is not None:
                cache[key] = _seeded[key] = made
    if files.writable:
        _note_compiled_as_modules_load()
        atexit.register(keep, files, kept)


def keep(files: KeptFiles, kept: Kept) -> None:
    """Add to ``kept`` (and write) the patterns in ``re``'s cache compiled as a module
    loaded (:data:`_loading`) that a module holds (:func:`_held`): at exit. Looking for
    them takes a while (every module's globals and classes), so only a process that
    loaded a module none before it did looks, and only when the folder can be written."""
    cache = _re_cache()
    loaded = set(sys.modules)
    if cache is None or loaded <= kept.modules or not files.writable:
        return
    held = _held()
    ours = {key: p for key, p in _seeded.items() if id(p) in held}  # seeds a module took
    for key, pattern in list(cache.items()):  # (in the order compiled)
        if key in _loading and id(pattern) in held:  # (_loading's keys are re's own)
            ours[key] = pattern
    new = {key: pattern for key, pattern in ours.items() if key not in kept.patterns}
    if len(kept.patterns) + len(new) <= MOST_PATTERNS:
        patterns, modules = dict(kept.patterns), kept.modules | loaded
    else:  # start again from this process's (kept.patterns only ever grew)
        patterns, modules = {}, loaded
        new = ours
    for key, pattern in new.items():
        if len(patterns) >= MOST_PATTERNS:
            break
        code = kept.patterns.get(key) or regex_engine_code(pattern)
        if code is not None:
            patterns[key] = code
    kept.patterns = patterns
    # (past the bound, this process's only: a process like it does not look again)
    kept.modules = modules if len(modules) <= MOST_MODULES else loaded
    records = [(kind is bytes, text, flags, code) for (kind, text, flags), code in patterns.items()]
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
    from ``(type, expression, flags)`` to the pattern (checked by compiling an
    expression new to it; ``re`` 3.12+ also keeps a second cache in front of it)."""
    cache = getattr(re, "_cache", None)
    if not isinstance(cache, dict):
        return None
    probe = f"(?:toolang regex-code probe {next(_probes)})"
    re.compile(probe)
    front = getattr(re, "_cache2", None)
    if isinstance(front, dict):
        front.pop((str, probe, 0), None)
    found = cache.pop((str, probe, 0), None)
    return cache if isinstance(found, re.Pattern) and found.pattern == probe else None


def _note_compiled_as_modules_load() -> None:
    """From now on, add to :data:`_loading` the key of each expression ``re`` compiles
    (a miss of its cache) while a module is loading (:func:`_a_module_loads`)."""
    compile_ = _compiler.compile

    def noting(pattern: Any, flags: Any = 0) -> Any:
        compiled = compile_(pattern, flags)
        if type(pattern) in (str, bytes) and type(flags) is int and _a_module_loads():
            _loading.add((type(pattern), pattern, flags))
        return compiled

    _compiler.compile = noting


def _a_module_loads() -> bool:
    """Whether a module's code is being run by the import system in this thread (a
    frame up the stack has the globals of a module whose spec says it is initializing:
    what ``importlib`` sets while it runs a module's code). Plain lookups only: a
    frame's globals may be of any dict subclass."""
    frame: types.FrameType | None = sys._getframe(2)
    while frame is not None:
        spec = dict.get(frame.f_globals, "__spec__")
        if type(spec) is _ModuleSpec:
            state = vars(spec)
            if state.get("_initializing") is True and state.get("name") != "__main__":
                return True
        frame = frame.f_back
    return False


def _held() -> set[int]:
    """The ids of the patterns modules hold in their globals, or in the attributes of
    the classes among those (what a module compiles as it loads)."""
    return {id(value) for value in _module_values() if type(value) is re.Pattern}


_class_dict = type.__dict__["__dict__"].__get__
"""A class's own namespace, read past any ``__getattribute__`` of its metaclass."""


def _module_values() -> Iterator[Any]:
    """What every loaded module but ``__main__`` holds, and the attributes of the
    classes it defines. Types are compared, never ``isinstance``, and namespaces read
    directly: a proxy's ``__class__`` or a metaclass's attribute lookup may run code."""
    for module in list(sys.modules.values()):
        if type(module) is not types.ModuleType:  # e.g. not loaded yet (a LazyLoader's)
            continue
        namespace = module.__dict__
        name = dict.get(namespace, "__name__")
        if type(name) is not str or name == "__main__":
            continue
        for value in list(namespace.values()):
            yield value
            if issubclass(type(value), type):
                with contextlib.suppress(Exception):
                    attributes = _class_dict(value)
                    defined_in = attributes.get("__module__")
                    if type(defined_in) is str and defined_in == name:
                        yield from list(attributes.values())


_installed: list[bool] = []
"""Whether :func:`install` ran in this process (once is enough)."""
_seeded: dict[CacheKey, re.Pattern[Any]] = {}
"""The patterns :func:`install` put in ``re``'s cache."""
_loading: set[CacheKey] = set()
"""The keys of the expressions compiled while a module loaded (the only ones kept)."""
_probes: Final = itertools.count()
"""Numbers each look at ``re``'s cache (each compiles an expression new to it)."""
