"""Which parameter is judged as what: shell, inline code of a language, SQL.

A string is judged as a shell command when its key says so (``command``, ``cmd``,
``script`` …) or its tool runs commands (``exec_run``, ``shell``, ``bash`` …); as code
when the tool runs a language (``python_run``, ``node_eval``, ``powershell``); as SQL
when its key or tool is about SQL. Free text — a file's content, a chat message, a
search query — is not run, so a command quoted in it is not judged as one (the
pattern rules of :mod:`~toolang_hook_security_filter.rules` still look at every string).
:mod:`.dispatcher` hands the string to the judge of each kind.
"""

from __future__ import annotations

import functools
import re
from typing import Final

COMMAND_KEYS: Final = frozenset(
    [
        "command",
        "cmd",
        "commands",
        "shell",
        "script",
        "bash",
        "sh",
        "run",
        "exec",
        "args",
        "argv",
        "line",
        "cmdline",
        "command_line",
        "shell_command",
        "program",
    ]
)
CODE_KEYS: Final = frozenset(
    ["code", "source", "script", "program", "snippet", "expression", "expr"]
)
SQL_KEYS: Final = frozenset(["sql", "statement", "statements", "sql_query"])
_SHELL_TOOL: Final = re.compile(
    r"exec|shell|bash|terminal|command|run_cmd|ssh|^sh$|^cmd|console", re.I
)
_LANG_TOOL: Final = (
    (re.compile(r"powershell|pwsh", re.I), "powershell"),
    (re.compile(r"python|ipython|jupyter", re.I), "python"),
    (re.compile(r"node|javascript|\bjs\b|_js|deno", re.I), "js"),
    (re.compile(r"ruby", re.I), "ruby"),
    (re.compile(r"perl", re.I), "perl"),
    (re.compile(r"php", re.I), "php"),
)
_SQL_TOOL: Final = re.compile(r"sql|database|\bdb\b|_db|db_|query", re.I)
_NOSQL_TOOL: Final = re.compile(r"mongo|redis", re.I)


@functools.lru_cache(maxsize=1024)
def kinds_for(tool: str, key: str) -> tuple[str, ...]:
    """How a string under ``key`` of a call to ``tool`` is judged (may be several)."""
    key = key.lower()
    kinds: list[str] = []
    lang = next((lang for regex, lang in _LANG_TOOL if regex.search(tool)), None)
    if lang is not None and (key in CODE_KEYS or key in COMMAND_KEYS):
        kinds.append(f"code:{lang}")
    elif key in SQL_KEYS or (
        _SQL_TOOL.search(tool) and key in COMMAND_KEYS | CODE_KEYS | {"query"}
    ):
        kinds.append("sql")
    elif _NOSQL_TOOL.search(tool):
        kinds.append("nosql")
    elif key in COMMAND_KEYS or _SHELL_TOOL.search(tool):
        kinds.append("shell")
    return tuple(kinds)


_PLACE_NOISE: Final = re.compile(r"\[\d+\]|\s*\(.*\)$")


@functools.lru_cache(maxsize=4096)
def _key(where: str) -> str:
    """The key a string sits under (``options.script`` → ``script``, ``args[2]`` →
    ``args``); places repeat from call to call (parameter names), so answers are kept."""
    return _PLACE_NOISE.sub("", where).rsplit(".", 1)[-1]


_PYTHON: Final = re.compile(
    r"\s*(import \w|from [\w.]+ import |def \w+\(|print\(|exec\(|__import__\()"
)
_PROSE_END: Final = re.compile(r"[.!?]\s*$")
_FIRST_WORD: Final = re.compile(r"\s*(?:sudo\s+|env\s+|nohup\s+|exec\s+)*([\w./\\:-]+)")


def kinds_of(tool: str, where: str, text: str) -> tuple[str, ...]:
    """How the string ``text`` at ``where`` of a call to ``tool`` is judged: by its key
    and tool (:func:`kinds_for`), else by its look — a string that starts with a known
    program is a command wherever it sits, one that starts like Python is code. Prose
    (``"Reboot the staging box on Fridays."``) is none of these."""
    kinds = kinds_for(tool, _key(where))
    if kinds or len(text) > 100_000:
        return kinds
    if _PYTHON.match(text):
        return ("code:python",)
    first = _FIRST_WORD.match(text)
    if first is None or _PROSE_END.search(text):
        return ()
    return ("shell",) if _is_program(first.group(1)) else ()


@functools.lru_cache(maxsize=4096)
def _is_program(word: str) -> bool:
    from toolang_hook_security_filter.analysis.shell import program_name

    name = program_name(word)
    return (
        name in _known_programs()
        or word.startswith(("/bin/", "/usr/", "./", "~/"))
        or name.startswith("mkfs")
    )


@functools.cache
def _known_programs() -> frozenset[str]:
    # Imported on the first string that needs them, not with the policy: a one-shot
    # run whose calls hold no such string never loads the judges.
    from toolang_hook_security_filter.analysis import cloud_judge, programs, shell_judge

    return frozenset(
        {
            *programs.PROGRAMS,
            *shell_judge.SHELLS,
            *shell_judge.INTERPRETERS,
            *cloud_judge.PROGRAMS,
            *shell_judge.DATA_PROGRAMS,
        }
    )
