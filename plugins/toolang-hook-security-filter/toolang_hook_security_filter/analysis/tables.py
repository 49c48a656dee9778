"""bashlex's parser tables, kept beside this plugin's bytecode instead of built per process.

bashlex builds the LALR tables of its shell grammar each time it is imported (the PLY
it carries keeps no table file): 0.1 to 0.25 s of a core, paid by every ``toolang run``
as it starts (the filter warms its parser there) and by a one-shot run's first shell
command. :func:`keep` wraps bashlex's table builder, as ``bashlex.yacc`` is first
imported, so that the tables of a grammar are built once and then read back
(:class:`toolang_core.KeptFiles`: written and trusted as bytecode is).

The key is a hash of the grammar (its productions, precedence and start) and of the
builder's own source, so another bashlex (or a changed grammar) builds its own. What is
read back must have the tables' shape, else they are built again.
"""

from __future__ import annotations

import hashlib
import marshal
import types
from pathlib import Path
from typing import Any, Final

from toolang_core import KeptFiles, after_import

MODULE: Final = "bashlex.yacc"
"""The module of bashlex that builds its parser tables (``LRTable``)."""

_kept: list[bool] = []
"""Whether :func:`keep` ran in this process (once is enough)."""


def keep() -> None:
    """Read bashlex's tables back from now on (call before bashlex is imported; once
    it is, its parser is built and this changes nothing)."""
    if not _kept:
        _kept.append(True)
        after_import(MODULE, _wrap)


def _wrap(yacc: types.ModuleType) -> None:
    """Replace ``yacc.LRTable`` with a builder that reads tables it built before."""
    built: Any = getattr(yacc, "LRTable", None)
    try:
        source = hashlib.sha256(Path(str(yacc.__file__)).read_bytes()).hexdigest()
    except OSError:  # (not a plain file): bashlex builds its tables as it always did
        return
    if not isinstance(built, type):
        return
    files = KeptFiles.beside(__file__, "bashlex-tables")

    class KeptTable(built):  # type: ignore[misc]
        lr_action: dict[Any, Any]
        lr_goto: dict[Any, Any]

        def __init__(self, grammar: Any, log: Any = None) -> None:
            key = _key(source, grammar)
            tables = _tables(files.read(key))
            if tables is None:
                super().__init__(grammar, log)
                files.write(key, marshal.dumps((self.lr_action, self.lr_goto)))
                return
            # What LRTable leaves for yacc() and LRParser, without building anything.
            self.grammar, self.log = grammar, log
            self.lr_productions = grammar.Productions
            self.lr_action, self.lr_goto = tables
            self.sr_conflict = self.rr_conflict = 0
            self.conflicts: list[Any] = []
            self.sr_conflicts: list[Any] = []
            self.rr_conflicts: list[Any] = []

    setattr(yacc, "LRTable", KeptTable)  # noqa: B010


def _key(source: str, grammar: Any) -> str:
    """A hash of everything the tables depend on."""
    shape = (
        source,
        [str(p) for p in grammar.Productions],
        sorted((str(k), repr(v)) for k, v in grammar.Precedence.items()),
        str(grammar.Start),
    )
    return hashlib.sha256(repr(shape).encode()).hexdigest()


def _tables(data: bytes | None) -> tuple[dict[Any, Any], dict[Any, Any]] | None:
    """The action and goto tables in ``data``, or ``None`` when it holds none."""
    if data is None:
        return None
    try:
        action, goto = marshal.loads(data)
    except (ValueError, EOFError, TypeError):
        return None
    if not (isinstance(action, dict) and isinstance(goto, dict) and action):
        return None
    if not all(isinstance(row, dict) for row in (*action.values(), *goto.values())):
        return None
    return action, goto
