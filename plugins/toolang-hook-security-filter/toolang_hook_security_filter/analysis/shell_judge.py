"""Judge shell text by what its commands do, not by how they are spelled.

:func:`judge_shell` parses the text (:mod:`.shell`), unwraps wrappers (``sudo``,
``env``, ``nohup``, ``timeout``, ``xargs``, ``find -exec``, ``sh -c``, ``eval``,
``ssh host cmd`` …), follows scripts fed to a shell through a pipe or a here-string
when their text is static, hands interpreters' inline code and SQL to the judges of
those languages through the dispatcher it is given (:class:`~.judges.Judges`), and asks
:mod:`.programs` what each remaining command does.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from typing import Final

from toolang_hook_security_filter.analysis import cloud_judge, programs, programs_system
from toolang_hook_security_filter.analysis.judges import Judges
from toolang_hook_security_filter.analysis.paths import classify
from toolang_hook_security_filter.analysis.shell import (
    MAX_DEPTH,
    Cmd,
    Script,
    output_of,
    parse,
    program_name,
)
from toolang_hook_security_filter.analysis.verdicts import Finding, approve, block

SHELLS: Final = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "busybox", "csh"})
INTERPRETERS: Final = {
    "python": "python", "python2": "python", "python3": "python", "pypy3": "python",
    "node": "js", "nodejs": "js", "deno": "js", "bun": "js",
    "perl": "perl", "ruby": "ruby", "php": "php",
    "pwsh": "powershell", "powershell": "powershell", "powershell.exe": "powershell",
}  # fmt: skip
INLINE_FLAGS: Final = {
    "python": ("-c",), "js": ("-e", "--eval", "-p", "--print"), "perl": ("-e", "-E"),
    "ruby": ("-e",), "php": ("-r",),
    "powershell": ("-c", "-command", "-encodedcommand", "-enc", "-e", "-ec"),
}  # fmt: skip
DOWNLOADERS: Final = frozenset({"curl", "wget", "fetch", "aria2c", "iwr", "invoke-webrequest"})
_WRAPPER_OPTS: Final = {
    "sudo": frozenset(["-u", "-g", "-h", "-p", "-c", "-r", "-t", "-C", "-D", "-U", "-T"]),
    "doas": frozenset(["-u", "-C"]),
    "nice": frozenset(["-n"]),
    "ionice": frozenset(["-c", "-n", "-p"]),
    "timeout": frozenset(["-s", "-k", "--signal", "--kill-after"]),
    "stdbuf": frozenset(["-i", "-o", "-e"]),
    "flock": frozenset(["-w", "-E"]),
    "watch": frozenset(["-n", "-d"]),
}
_PLAIN_WRAPPERS: Final = frozenset(
    {"nohup", "time", "command", "builtin", "exec", "setsid", "nocorrect", "noglob", "unbuffer"}
)
_DECODERS: Final = frozenset(
    {"base64", "xxd", "rev", "openssl", "gzip", "zcat", "gunzip", "uudecode"}
)
_XARGS_OPTS: Final = frozenset(
    ["-I", "-i", "-n", "-P", "-L", "-d", "-E", "-s", "-a", "--max-args", "--max-procs"]
)


def judge_shell(text: str, depth: int, judges: Judges) -> list[Finding]:
    """Every finding about what ``text`` would run, most serious first not guaranteed."""
    if depth > MAX_DEPTH or not text.strip():
        return []
    first = re.match(r"\s*([A-Za-z]+-[A-Za-z]+)\b", text)
    if first and first.group(1).lower() not in programs.PROGRAMS:  # a PowerShell cmdlet
        return judges.code("powershell", text, depth + 1)
    script = parse(text, depth)
    found = _fork_bombs(script)  # cached by (text, depth): rendering parsed it already
    found.extend(_downloaded_then_run(script))
    cwd = ""  # where `cd` went: `cd / && rm -rf *` deletes /*
    for cmd in script.commands:
        if cmd.program in ("cd", "pushd") and not cmd.stdin_from:
            target = next((a for a in cmd.argv[1:] if not a.startswith("-")), "~")
            cwd = (
                target
                if target.startswith(("/", "~"))
                else posixpath.join(cwd, target)
                if cwd
                else ""
            )
            continue
        found.extend(judge_command(cmd, script, depth, judges, cwd))
    return found


def judge_command(
    cmd: Cmd, script: Script, depth: int, judges: Judges, cwd: str = ""
) -> list[Finding]:
    argv = unwrap(cmd, script)
    if cwd and classify(cwd) != "local" and len(argv) > 1:
        argv = [argv[0], *(_under(cwd, a) for a in argv[1:])]
    cmd.unwrapped = argv
    found = programs.redirects(cmd, depth, judges)
    found.extend(programs_system.environment(cmd))
    if not argv:
        return found
    prog = program_name(argv[0])
    args = argv[1:]
    if re.fullmatch(r"[a-z]+-[a-z]+", prog) and prog not in programs.PROGRAMS:
        found.extend(judges.code("powershell", " ".join(argv), depth + 1))  # a cmdlet
        return found
    if prog in cloud_judge.SQL_CLIENTS or prog in ("mongo", "mongosh"):
        for op, text in cmd.redirects:
            if op == "<<<":
                finding = (
                    judges.sql(text) if prog in cloud_judge.SQL_CLIENTS else judges.nosql(text)
                )
                found.extend([finding] if finding is not None else [])
    nested = _nested(prog, args, cmd, script, depth, judges=judges)
    if nested is not None:
        found.extend(nested)
        if prog in programs.NETWORK:
            sent = programs.network(args, cmd, script, judges)
            found.extend([sent] if sent is not None else [])
        return found
    finding = programs.judge(prog, args, cmd, script, judges)
    if finding is not None:
        found.append(finding)
    return found


def _under(cwd: str, word: str) -> str:
    """``word`` as a path under ``cwd`` when it is a relative path (not an option)."""
    if not word or word.startswith(("-", "/", "~", "$")) or "=" in word or "://" in word:
        return word
    return posixpath.join(cwd, word)


def unwrap(cmd: Cmd, script: Script) -> list[str]:
    """``cmd``'s argv with wrappers (``sudo``, ``env``, ``xargs`` …) taken off."""
    argv = list(cmd.argv)
    for _ in range(8):
        if not argv:
            return argv
        inner = _unwrapped_once(program_name(argv[0]), argv, cmd)
        if inner is None:
            return argv
        argv = inner
    return argv


