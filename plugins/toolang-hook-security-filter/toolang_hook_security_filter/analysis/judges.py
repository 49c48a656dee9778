"""The dispatcher as a judge sees it: how one language's judge hands text in another
language to that language's judge.

A shell command runs inline Python (``python -c …``), Python runs a shell command
(``os.system(…)``), a database client runs SQL (``psql -c …``): each judge is given a
:class:`Judges` (:class:`~.dispatcher.Dispatcher`) and asks it, instead of importing the
other judges — so no judge module imports another and the import graph has no circle.
"""

from __future__ import annotations

from typing import Protocol

from toolang_hook_security_filter.analysis.verdicts import Finding


class Judges(Protocol):
    """One judge per language; ``depth`` counts how deep nested scripts are followed."""

    def shell(self, text: str, depth: int) -> list[Finding]:
        """Every finding about what shell ``text`` would run."""

    def code(self, lang: str, text: str, depth: int) -> list[Finding]:
        """Findings about inline code in ``lang`` (python, js, perl, ruby, php, powershell)."""

    def sql(self, text: str) -> Finding | None:
        """The finding about SQL ``text``, or ``None``."""

    def nosql(self, text: str) -> Finding | None:
        """The finding about a MongoDB or Redis call, or ``None``."""
