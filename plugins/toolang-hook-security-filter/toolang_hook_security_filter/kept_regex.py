"""The rules' regular expressions, compiled once and then read back like bytecode.

``re`` compiles an expression in Python (parse, then the matching engine's code) and
hands the code to its C engine (``_sre.compile``); for the default policy's ~200
expressions that is 60-80 ms of a core in every process that checks them all (each
``toolang run`` warms the policy as it starts). :func:`compile` keeps the engine's code
of each expression (:class:`toolang_core.KeptFiles`, keyed by the interpreter's exact
version, the engine's ``MAGIC`` and the expression), and the next process hands it to
the engine directly.

What is kept is checked when it is written: it is kept only when the engine, given it,
makes a pattern equal to ``re.compile``'s (same flags, same code, same groups) — so an
interpreter whose ``re`` works otherwise keeps nothing and compiles as usual. What is
read back and is not as it was written (:class:`toolang_core.KeptFiles` checks each
file's digest) or not of the written shape is compiled as usual too. The files are
trusted as bytecode is: whoever may write there may change the plugin's code already.
``re``'s own cache is not involved: the policy holds its patterns.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import marshal
import re
import sys
from typing import Any, Final

from toolang_core import KeptFiles

try:  # CPython's engine and compiler (3.11+); elsewhere: re.compile, nothing kept
    _sre: Any = importlib.import_module("_sre")
    _parser: Any = importlib.import_module("re._parser")
    _compiler: Any = importlib.import_module("re._compiler")
except ImportError:  # pragma: no cover - other interpreters
    _sre = None

_VERSION: Final = f"{sys.version}\0{getattr(_sre, 'MAGIC', '')}"
_files = KeptFiles.beside(__file__, "regex-code")


def compile(pattern: str) -> re.Pattern[str]:
    """``re.compile(pattern)``, from kept engine code when there is some."""
    if _sre is None:
        return re.compile(pattern)
    key = hashlib.sha256(f"{_VERSION}\0{pattern}".encode("utf-8", "surrogatepass")).hexdigest()
    data = _files.read(key)
    if data is not None:
        with contextlib.suppress(Exception):  # not as written: compiled as usual below
            arguments = marshal.loads(data)
            if _well_formed(arguments):
                kept = _sre.compile(pattern, *arguments)
                if isinstance(kept, re.Pattern):
                    return kept
    compiled = re.compile(pattern)
    if _files.writable:  # (finding what to keep compiles it again: only when kept)
        arguments = _engine_arguments(pattern, compiled)
        if arguments is not None:
            _files.write(key, marshal.dumps(arguments))
    return compiled


def _well_formed(arguments: Any) -> bool:
    """Whether ``arguments`` have the shape :func:`_engine_arguments` writes (the file's
    digest already says they are what was written: this is a second look, not a
    defence against someone who may write there)."""
    if not (isinstance(arguments, tuple) and len(arguments) == 5):
        return False
    flags, code, groups, groupindex, indexgroup = arguments
    return (
        type(flags) is int
        and isinstance(code, list)
        and all(type(word) is int and 0 <= word < 2**32 for word in code)
        and type(groups) is int
        and isinstance(groupindex, dict)
        and isinstance(indexgroup, tuple)
        and groups == len(indexgroup) - 1
    )


def _engine_arguments(pattern: str, compiled: re.Pattern[str]) -> tuple[Any, ...] | None:
    """What ``re`` hands the engine for ``pattern`` (as ``re._compiler.compile`` does),
    when the engine makes ``compiled`` of it; else ``None``."""
    try:
        parsed = _parser.parse(pattern, 0)
        code = _compiler._code(parsed, 0)
        groupindex = dict(parsed.state.groupdict)
        indexgroup: list[str | None] = [None] * parsed.state.groups
        for name, index in groupindex.items():
            indexgroup[index] = name
        arguments = (  # plain ints (the opcodes are an int subclass marshal refuses)
            int(parsed.state.flags),
            [int(word) for word in code],
            int(parsed.state.groups - 1),
            {str(name): int(index) for name, index in groupindex.items()},
            tuple(indexgroup),
        )
        made = _sre.compile(pattern, *arguments)
        marshal.dumps(arguments)  # (what cannot be kept is not)
    except Exception:
        return None
    same = (
        made == compiled  # flags, code and expression
        and made.groups == compiled.groups
        and made.groupindex == compiled.groupindex
    )
    return arguments if same else None