def _unwrapped_once(prog: str, argv: list[str], cmd: Cmd) -> list[str] | None:
    """``argv`` without its first wrapper, or ``None`` when ``prog`` wraps nothing."""
    if prog in _PLAIN_WRAPPERS:
        argv = argv[1:]
        while argv and argv[0].startswith("-"):
            argv = argv[1:]
        return argv
    if prog in _WRAPPER_OPTS:
        argv = _skip_options(argv[1:], _WRAPPER_OPTS[prog])
        return argv[1:] if prog == "timeout" and argv else argv  # timeout: the duration
    unwrapper = _UNWRAPPERS.get(prog)
    return unwrapper(argv, cmd) if unwrapper is not None else None


def _env(argv: list[str], cmd: Cmd) -> list[str] | None:
    argv = argv[1:]
    while argv and (argv[0].startswith("-") or "=" in argv[0]):
        argv = argv[2:] if argv[0] in ("-u", "--unset", "-C", "--chdir") else argv[1:]
    return argv


def _busybox(argv: list[str], cmd: Cmd) -> list[str] | None:
    return argv[1:] if len(argv) > 1 and argv[1] not in SHELLS else None


def _xargs(argv: list[str], cmd: Cmd) -> list[str] | None:
    argv = _skip_options(argv[1:], _XARGS_OPTS) or ["echo"]
    words = _stdin_words(cmd)
    if "{}" in argv:
        return [x for w in argv for x in (words if w == "{}" else [w])]
    return [*argv, *words]


_UNWRAPPERS: Final[dict[str, Callable[[list[str], Cmd], list[str] | None]]] = {
    "env": _env,
    "busybox": _busybox,
    "xargs": _xargs,
}


def _skip_options(args: list[str], with_value: frozenset[str]) -> list[str]:
    while args and args[0].startswith("-"):
        if args[0] == "--":
            return args[1:]
        args = args[2:] if args[0] in with_value else args[1:]
    return args


