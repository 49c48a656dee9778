"""Shell obfuscation undone, so the rules also see the command that would run.

A model (or a prompt injected into it) can hide ``rm -rf /`` from a pattern without
changing what runs: ``r''m -rf /``, ``"rm" "-rf" "/"``, ``rm${IFS}-rf${IFS}/``,
``T=/; rm -rf $T``, ``busybox rm …``, a command inside ``bash -c '…'`` or inside a Python
``os.system('…')``. :func:`normalised` rewrites a lowercased string the way the shell
would read it — as far as that can be done without running anything — and the policy
matches the rules against that copy *as well as* the text as written.

Cost: the policy's hint index already tells which :data:`SIGN_WORDS` a string holds;
two literal-first regex scans find the other signs (glued quotes, a quoted option, ``$``,
a backslash before a word); each rewriting pass runs only where its own sign is present;
and only the lines a pass changed, plus the commands lifted out of quotes and calls,
are handed back — a long file with one odd line costs one line of rule matching.
"""

from __future__ import annotations

import base64
import binascii
import enum
import re
from typing import Final

_RUNNERS: Final = (
    *("system", "popen", "shell_exec", "passthru", "proc_open", "getoutput"),
    *("exec", "execsync", "execfile", "execl", "execlp", "execv", "execvp", "execve"),
    *("spawn", "spawnsync", "spawnl", "spawnlp", "spawnv", "spawnvp"),
    *("check_output", "check_call", "getstatusoutput", "subprocess.run", "subprocess.call"),
)
"""Functions (Python, Node, PHP, Perl, Ruby, Java) that run a command given as a string
or an argument list."""


class Sign(enum.IntFlag):
    """Kinds of words that call for normalising (see :data:`SIGN_WORDS`)."""

    NONE = 0
    WRAPPER = 1  # `sudo`, `env`, `busybox`, `/usr/bin/` … in front of a command
    PAYLOAD = 2  # `sh -c '…'`, `cmd /c "…"`, `eval '…'`, `ssh host '…'`
    RUNNER = 4  # `os.system('…')`, `subprocess.run([…])`, `execSync("…")`
    DECODE = 8  # `base64 -d`, `b64decode(…)`, `atob(…)`, `FromBase64String(…)`


_WRAPPER_WORDS = ("sudo", "doas", "env", "command", "builtin", "busybox", "nohup", "exec")
# `base64 -d`, `base64.b64decode`, `Buffer.from(…, 'base64')`, `atob`, `FromBase64String`.
_DECODE_WORDS = ("base", "atob", "frombase")
_PAYLOAD_WORDS = ("c", "k", "command", "eval", "iex", "invoke", "ssh")
_RUNNER_WORDS = (
    *("system", "popen", "exec", "execsync", "execfile", "execl", "execlp", "execv"),
    *("execvp", "execve", "spawn", "spawnsync", "spawnl", "spawnlp", "spawnv", "spawnvp"),
    *("passthru", "proc", "getoutput", "getstatusoutput", "subprocess", "check"),
)


def _sign_words() -> dict[str, Sign]:
    words: dict[str, Sign] = {}
    for kind, kind_words in (
        (Sign.WRAPPER, (*_WRAPPER_WORDS, "timeout", "bin", "sbin")),  # `/usr/bin/rm`
        (Sign.PAYLOAD, _PAYLOAD_WORDS),
        (Sign.RUNNER, _RUNNER_WORDS),
        (Sign.DECODE, _DECODE_WORDS),
    ):
        for word in kind_words:
            words[word] = words.get(word, Sign.NONE) | kind
    return words


SIGN_WORDS: Final = _sign_words()
"""Words (whole runs of letters, as :mod:`.hints` splits a string) that call for
normalising, and which passes they call for. The policy files them in its hint index,
so finding them costs it nothing more."""

