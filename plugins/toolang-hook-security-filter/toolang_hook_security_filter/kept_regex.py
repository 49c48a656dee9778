"""The rules' regular expressions, compiled once and then read back like bytecode.

``re`` compiles an expression in Python (parse, then the matching engine's code) and
hands the code to its C engine (``_sre.compile``); for the default policy's ~200
expressions that is 60-80 ms of a core in every process that checks them all (each
``toolang run`` warms the policy as it starts). :func:`compile` keeps the engine's code
of each expression (:func:`toolang_core.regex_engine_code`, in
:class:`toolang_core.KeptFiles` keyed by the interpreter's exact version, the engine's
``MAGIC`` and the expression), and the next process hands it to the engine directly
(:func:`toolang_core.regex_from_engine_code`).

What is kept is checked when it is written: it is kept only when the engine, given it,
makes a pattern equal to ``re.compile``'s (same flags, same code, same groups) — so an
interpreter whose ``re`` works otherwise keeps nothing and compiles as usual. What is
read back and is not as it was written (:class:`toolang_core.KeptFiles` checks each
file's digest) or not of the written shape is compiled as usual too. The files are
trusted as bytecode is: whoever may write there may change the plugin's code already.
``re``'s own cache is not involved: the policy holds its patterns.
"""

from __future__ import annotations

import hashlib
import marshal
import re
import sys
from typing import Final

from toolang_core import KeptFiles, regex_engine_code, regex_from_engine_code

_VERSION: Final = f"{sys.version}\0{getattr(getattr(re, '_constants', None), 'MAGIC', '')}"
_files = KeptFiles.beside(__file__, "regex-code")


def compile(pattern: str) -> re.Pattern[str]:
    """``re.compile(pattern)``, from kept engine code when there is some."""
    key = hashlib.sha256(f"{_VERSION}\0{pattern}".encode("utf-8", "surrogatepass")).hexdigest()
    data = _files.read(key)
    if data is not None:
        try:
            code = marshal.loads(data)
        except (ValueError, EOFError, TypeError):  # not as written: compiled as usual below
            code = None
        kept = regex_from_engine_code(pattern, code)
        if kept is not None:
            return kept
    compiled = re.compile(pattern)
    if _files.writable:  # (finding what to keep compiles it again: only when kept)
        code = regex_engine_code(compiled)
        if code is not None:
            _files.write(key, marshal.dumps(code))
    return compiled
