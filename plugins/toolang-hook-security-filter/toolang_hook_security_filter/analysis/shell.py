"""Shell text → the simple commands it runs, with what is statically knowable resolved.

``bashlex`` parses the text into lists, pipelines, commands, words and redirections;
this module flattens that into :class:`Cmd` records (argv, redirections, the command
feeding its standard input) and resolves what a reader can know without running
anything: ANSI-C quoting (``$'\\x72\\x6d'``), variables assigned earlier in the same
text, ``$(…)`` and backticks whose output is static (``echo``, ``printf``, ``base64 -d``,
``rev``, ``xxd -r -p`` chains), and ``for`` loops over literal words. A word that stays
unknown is marked dynamic. Commands inside substitutions are returned too: they run.

Text that bashlex cannot parse (it misses some syntax) is split by a plain tokenizer
instead, so nothing escapes judgement by being unparsable.

bashlex is imported by the first :func:`parse`, not with this module: importing it
builds its LALR tables (0.1 to 0.25 s of a core; read back from disk after the first
process, :mod:`.tables`), which a call whose strings hold no shell text never needs.
:func:`warm` does it ahead, off the event loop.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import functools
import re
import shlex
from collections.abc import Callable
from typing import Any, ClassVar, Final

import attrs

from toolang_hook_security_filter.analysis import tables

MAX_PARSE: Final = 20_000
"""Longer text skips bashlex (a Python LR parser) for the linear tokenizer."""
MAX_DEPTH: Final = 6
"""How deep decoded / nested scripts are followed."""

HOME: Final = "~"
_ANSI_C: Final = re.compile(r"\$'((?:[^'\\]|\\.)*)'", re.S)
_WINDOWS_PATH: Final = re.compile(r"\b[A-Za-z]:\\|%[A-Z]+%\\")
_SPLIT: Final = re.compile(r"\|\||&&|[;|&\n]")


@attrs.define
class Cmd:
    """One simple command as it would run."""

    argv: list[str]
    dynamic: list[bool]
    """Per word: an expansion in it could not be resolved statically."""
    redirects: list[tuple[str, str]] = attrs.field(factory=list)
    stdin_from: Cmd | None = None
    background: bool = False
    function: str | None = None
    """The shell function whose body holds this command, if any."""
    loop: bool = False
    env: list[str] = attrs.field(factory=list)
    """``NAME=value`` assignments before or instead of the words."""

    unwrapped: list[str] | None = None
    """The argv with wrappers (``sudo``, ``env`` …) taken off, once judged."""

    @property
    def program(self) -> str:
        argv = self.unwrapped if self.unwrapped is not None else self.argv
        return program_name(argv[0]) if argv else ""


@functools.lru_cache(maxsize=4096)
def program_name(word: str) -> str:
    """``/usr/bin/RM.exe`` → ``rm``: the name rules know a program by."""
    name = re.split(r"[/\\]", word)[-1].lower().lstrip("\\")
    return name[:-4] if name.endswith(".exe") else name


@attrs.define
class Script:
    """What a piece of shell text runs."""

    commands: list[Cmd]
    functions: set[str] = attrs.field(factory=set)


def operands(args: list[str]) -> list[str]:
    """The non-option words (everything after ``--``)."""
    out: list[str] = []
    rest = False
    for arg in args:
        if rest or not arg.startswith("-") or arg == "-":
            out.append(arg)
        elif arg == "--":
            rest = True
    return out


def decode_escapes(text: str) -> str:
    """Backslash escapes as ``echo -e`` / ``printf`` / ``$'…'`` read them."""
    try:
        return codecs.decode(text.encode("latin-1", "backslashreplace"), "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return text


def _ansi_c(match: re.Match[str]) -> str:
    decoded = decode_escapes(match.group(1))
    return "'" + decoded.replace("'", "'\"'\"'") + "'"


def warm() -> None:
    """Import bashlex now (its tables are built on import, or read back:
    :mod:`.tables`), so that the first shell text judged does not wait for it."""
    tables.keep()
    import bashlex  # type: ignore[import-untyped]  # noqa: F401


@functools.lru_cache(maxsize=2048)
def parse(text: str, depth: int = 0) -> Script:
    """The commands ``text`` runs (cached: the same commands come back often)."""
    text = _ANSI_C.sub(_ansi_c, text) if "$'" in text else text
    if _WINDOWS_PATH.search(text):  # C:\Windows: keep the backslashes a POSIX shell eats
        text = text.replace("\\", "\\\\")
    walker = _Walker(text, depth)
    if len(text) <= MAX_PARSE:
        tables.keep()
        try:
            import bashlex

            for node in bashlex.parse(text):
                walker.node(node)
            return Script(walker.commands, walker.functions)
        except Exception:  # bashlex raises many kinds; fall back on the tokenizer
            walker = _Walker(text, depth)
    walker.tokens()
    return Script(walker.commands, walker.functions)


def static_output(cmd: Cmd, stdin: str | None) -> str | None:
    """What ``cmd`` writes, when that is knowable from its words (and ``stdin``)."""
    if any(cmd.dynamic):
        return None
    prog, args = cmd.program, cmd.argv[1:]
    if prog == "echo":
        return _echo(args)
    if prog == "printf" and args:
        return _printf(args)
    if stdin is None:
        return None
    transform = _STDIN_TRANSFORMS.get(prog)
    return transform(args, stdin) if transform is not None else None


def _echo(args: list[str]) -> str:
    escapes = False
    while args and re.fullmatch(r"-[neE]+", args[0]):
        escapes = escapes or "e" in args[0]
        args = args[1:]
    out = " ".join(args)
    return decode_escapes(out) if escapes else out


def _printf(args: list[str]) -> str:
    fmt, rest = args[0], args[1:]
    try:
        out = decode_escapes(fmt).replace("%b", "%s")
        return out % tuple(rest) if "%" in out else out
    except (TypeError, ValueError):
        return decode_escapes(fmt)


def _base64(args: list[str], stdin: str) -> str | None:
    if not any(a in ("-d", "--decode", "-D") for a in args):
        return None
    try:
        return base64.b64decode("".join(stdin.split()) + "==").decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return None


def _rev(args: list[str], stdin: str) -> str | None:
    return "\n".join(line[::-1] for line in stdin.split("\n"))


def _xxd(args: list[str], stdin: str) -> str | None:
    if "-r" not in args:
        return None
    try:
        return bytes.fromhex("".join(stdin.split())).decode("utf-8", "replace")
    except ValueError:
        return None


def _cat(args: list[str], stdin: str) -> str | None:
    return stdin if not args else None


_STDIN_TRANSFORMS: Final[dict[str, Callable[[list[str], str], str | None]]] = {
    "base64": _base64,
    "rev": _rev,
    "xxd": _xxd,
    "cat": _cat,
    "tee": _cat,
}
"""Programs whose output is their standard input transformed: ``base64 -d``, ``rev``,
``xxd -r``, and ``cat``/``tee`` with no arguments."""


def output_of(cmd: Cmd) -> str | None:
    """The static output of ``cmd`` together with the pipeline feeding it."""
    chain: list[Cmd] = []
    node: Cmd | None = cmd
    while node is not None and len(chain) < 16:
        chain.append(node)
        node = node.stdin_from
    data: str | None = None
    for step in reversed(chain):
        data = static_output(step, data)
        if data is None:
            return None
    return data


class _Walker:
    def __init__(self, text: str, depth: int) -> None:
        self.text = text
        self.depth = depth
        self.commands: list[Cmd] = []
        self.functions: set[str] = set()
        self.vars: dict[str, str | None] = {
            "HOME": HOME, "PWD": ".", "USER": "user", "TMPDIR": "/tmp", "IFS": " \t\n",
        }  # fmt: skip
        self.function: str | None = None
        self.loop = False

    # -- bashlex nodes ---------------------------------------------------------------

    def node(self, node: Any) -> None:
        visit = _Walker.VISITS.get(node.kind)
        if visit is not None:  # a redirection on its own, a reserved word …: nothing runs
            visit(self, node)

    def pipeline(self, node: Any) -> None:
        previous: Cmd | None = None
        for part in node.parts:
            if part.kind == "pipe":
                continue
            start = len(self.commands)
            self.node(part)
            if start < len(self.commands):
                if previous is not None:
                    self.commands[start].stdin_from = previous
                previous = self.commands[-1]

    def sequence(self, node: Any) -> None:
        for part in node.parts:
            if part.kind == "operator":
                if part.op == "&" and self.commands:
                    self.commands[-1].background = True
                continue
            self.node(part)

    def function_definition(self, node: Any) -> None:
        name = node.parts[0].word
        self.functions.add(name)
        outer_function, self.function = self.function, name
        for part in node.parts[1:]:
            self.node(part)
        self.function = outer_function

    def compound(self, node: Any) -> None:
        outer, self.loop = self.loop, self.loop or node.kind in ("while", "until")
        for part in getattr(node, "list", None) or getattr(node, "parts", []):
            if part.kind not in ("reservedword", "operator"):
                self.node(part)
        self.loop = outer

    def for_loop(self, node: Any) -> None:
        parts = [p for p in node.parts if p.kind != "reservedword"]
        words = [p for p in parts if p.kind == "word"]
        if words:
            name = words[0].word
            values = [self.word(w) for w in words[1:]]
            static = values and all(not dyn for _, dyn in values)
            self.vars[name] = values[0][0] if static else None
        outer, self.loop = self.loop, True
        for part in parts:
            if part.kind not in ("word", "reservedword"):
                self.node(part)
        self.loop = outer

    def command(self, node: Any) -> None:
        argv: list[str] = []
        dynamic: list[bool] = []
        redirects: list[tuple[str, str]] = []
        assignments: list[tuple[str, str | None]] = []
        for part in node.parts:
            if part.kind == "assignment" and not argv:
                name, _, _ = part.word.partition("=")
                value, dyn = self.word(part)
                assignments.append((name, None if dyn else value.partition("=")[2]))
            elif part.kind == "word":
                self.add_word(part, argv, dynamic)
            elif part.kind == "redirect":
                redirects.append(self.redirect(part))
        if not argv:
            for name, assigned in assignments:
                self.vars[name] = assigned
            if not redirects:
                return
        self.note_variables(argv)
        cmd = Cmd(argv, dynamic, redirects, function=self.function, loop=self.loop)
        cmd.env = [f"{n}={v}" for n, v in assignments]
        self.commands.append(cmd)

    def add_word(self, part: Any, argv: list[str], dynamic: list[bool]) -> None:
        value, dyn = self.word(part)
        if not dyn and self._unquoted_param(part):  # word splitting on IFS
            ifs = self.vars.get("IFS") or " "
            pieces = [p for p in re.split(f"[{re.escape(ifs)}]", value) if p] or [value]
            argv.extend(pieces)
            dynamic.extend([False] * len(pieces))
        else:
            argv.append(value)
            dynamic.append(dyn)

    def redirect(self, part: Any) -> tuple[str, str]:
        target = part.output
        if isinstance(target, int):
            return (part.type, f"&{target}")
        value, _ = self.word(target)
        return (part.type, value)

    def note_variables(self, argv: list[str]) -> None:
        """The variables a command sets: ``read``'s hold what nobody knows, ``export``'s
        and ``declare``'s what they are given."""
        if argv and argv[0] == "read":
            for name in argv[1:]:
                if not name.startswith("-"):
                    self.vars[name] = None
        if argv and argv[0] in ("export", "declare", "local", "typeset"):
            for word in argv[1:]:
                name, eq, value = word.partition("=")
                if eq:
                    self.vars[name] = value

    VISITS: ClassVar[dict[str, Callable[[_Walker, Any], None]]] = {
        "command": command,
        "pipeline": pipeline,
        "list": sequence,
        "function": function_definition,
        "for": for_loop,
        **dict.fromkeys(("compound", "while", "until", "if"), compound),
    }
    """What each kind of bashlex node is walked by."""

    def _unquoted_param(self, part: Any) -> bool:
        raw = self.text[part.pos[0] : part.pos[1]]
        return "$" in raw and '"' not in raw and "'" not in raw

    def word(self, part: Any) -> tuple[str, bool]:
        """A word's value with its expansions resolved, and whether some could not be."""
        start, end = part.pos
        raw = self.text[start:end]
        dynamic = False
        subs = []
        for child in getattr(part, "parts", None) or ():
            value: str | None
            if child.kind == "parameter":
                name = re.split(r"[:#%/^,@\[]", child.value, maxsplit=1)[0]
                value = self.vars.get(name)
            elif child.kind in ("commandsubstitution", "processsubstitution"):
                value = self.substitution(child)
                if child.kind == "processsubstitution":
                    value = None
            elif child.kind == "tilde":
                value = HOME
            else:
                value = None
            if value is None:
                dynamic = True
                value = "$DYN"
            subs.append((child.pos[0] - start, child.pos[1] - start, value))
        for a, b, value in sorted(subs, reverse=True):
            raw = raw[:a] + value + raw[b:]
        return _unquote(raw), dynamic

    def substitution(self, child: Any) -> str | None:
        start = len(self.commands)
        self.node(child.command)
        inner = self.commands[start:]
        if not inner:
            return None
        out = output_of(inner[-1])
        return out.strip() if out is not None else None

    # -- the fallback ----------------------------------------------------------------

    def tokens(self) -> None:
        """Split on control operators, then into words: enough to judge each command."""
        previous: Cmd | None = None
        pos = 0
        for match in [*_SPLIT.finditer(self.text), None]:
            end = match.start() if match else len(self.text)
            chunk = self.text[pos:end]
            pos = match.end() if match else end
            words = _words(chunk)
            if words and words[0] in ("while", "until", "for", "do"):
                self.loop = True
                words = words[1:] if words[0] == "do" else []
            elif words and words[0] == "done":
                self.loop = False
                words = []
            if words:
                dyn = ["$" in w or "`" in w for w in words]
                cmd = Cmd(words, dyn, loop=self.loop)
                cmd.stdin_from = previous
                self.commands.append(cmd)
                previous = cmd
            op = match.group() if match else ""
            if op != "|":
                previous = None
            if op == "&" and self.commands:
                self.commands[-1].background = True


def _words(chunk: str) -> list[str]:
    if len(chunk) > 4096:  # shlex reads a character at a time: huge chunks split plainly
        return [w.strip("'\"") for w in chunk.split()]
    try:
        return shlex.split(chunk, comments=False, posix=True)
    except ValueError:
        return chunk.split()


def _unquote(raw: str) -> str:
    if not any(c in raw for c in "'\"\\"):
        return raw
    try:
        return "".join(shlex.split(raw, posix=True)) if raw.strip() else raw
    except ValueError:
        return raw.replace("'", "").replace('"', "")