# Signs, other than SIGN_WORDS, that a string may hide what it runs. Every alternative
# starts with a literal that is not a letter, so `re` jumps to the places worth trying.
_QUOTE_SIGNS: Final = re.compile(
    # Empty quotes glued to a word (r''m), not part of a longer run (a docstring's """).
    r"''(?=[a-z/-])(?<![\"']'')|\"\"(?=[a-z/-])(?<![\"']\"\")"
    r"|''(?<=[a-z]'')(?![\"'])|\"\"(?<=[a-z]\"\")(?![\"'])"
    r"|\"-[a-z]|'-[a-z]|\"\s+-|'\s+-"  # a quoted option, or a quoted word before an option
    r"|\"(?<=[a-z]\")[\w./~$*-]+\"|'(?<=[a-z]')[\w./~$*-]+'"  # quoted after a letter (r"m")
    r"|\"[\w./~$*-]+\"[a-z]|'[\w./~$*-]+'[a-z]"  # quoted before a letter ("r"m)
    r"|\"\$[{a-z_]"  # a quoted variable ("$T", "${T}")
)
_SHELL_SIGNS: Final = re.compile(
    r"\$\{?[a-z_]"  # a variable ($IFS, or one assigned in the same string)
    r"|\\[a-z]+\s"  # a backslash before or in a command word (\rm, r\m)
    r"|\$\(\s*echo\s|\$\(\s*printf\s|`\s*echo\s|`\s*printf\s"  # a word printed to be run
)

# Payloads run by another program, lifted onto their own lines: `sh -c '…'`,
# `powershell -Command "…"`, `cmd /c "…"`, `eval '…'`, `iex '…'`, `ssh host '…'`.
_QUOTED = r"(?:'([^'\n]*)'|\"((?:[^\"\\\n]|\\.)*)\")"
_PAYLOADS: Final = (
    (("-c ", "-command "), re.compile(rf"-c(?:ommand)?\s+{_QUOTED}")),
    (("/c ", "/k "), re.compile(rf"/[ck]\s+{_QUOTED}")),
    (
        ("eval ", "iex ", "invoke-expression "),
        re.compile(
            rf"eval(?<![\w.-]eval)\s+{_QUOTED}|iex(?<![\w.-]iex)\s+{_QUOTED}"
            rf"|invoke-expression\s+{_QUOTED}"
        ),
    ),
    (
        ("ssh ",),
        re.compile(
            rf"ssh(?<![\w.-]ssh)\s+(?:-\S+\s+(?:[^\s'\"-]\S*\s+)?){{0,6}}[\w.@:-]+\s+{_QUOTED}"
        ),
    ),
)
# A call that runs a command given as string literals: `os.system('…')`,
# `subprocess.run(['rm', '-rf', '/'])`, `execSync("…")`, `Runtime.getRuntime().exec("…")`.
# Found from its `(`, the function's name checked behind it.
_RUNNER_CALL: Final = re.compile(
    r"\((?:"
    + "|".join(rf"(?<={re.escape(word)}\()(?<!\w{re.escape(word)}\()" for word in _RUNNERS)
    + r")\s*\[?\s*((?:[rbfu]{0,2}(?:'[^'\n]*'|\"[^\"\n]*\")\s*[,+]?\s*){1,64})"
)
_LITERAL: Final = re.compile(r"'([^'\n]*)'|\"([^\"\n]*)\"")

