"""The dispatcher: the one :class:`~.judges.Judges`, and the table from a string's kind
to the judge of its language.

:mod:`.kinds` says what a string is (shell, inline code of a language, SQL, a NoSQL
call); :func:`judge` hands it to that language's judge through :data:`JUDGE_OF`. Each
judge is given the :class:`Dispatcher` to judge what it runs in another language
(``python -c`` in a shell command, ``os.system`` in Python, ``psql -c`` …), so the
judges never import one another.

The policy imports this module on the first string it judges, not with itself: a
one-shot run whose calls hold no command loads none of the judges.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Final

from toolang_hook_security_filter.analysis import (
    python_judge,
    script_judge,
    shell_judge,
    sql_judge,
)
from toolang_hook_security_filter.analysis.shell import Cmd, parse, program_name
from toolang_hook_security_filter.analysis.shell_judge import DATA_PROGRAMS, unwrap
from toolang_hook_security_filter.analysis.verdicts import Finding, worst


class Dispatcher:
    """Hands text in each language to that language's judge (:class:`~.judges.Judges`)."""

    def shell(self, text: str, depth: int) -> list[Finding]:
        return shell_judge.judge_shell(text, depth, self)

    def code(self, lang: str, text: str, depth: int) -> list[Finding]:
        if lang == "python":
            return python_judge.judge_python(text, depth, self)
        return script_judge.judge_script(text, depth, lang, self)

    def sql(self, text: str) -> Finding | None:
        return sql_judge.judge_sql(text)

    def nosql(self, text: str) -> Finding | None:
        return sql_judge.judge_nosql(text)


DISPATCHER: Final = Dispatcher()


def _listed(finding: Finding | None) -> list[Finding]:
    return [finding] if finding is not None else []


Judge = Callable[[Dispatcher, str, str], list[Finding]]
"""A judge as the table holds it: ``(dispatcher, language, text)``; the language is the
part of a kind after ``code:`` (``code:python``), empty for the others."""

JUDGE_OF: Final[dict[str, Judge]] = {
    "shell": lambda judges, _, text: judges.shell(text, 0),
    "code": lambda judges, lang, text: judges.code(lang, text, 0),
    "sql": lambda judges, _, text: _listed(judges.sql(text)),
    "nosql": lambda judges, _, text: _listed(judges.nosql(text)),
}
"""The judge of each kind of string (:func:`~.kinds.kinds_of`)."""


def judge(kinds: tuple[str, ...], text: str) -> Finding | None:
    """The most serious finding about ``text`` judged as each of ``kinds``."""
    return _judge(kinds, text) if kinds else None


@functools.lru_cache(maxsize=4096)
def _judge(kinds: tuple[str, ...], text: str) -> Finding | None:
    found: list[Finding] = []
    for kind in kinds:
        family, _, lang = kind.partition(":")
        found.extend(JUDGE_OF[family](DISPATCHER, lang, text))
    return worst(found)


def rendered(kinds: tuple[str, ...], text: str) -> str:
    """What the pattern rules see of a parsed string: for shell text, the commands it
    runs (wrappers off), leaving out the words of data programs (``echo``, ``grep`` …)
    unless their output is fed to another command; other kinds as they are."""
    if kinds != ("shell",):
        return text
    return _rendered(text)


@functools.lru_cache(maxsize=4096)
def _rendered(text: str) -> str:
    script = parse(text, 0)
    argvs = [unwrap(cmd, script) for cmd in script.commands]
    # Data only: a data program whose output, if piped, goes only to more of them —
    # decided from the last command back, so each is looked at once.
    data_only: dict[int, bool] = {}
    consumer = {id(c.stdin_from): c for c in script.commands if c.stdin_from is not None}
    for cmd, argv in zip(reversed(script.commands), reversed(argvs), strict=True):
        after = consumer.get(id(cmd))
        data_only[id(cmd)] = (
            bool(argv)
            and program_name(argv[0]) in DATA_PROGRAMS
            and (after is None or data_only.get(id(after), False))
        )
    lines: list[str] = []
    previous: Cmd | None = None
    for cmd, argv in zip(script.commands, argvs, strict=True):
        redirects = " ".join(f"{op} {t}" for op, t in cmd.redirects)
        if not argv:
            shown = redirects
        elif data_only[id(cmd)]:
            writes = [t for op, t in cmd.redirects if op.startswith(">") or op.startswith("&>")]
            shown = " ".join([program_name(argv[0]), *(f"> {t}" for t in writes)])
        else:  # as written, wrappers and all (the pattern rules know sudo, env …)
            shown = " ".join([*cmd.argv, redirects]).strip()
        if cmd.stdin_from is not None and cmd.stdin_from is previous and lines:
            lines[-1] = f"{lines[-1]} | {shown}"  # the pipe is part of what it does
        else:
            lines.append(shown)
        previous = cmd
    return "\n".join(lines)
