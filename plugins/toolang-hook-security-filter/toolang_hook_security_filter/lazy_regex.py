"""A built-in rule's regular expression, compiled the first time a string is checked
against it.

The default policy holds some 230 expressions; compiling them all costs a fresh process
a few hundred milliseconds, inside its first tool call. The hint index (hints.py) runs
only the expressions whose hints a string holds, so a call compiles only those it may
match, and each is compiled once per process (from code kept by an earlier process:
:mod:`.kept_regex`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Protocol

from toolang_hook_security_filter import kept_regex


class Searches(Protocol):
    """What the policy asks of a rule's expression (``re.Pattern`` has it too)."""

    def search(self, string: str) -> re.Match[str] | None: ...


class LazyPattern:
    """``re.compile(prepare(source))``, done by the first :meth:`search`. After it,
    ``search`` is the compiled pattern's own method (an attribute of the instance): the
    hot path pays nothing for the laziness."""

    def __init__(self, source: str, prepare: Callable[[str], str] | None = None) -> None:
        self.source = source
        self.prepare = prepare

    @property
    def pattern(self) -> str:
        """The expression compiled (``source`` as ``prepare`` makes it)."""
        return self.prepare(self.source) if self.prepare is not None else self.source

    def search(self, string: str) -> re.Match[str] | None:
        compiled = kept_regex.compile(self.pattern)
        # Two threads may both get here: each compiles the same pattern, either wins.
        self.search = compiled.search  # type: ignore[method-assign]
        return compiled.search(string)

    def __repr__(self) -> str:
        return f"LazyPattern({self.source!r})"