_IFS: Final = re.compile(r"\$(?:\{ifs[^}\n]{0,8}\}|ifs(?!\w))")
# A backslash before a command word (`\rm`, an alias bypass) or inside one (`r\m`).
_WORD_BACKSLASH: Final = re.compile(
    r"\\(?:(?<![^\s;&|(`]\\)|(?<=[a-z]\\)(?=[a-z]*(?:\s|$)))(?=[a-z])"
)
# `$(echo rm)`, `` `echo rm` ``: a word printed to be run.
_ECHOED_WORD: Final = re.compile(
    r"\$\(\s*(?:echo|printf)\s+([\w./~-]+)\s*\)|`\s*(?:echo|printf)\s+([\w./~-]+)\s*`"
)
# `''` or `""` glued to a word (`r''m`); an empty argument (`echo ""`) stays.
_GLUED_EMPTY_QUOTES: Final = re.compile(
    r"''(?=[^\s'\"])|''(?<=[^\s'\"]'')|\"\"(?=[^\s'\"])|\"\"(?<=[^\s'\"]\"\")"
)
# A quoted shell word (no space nor code punctuation in it), standing alone or glued to
# letters: the quotes change nothing the shell runs. Not after `(` `,` `:` nor before
# them: those are string literals of code, which the rules see as written.
_WORD_CHARS = r"[\w./~$*%@:+={}-]*"
_QUOTED_WORD: Final = re.compile(
    rf"'(?<![^\s;&|=a-z]')({_WORD_CHARS})'(?=[\s;&|a-z]|$)"
    rf"|\"(?<![^\s;&|=a-z]\")({_WORD_CHARS})\"(?=[\s;&|a-z]|$)"
)
_VARIABLE: Final = re.compile(r"\$(?:\{([a-z_]\w*)\}|([a-z_]\w*))")
_PLAIN_VALUE = r"=([^\s;&|'\"`$()<>\\]*)(?=[\s;&|)]|$)"
_AHEAD = r"[ \t]+(?=[\w/.~$\\])"  # what follows a wrapper: the command it wraps
# `sudo`'s options, those taking a value with it (`-u root`), and its closing `--`.
_SUDO_OPTIONS = (
    r"(?:[ \t]+-[ugpcdrth][ \t]*[^\s-]\S*|[ \t]+-[a-z]+|[ \t]+--[a-z][\w-]*)*(?:[ \t]+--)?"
)
# A wrapper at the start of a command, found from the character that starts the command
# (`;` `&` `|` a newline, a backtick: far rarer than letters, so `re` skips fast).
_WRAPPER: Final = re.compile(
    r"([;&|\n`][ \t]*+)(?:"
    rf"(?:sudo|doas){_SUDO_OPTIONS}{_AHEAD}"
    rf"|env(?:[ \t]+-[a-z]+)*(?:[ \t]+[a-z_]\w*=\S*)*{_AHEAD}"
    rf"|(?:command|builtin|busybox|nohup|exec){_AHEAD}"
    rf"|timeout(?:[ \t]+-\S+)*[ \t]+\d\S*{_AHEAD}"
    r"|(?:/usr)?(?:/local)?/s?bin/(?=[a-z]))"
)

_WRAPPER_NEEDLES: Final = (*(f"{word} " for word in (*_WRAPPER_WORDS, "timeout")), "bin/", "\t")

# A base64 literal: a run of its alphabet, long enough to hold a command (`rm -rf ~`).
_BASE64: Final = re.compile(r"(?<![\w+/=])[A-Za-z0-9+/]{8,4096}={0,2}(?![\w+/=])")

MAX_DECODED: Final = 16
"""Base64 literals decoded per string: enough for a real command, bounded for a hostile one."""

MAX_VARIABLES: Final = 16
"""Variables looked up per string: enough for a real command line, bounded for a hostile one."""


def normalised(lowered: str, signs: Sign, original: str | None = None) -> str | None:
    """What the shell would run, for the lines of ``lowered`` that hide it, or ``None``.

    ``lowered`` is a lowercased string of a call. The answer holds, one per line, the
    commands lifted out of ``sh -c '…'``-style payloads and ``os.system('…')``-style
    calls, then every line that normalising changed: quotes around or inside words
    removed, ``$IFS`` turned into a space, variables assigned a plain value in the same
    string replaced by it, wrappers (``sudo -u x --``, ``env X=1``, ``busybox``,
    ``command``, ``/usr/bin/``) dropped from the front of a command. Lines it did not
    change are left out: the rules have seen them as written.

    ``signs``: the kinds of :data:`SIGN_WORDS` that ``lowered`` holds; each pass runs
    only where its signs are present. ``original``: the string as written, whose base64
    literals are decoded (case matters there) when a decoder is named.
    """
    quotes = _QUOTE_SIGNS.search(lowered) is not None
    shell = quotes or _SHELL_SIGNS.search(lowered) is not None
    if not signs and not shell:
        return None
    found = _lifted(lowered, signs)
    if Sign.DECODE in signs and original is not None:
        found.extend(_decoded(original))
    lifted = "\n".join(found)
    changed = (
        [line for line in _plain(lifted, True, True, True).split("\n") if line] if lifted else []
    )
    plain = _plain(lowered, shell, quotes, Sign.WRAPPER in signs)
    if plain != lowered:
        old_lines = lowered.split("\n")
        changed.extend(
            line for index, line in enumerate(plain.split("\n")) if line != old_lines[index]
        )
    return "\n".join(changed) or None