def _stdin_words(cmd: Cmd) -> list[str]:
    """The words piped into ``cmd`` (``xargs``), when they are knowable."""
    source = cmd.stdin_from
    if source is None:
        return []
    out = output_of(source)
    if out is not None:
        return out.split()
    if source.program in ("ls", "find", "locate", "fd") and len(source.argv) > 1:
        return [a for a in source.argv[1:] if not a.startswith("-")][:1] or ["."]
    return ["$DYN"]


def _nested(
    prog: str, args: list[str], cmd: Cmd, script: Script, depth: int, *, judges: Judges
) -> list[Finding] | None:
    """Findings about code ``prog`` runs from its arguments or standard input, or
    ``None`` when ``prog`` runs no nested code."""
    if prog in SHELLS or prog in ("su", "eval", "ssh", "runuser", "source", ".", "cmd"):
        return _nested_shell(prog, args, cmd, script, depth, judges=judges)
    lang = INTERPRETERS.get(prog)
    if lang is None:
        return None
    return _nested_code(lang, args, cmd, script, depth, judges=judges)


def _nested_shell(
    prog: str, args: list[str], cmd: Cmd, script: Script, depth: int, *, judges: Judges
) -> list[Finding]:
    """Findings about the script a shell (``sh -c``, ``eval``, ``ssh host cmd`` …) runs."""
    if "-n" in args:  # a syntax check runs nothing
        return []
    script_text = _shell_script(prog, args)
    decoded = any(c.program in _DECODERS and c is not cmd for c in script.commands)
    if decoded and (script_text is not None or any(cmd.dynamic)):
        found = judge_shell(script_text, depth + 1, judges) if script_text else []
        return [*found, approve("obfuscated-script", "runs a script it decodes first")]
    if script_text is not None:
        if "$DYN" in script_text and any(c.program in DOWNLOADERS for c in script.commands):
            return [block("download-exec", "runs code fetched from the network")]
        return judge_shell(script_text, depth + 1, judges)
    if prog in ("cmd", "eval", "ssh", "su", "runuser"):
        return []
    return _from_stdin(cmd, script, depth, "shell", judges)


def _nested_code(
    lang: str, args: list[str], cmd: Cmd, script: Script, depth: int, *, judges: Judges
) -> list[Finding]:
    """Findings about the code an interpreter of ``lang`` runs (``python -c`` …)."""
    code = _inline_code(lang, args)
    if code is not None:
        return judges.code(lang, code, depth + 1)
    if lang == "powershell" and args and not args[0].startswith("-"):
        return judges.code(lang, " ".join(args), depth + 1)
    if any(not a.startswith("-") for a in args) and "-" not in args:
        return []  # runs a script file: nothing to read here
    return _from_stdin(cmd, script, depth, lang, judges)


def _inline_code(lang: str, args: list[str]) -> str | None:
    """The code given after an inline flag (``-c``, ``-e``, ``-Command`` …), if any."""
    flags = INLINE_FLAGS[lang]
    for index, arg in enumerate(args):
        lowered = arg.lower()
        if lowered in flags and index + 1 < len(args):
            code = " ".join(args[index + 1 :]) if lang == "powershell" else args[index + 1]
            if lowered in ("-encodedcommand", "-enc", "-e", "-ec") and lang == "powershell":
                code = _utf16_b64(code) or code
            return code
    return None


def _shell_script(prog: str, args: list[str]) -> str | None:
    if prog == "eval":
        return " ".join(args)
    if prog == "cmd":
        lowered = [a.lower() for a in args]
        for flag in ("/c", "/k"):
            if flag in lowered:
                return " ".join(args[lowered.index(flag) + 1 :])
        return None
    if prog == "ssh":
        rest = _skip_options(
            args,
            frozenset(
                [
                    "-p",
                    "-i",
                    "-l",
                    "-o",
                    "-F",
                    "-J",
                    "-L",
                    "-R",
                    "-D",
                    "-b",
                    "-c",
                    "-E",
                    "-m",
                    "-S",
                    "-W",
                    "-w",
                ]
            ),
        )
        return " ".join(rest[1:]) if len(rest) > 1 else None
    for index, arg in enumerate(args):
        if re.fullmatch(r"-[a-z]*c[a-z]*", arg) and index + 1 < len(args):
            return args[index + 1]
        if prog in ("su", "runuser") and arg in ("--command",) and index + 1 < len(args):
            return args[index + 1]
    return None


