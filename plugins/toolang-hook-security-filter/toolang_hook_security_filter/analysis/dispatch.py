"""Which parameter is judged as what: shell, inline code of a language, SQL.

A string is judged as a shell command when its key says so (``command``, ``cmd``,
``script`` …) or its tool runs commands (``exec_run``, ``shell``, ``bash`` …); as code
when the tool runs a language (``python_run``, ``node_eval``, ``powershell``); as SQL
when its key or tool is about SQL. Free text — a file's content, a chat message, a
search query — is not run, so a command quoted in it is not judged as one (the
pattern rules of :mod:`.rules` still look at every string).
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Final

from toolang_hook_security_filter.analysis.verdicts import Finding, worst

if TYPE_CHECKING:
    from toolang_hook_security_filter.analysis.shell import Cmd

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
    from toolang_hook_security_filter.analysis import cloud_judge, programs, shell_judge

    return frozenset(
        {
            *programs.PROGRAMS,
            *shell_judge.SHELLS,
            *shell_judge.INTERPRETERS,
            *cloud_judge.PROGRAMS,
            *DATA_PROGRAMS,
        }
    )


def judge(kinds: tuple[str, ...], text: str) -> Finding | None:
    """The most serious finding about ``text`` judged as each of ``kinds``."""
    return _judge(kinds, text) if kinds else None


@functools.lru_cache(maxsize=4096)
def _judge(kinds: tuple[str, ...], text: str) -> Finding | None:
    from toolang_hook_security_filter.analysis.code_judge import judge_code
    from toolang_hook_security_filter.analysis.shell_judge import judge_shell
    from toolang_hook_security_filter.analysis.sql_judge import judge_nosql, judge_sql

    found: list[Finding] = []
    for kind in kinds:
        if kind == "shell":
            found.extend(judge_shell(text))
        elif kind.startswith("code:"):
            found.extend(judge_code(kind[5:], text))
        elif kind == "sql":
            finding = judge_sql(text)
            found.extend([finding] if finding is not None else [])
        elif kind == "nosql":
            finding = judge_nosql(text)
            found.extend([finding] if finding is not None else [])
    return worst(found)


DATA_PROGRAMS: Final = frozenset(
    [
        "echo",
        "printf",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ag",
        "ack",
        "cat",
        "less",
        "more",
        "head",
        "tail",
        "wc",
        "sort",
        "uniq",
        "jq",
        "yq",
        "diff",
        "cmp",
        "file",
        "stat",
        "ls",
        "man",
        "tldr",
        "apropos",
        "whatis",
        "type",
        "which",
        "base64",
        "xxd",
        "rev",
        "tr",
        "cut",
        "fold",
        "od",
        "hexdump",
        "column",
        "nl",
    ]
)
"""Programs whose words are data, not commands: ``grep 'rm -rf /' docs/`` runs nothing."""


def rendered(kinds: tuple[str, ...], text: str) -> str:
    """What the pattern rules see of a parsed string: for shell text, the commands it
    runs (wrappers off), leaving out the words of data programs (``echo``, ``grep`` …)
    unless their output is fed to another command; other kinds as they are."""
    if kinds != ("shell",):
        return text
    return _rendered(text)


@functools.lru_cache(maxsize=4096)
def _rendered(text: str) -> str:
    from toolang_hook_security_filter.analysis.shell import parse, program_name
    from toolang_hook_security_filter.analysis.shell_judge import unwrap

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
