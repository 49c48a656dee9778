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

from toolang_hook_security_filter.verdicts import Finding, worst

if TYPE_CHECKING:
    from toolang_hook_security_filter.shell import Cmd, Script

COMMAND_KEYS: Final = frozenset(
    "command cmd commands shell script bash sh run exec args argv line cmdline command_line "
    "shell_command program".split()
)
CODE_KEYS: Final = frozenset("code source script program snippet expression expr".split())
SQL_KEYS: Final = frozenset("sql statement statements sql_query".split())
_SHELL_TOOL: Final = re.compile(r"exec|shell|bash|terminal|command|run_cmd|ssh|^sh$|^cmd|console", re.I)
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
    elif key in SQL_KEYS or (_SQL_TOOL.search(tool) and key in COMMAND_KEYS | CODE_KEYS | {"query"}):
        kinds.append("sql")
    elif _NOSQL_TOOL.search(tool):
        kinds.append("nosql")
    elif key in COMMAND_KEYS or _SHELL_TOOL.search(tool):
        kinds.append("shell")
    return tuple(kinds)


def _key(where: str) -> str:
    return re.sub(r"\[\d+\]|\s*\(.*\)$", "", where).rsplit(".", 1)[-1]


def parsed(tool: str, where: str) -> bool:
    """Whether the string at ``where`` of a call to ``tool`` is parsed and judged here."""
    return bool(kinds_for(tool, _key(where)))


def judge(tool: str, where: str, text: str) -> Finding | None:
    """The most serious finding about ``text`` found at ``where`` in a call to ``tool``."""
    kinds = kinds_for(tool, _key(where))
    if not kinds:
        return None
    return _judge(kinds, text)


@functools.lru_cache(maxsize=4096)
def _judge(kinds: tuple[str, ...], text: str) -> Finding | None:
    from toolang_hook_security_filter.code import judge_code
    from toolang_hook_security_filter.commands import judge_shell
    from toolang_hook_security_filter.sql import judge_nosql, judge_sql

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
    "echo printf grep egrep fgrep rg ag ack cat less more head tail wc sort uniq jq yq "
    "diff cmp file stat ls man tldr apropos whatis type which base64 xxd rev tr cut fold "
    "od hexdump column nl".split()
)
"""Programs whose words are data, not commands: ``grep 'rm -rf /' docs/`` runs nothing."""


def rendered(tool: str, where: str, text: str) -> str:
    """What the pattern rules see of a parsed string: for shell text, the commands it
    runs (wrappers off), leaving out the words of data programs (``echo``, ``grep`` …)
    unless their output is fed to another command; other kinds as they are."""
    if kinds_for(tool, _key(where)) != ("shell",):
        return text
    return _rendered(text)


@functools.lru_cache(maxsize=4096)
def _rendered(text: str) -> str:
    from toolang_hook_security_filter.commands import unwrap
    from toolang_hook_security_filter.shell import parse, program_name

    script = parse(text)
    consumer = {id(c.stdin_from): c for c in script.commands if c.stdin_from is not None}
    lines = []
    for cmd in script.commands:
        argv = unwrap(cmd, script)
        redirects = " ".join(f"{op} {t}" for op, t in cmd.redirects)
        if not argv:
            lines.append(redirects)
            continue
        if _data_only(cmd, argv, consumer, script):
            writes = [t for op, t in cmd.redirects if op.startswith(">") or op.startswith("&>")]
            lines.append(" ".join([program_name(argv[0]), *(f"> {t}" for t in writes)]))
            continue
        lines.append(" ".join([*argv, redirects]).strip())
    return "\n".join(lines)


def _data_only(cmd: Cmd, argv: list[str], consumer: dict[int, Cmd], script: Script) -> bool:
    """Whether ``cmd`` only handles data: a data program whose output, if piped, goes
    only to more data programs."""
    from toolang_hook_security_filter.commands import unwrap
    from toolang_hook_security_filter.shell import program_name

    node: Cmd | None = cmd
    words = argv
    for _ in range(16):
        if node is None:
            return True
        if not words or program_name(words[0]) not in DATA_PROGRAMS:
            return False
        node = consumer.get(id(node))
        words = unwrap(node, script) if node is not None else []
    return False