def _lifted(lowered: str, signs: Sign) -> list[str]:
    """Commands written as a quoted payload or as the string literals of a call."""
    found = (
        [
            match.group(1) if match.group(1) is not None else match.group(2)
            for needles, payload in _PAYLOADS
            if any(needle in lowered for needle in needles)
            for match in payload.finditer(lowered)
        ]
        if Sign.PAYLOAD in signs
        else []
    )
    if Sign.RUNNER in signs:
        found.extend(
            " ".join(a or b for a, b in _LITERAL.findall(match.group(1)))
            for match in _RUNNER_CALL.finditer(lowered)
        )
    return found


def _decoded(original: str) -> list[str]:
    """The text hidden in ``original``'s base64 literals (lowercased), where it is text.

    A command hidden so (`bash -c "$(echo cm0gLXJmIH4= | base64 -d)"`) is then judged like
    one written out. Runs that decode to binary (most words, paths and hashes that look
    like base64) are left out.
    """
    texts: list[str] = []
    for number, match in enumerate(_BASE64.finditer(original)):
        if number == MAX_DECODED:
            break
        literal = match.group(0)
        literal += "=" * (-len(literal) % 4)
        try:
            text = base64.b64decode(literal, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            continue
        if text.strip() and all(char.isprintable() or char in "\n\t\r" for char in text):
            texts.append(text.lower())
    return texts


def _plain(text: str, shell: bool, quotes: bool, wrappers: bool) -> str:
    """``text`` with (``shell``) ``$IFS``, simple variables, backslashes and (``quotes``)
    quotes, and (``wrappers``) wrappers undone.

    Every pass works within a line, so the lines of the answer are those of ``text``.
    """
    if shell:
        text = _unquoted(text, quotes)
    if wrappers and any(word in text for word in _WRAPPER_NEEDLES):
        text = "\n" + text  # the first command starts at a newline too
        for _ in range(6):  # `sudo env X=1 busybox /bin/rm`: one wrapper per pass
            unwrapped = _WRAPPER.sub(r"\1", text)
            if unwrapped == text:
                break
            text = unwrapped
        text = text[1:]
    return text


def _unquoted(text: str, quotes: bool) -> str:
    """``text`` with ``$IFS``, backslashes, ``$(echo …)``, (``quotes``) quotes and simple
    variables undone."""
    if "ifs" in text:
        text = _IFS.sub(" ", text)
    if "\\" in text:
        text = _WORD_BACKSLASH.sub("", text)
    if "$(" in text or "`" in text:
        text = _ECHOED_WORD.sub(r"\1\2", text)
    if quotes and ("''" in text or '""' in text):
        text = _GLUED_EMPTY_QUOTES.sub("", text)
    if quotes:
        text = _QUOTED_WORD.sub(r"\1\2", text)
    if "$" in text:
        text = _substituted(text)
    return text


def _substituted(text: str) -> str:
    """``text`` with each ``$name`` replaced by the plain value assigned to it in ``text``."""
    values: dict[str, str] = {}
    for match in _VARIABLE.finditer(text):
        name = match.group(1) or match.group(2)
        if name in values:
            continue
        if len(values) == MAX_VARIABLES:
            break
        escaped = re.escape(name)
        assigned = re.search(rf"{escaped}(?<![^\s;&|(]{escaped}){_PLAIN_VALUE}", text)
        values[name] = assigned.group(1) if assigned else match.group(0)
    return _VARIABLE.sub(lambda m: values.get(m.group(1) or m.group(2), m.group(0)), text)
