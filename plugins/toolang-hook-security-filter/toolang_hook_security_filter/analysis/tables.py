"""bashlex's parser tables, kept beside this plugin's bytecode instead of built per process.

bashlex builds the LALR tables of its shell grammar each time it is imported (the PLY
it carries keeps no table file): 0.1 to 0.25 s of a core, paid by every ``toolang run``
as it starts (the filter warms its parser there) and by a one-shot run's first shell
command. :func:`keep` wraps bashlex's table builder, as ``bashlex.yacc`` is first
imported, so that the tables of a grammar are built once and then read back
(:class:`toolang_core.KeptFiles`: written and trusted as bytecode is).

The key is a hash of the grammar (its productions with their precedence, the
terminals' precedence, the start) and of the builder's own source, so another bashlex
(or a changed grammar) builds its own. What is read back must be whole (the digest
:class:`toolang_core.KeptFiles` checks) and consistent (every shift, goto and reduce
leads somewhere), else the tables are built again; anything going wrong here leaves
bashlex to build them as it always did.
"""

from __future__ import annotations

import contextlib
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
            try:
                key = _key(source, grammar)
                tables = _tables(files.read(key), len(grammar.Productions))
            except Exception:  # whatever it is, bashlex builds its tables as it always did
                key, tables = None, None
            if tables is None:
                super().__init__(grammar, log)
                if key is not None:
                    with contextlib.suppress(ValueError):  # (unmarshallable: not kept)
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
    """A hash of everything the tables depend on: the builder's source, each production
    (its name, symbols and precedence, which settles conflicts), the terminals'
    precedence and the start symbol."""
    shape = (
        source,
        [(str(p.name), tuple(map(str, p.prod)), repr(p.prec)) for p in grammar.Productions],
        sorted((str(k), repr(v)) for k, v in grammar.Precedence.items()),
        str(grammar.Start),
    )
    return hashlib.sha256(repr(shape).encode()).hexdigest()


def _tables(data: bytes | None, productions: int) -> tuple[dict[Any, Any], dict[Any, Any]] | None:
    """The action and goto tables in ``data``, or ``None`` when it holds none: every
    shift and goto must lead to a state of the table, every reduce name a production
    of the grammar (``productions`` of them), from state 0."""
    if data is None:
        return None
    try:
        action, goto = marshal.loads(data)
    except (ValueError, EOFError, TypeError):
        return None
    if not (isinstance(action, dict) and isinstance(goto, dict) and 0 in action):
        return None
    states = action.keys()
    for row in action.values():
        if not isinstance(row, dict):
            return None
        for move in row.values():  # > 0 shift to a state, < 0 reduce, 0 accept
            if type(move) is not int or (move > 0 and move not in states) or -move >= productions:
                return None
    for state, row in goto.items():
        if state not in states or not isinstance(row, dict):
            return None
        if any(type(target) is not int or target not in states for target in row.values()):
            return None
    return action, goto