def _from_stdin(cmd: Cmd, script: Script, depth: int, lang: str, judges: Judges) -> list[Finding]:
    """Findings about the script ``cmd`` reads from a pipe or a here-string."""
    fed = [text for op, text in cmd.redirects if op == "<<<"]
    source = cmd.stdin_from
    if not fed and source is None:
        if any(cmd.dynamic) and any(c.program in DOWNLOADERS for c in script.commands):
            return [block("download-exec", "runs code fetched from the network")]
        return []
    upstream = _chain(source)
    if any(c.program in DOWNLOADERS for c in upstream):
        return [block("download-exec", "pipes code fetched from the network into an interpreter")]
    texts = list(fed)
    found: list[Finding] = []
    if source is not None:
        out = output_of(source)
        if out is None:
            return [approve("piped-script", "runs a script whose text is only known at run time")]
        texts.append(out)
        if any(
            c.program in ("base64", "xxd", "rev", "openssl", "gzip", "zcat", "tr") for c in upstream
        ):
            found.append(approve("obfuscated-script", "runs a script it decodes first"))
    for text in texts:
        found.extend(
            judge_shell(text, depth + 1, judges)
            if lang == "shell"
            else judges.code(lang, text, depth + 1)
        )
    return found


def _chain(cmd: Cmd | None) -> list[Cmd]:
    chain: list[Cmd] = []
    while cmd is not None and len(chain) < 16:
        chain.append(cmd)
        cmd = cmd.stdin_from
    return chain


def _utf16_b64(text: str) -> str | None:
    import base64
    import binascii

    try:
        return base64.b64decode(text).decode("utf-16-le")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


def _fork_bombs(script: Script) -> list[Finding]:
    for cmd in script.commands:
        if (
            cmd.argv
            and cmd.argv[0] in ("%0", "$0", "$DYN")
            and (cmd.background or _feeds(cmd, script))
        ):
            return [block("fork-bomb", "a script that starts copies of itself (fork bomb)")]
        if cmd.loop and cmd.background and cmd.argv and cmd.argv[0] in ("$0", "$DYN"):
            return [block("fork-bomb", "starts copies of itself in an endless loop")]
        spawns = cmd.background or cmd.stdin_from is not None or _feeds(cmd, script)
        if cmd.function is not None and cmd.program == cmd.function.lower() and spawns:
            return [block("fork-bomb", "a function that spawns copies of itself (fork bomb)")]
        if cmd.loop and cmd.background and cmd.program in SHELLS:
            return [block("fork-bomb", "starts shells in an endless loop")]
    return []


def _feeds(cmd: Cmd, script: Script) -> bool:
    return any(other.stdin_from is cmd for other in script.commands)


def _downloaded_then_run(script: Script) -> list[Finding]:
    """``wget URL && sh file``, ``curl -o f URL && chmod +x f && ./f``, ``tftp -g -r f``."""
    fetched: set[str] = set()
    for cmd in script.commands:
        args = cmd.argv[1:]
        prog = cmd.program
        if prog in ("curl", "wget", "tftp", "certutil", "bitsadmin", "aria2c"):
            for index, arg in enumerate(args):
                if arg in ("-O", "-o", "--output", "--output-document", "-r") and index + 1 < len(
                    args
                ):
                    fetched.add(args[index + 1].rsplit("/", 1)[-1])
                elif "://" in arg:
                    fetched.add(arg.rstrip("/").rsplit("/", 1)[-1])
                elif prog in ("certutil", "bitsadmin") and not arg.startswith(("-", "/")):
                    fetched.add(re.split(r"[\\/]", arg)[-1])
            continue
        if not cmd.argv:
            continue
        target = cmd.argv[0]
        if prog in SHELLS or prog in INTERPRETERS:
            ops = [a for a in args if not a.startswith("-")]
            target = ops[0] if ops else ""
        name = re.split(r"[\\/]", target)[-1]
        if (
            name
            and name in fetched
            and prog not in ("chmod", "ls", "cat", "file", "sha256sum", "less")
        ):
            return [block("download-exec", f"runs {name!r}, downloaded just before")]
    return []


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
