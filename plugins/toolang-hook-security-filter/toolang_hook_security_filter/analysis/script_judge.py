"""JavaScript, Perl, Ruby, PHP and PowerShell inline code, judged without parsing: by
their string literals (each one judged as the shell command it may be, hex and base64
ones decoded first) and by the calls that delete trees, open sockets, fork or evaluate
downloads (:data:`SIGNS`). Python that does not parse is judged the same way.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Final

import attrs

from toolang_hook_security_filter.analysis.judges import Judges
from toolang_hook_security_filter.analysis.paths import classify
from toolang_hook_security_filter.analysis.verdicts import Finding, approve, block

_LITERAL: Final = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"|`([^`]*)`", re.S)
_TREE_CALL: Final = re.compile(
    r"(rmSync|rmdirSync|rm_rf|rm_r|rmtree|remove_tree|Remove-Item|\brd\b|\bdel\b|rimraf|"
    r"fs\.rm\b|FileUtils\.rm|unlink)",
    re.I,
)
_RECURSIVE: Final = re.compile(r"recurs|rm_rf|rmtree|remove_tree|/s\b|rimraf|-r\b", re.I)
_HOME_CALL: Final = re.compile(
    r"homedir\(\)|Dir\.home|ENV\[.HOME.\]|(\$env:USERPROFILE|\$HOME)(?![\\/\w])|getenv\(.HOME.\)",
    re.I,
)
_BARE_TARGET: Final = re.compile(r"(?:-Path\s+|\s)([A-Za-z]:\\\S*|/)(?=\s|$|\))")
_DRIVE_WIPE: Final = re.compile(r"Get-ChildItem\s+[A-Za-z]:\\?\s.*-Recurse.*\|\s*Remove-Item", re.I)
_SOCKET: Final = re.compile(
    r"TCPSocket|fsockopen|Net\.Sockets\.TCPClient|socket\(S,|IO::Socket|net\.connect|new net\.Socket|"  # noqa: E501
    r"stream_socket_client",
    re.I,
)
_SPAWN: Final = re.compile(
    r"exec|spawn|system|/bin/(ba)?sh|cmd\.exe|GetStream|popen|proc_open", re.I
)


def deletion_finding(path: str, what: str) -> Finding | None:
    """What deleting ``path`` would hit, by its class (:func:`~.paths.classify`)."""
    cls = classify(path)
    if cls in ("root", "home", "system"):
        return block("fs-wipe", f"{what} the {cls} directory")
    if cls == "data":
        return approve("data-dir-delete", f"{what} a data directory")
    if cls in ("log", "history"):
        return block("log-wipe", f"{what} logs")
    return None


@attrs.frozen
class Sign:
    """A finding for code that matches ``first`` and, when given, ``second`` (in
    ``lang`` only, when given)."""

    first: re.Pattern[str]
    second: re.Pattern[str] | None
    finding: Finding
    lang: str | None = None

    def found_in(self, code: str, lang: str) -> bool:
        return (
            (self.lang is None or self.lang == lang)
            and self.first.search(code) is not None
            and (self.second is None or self.second.search(code) is not None)
        )


def _sign(
    first: str, second: str | None, finding: Finding, *, flags: int = re.I, lang: str | None = None
) -> Sign:
    return Sign(
        re.compile(first, flags),
        re.compile(second, flags) if second is not None else None,
        finding,
        lang,
    )


SIGNS: Final = (
    Sign(_SOCKET, _SPAWN, block("reverse-shell", "connects a socket to a shell")),
    _sign(
        r"for\s*\(;;\)|while\s*\(\s*\$true\s*\)",
        r"start-process\s+(powershell|pwsh)|\$PSCommandPath|\$MyInvocation",
        block("fork-bomb", "starts copies of itself in an endless loop"),
    ),
    _sign(
        r"fork\s+while|while\s*\(?\s*(1|true)\s*\)?\s*\{?\s*fork|fork\s*\(\s*\)\s*while",
        None,
        block("fork-bomb", "forks in an endless loop"),
    ),
    _sign(
        r"\b(IEX|Invoke-Expression)\b",
        r"DownloadString|Invoke-WebRequest|\biwr\b|Net\.WebClient|curl|wget",
        block("download-exec", "runs code fetched from the network"),
    ),
    _sign(
        r"\b(Format-Volume|Clear-Disk|Initialize-Disk)\b",
        None,
        block("disk-destroy", "formats or clears a disk"),
    ),
    _sign(
        r"\b(Clear-EventLog|Remove-EventLog|wevtutil\s+cl)\b",
        None,
        block("log-wipe", "clears Windows event logs"),
    ),
    _sign(
        r"Set-MpPreference\s+.*-Disable\w*\s+\$?true",
        None,
        approve("security-off", "turns Windows Defender protection off"),
    ),
    _sign(
        r"Set-NetFirewallProfile\b.*-Enabled\s+\$?false",
        None,
        approve("security-off", "turns the Windows firewall off"),
    ),
    _sign(
        r"\b(Stop-Computer|Restart-Computer)\b|Get-Process\s*\|\s*Stop-Process|"
        r"Get-ScheduledTask\s*\|\s*Unregister",
        None,
        approve("system-halt", "stops the computer, its processes or its tasks"),
    ),
    _sign(
        r"-InFile\s+\S*(\.ssh|\.aws|credentials|id_rsa|\.kube)",
        None,
        block("credential-exfil", "uploads credentials"),
    ),
    _sign(
        r"Invoke-WebRequest|\biwr\b|DownloadFile",
        r"Start-Process|&\s*\$",
        block("download-exec", "downloads a program and starts it"),
    ),
    _sign(
        r"https?'?\)?\.get\(|fetch\(",
        r"\beval\(|new Function|vm\.run",
        block("download-exec", "evaluates code fetched from the network"),
        flags=0,
        lang="js",
    ),
    _sign(
        r"fetch\(|https?'?\)?\.request|net'?\)?\.connect",
        r"readFileSync\(.*(\.ssh|\.aws|credentials)|(body|data)\s*:\s*[^,}]*process\.env",
        block("credential-exfil", "reads secrets and sends them out"),
        flags=0,
        lang="js",
    ),
    _sign(
        r"\beval\b",
        r"open-uri|URI\.open|Net::HTTP",
        block("download-exec", "evaluates code fetched from the network"),
        flags=0,
        lang="ruby",
    ),
)
"""What a call in the code's text does, in the order its findings are listed."""


def judge_script(code: str, depth: int, lang: str, judges: Judges) -> list[Finding]:
    """Findings about inline ``code`` in ``lang`` (js, perl, ruby, php, powershell, or
    Python that does not parse)."""
    literals = [next(g for g in m.groups() if g is not None) for m in _LITERAL.finditer(code)]
    found = _literal_commands(literals, depth, judges)
    if _TREE_CALL.search(code):
        found.extend(_tree_deletes(code, literals))
    found.extend(sign.finding for sign in SIGNS if sign.found_in(code, lang))
    return found


def _literal_commands(literals: list[str], depth: int, judges: Judges) -> list[Finding]:
    """The blocking findings about the string literals judged as shell commands."""
    found: list[Finding] = []
    for literal in literals[:64]:
        for text in (literal, _decoded(literal)):
            if text and " " in text.strip():
                found.extend(f for f in judges.shell(text, depth + 1) if f.risk == "block")
    return found


def _tree_deletes(code: str, literals: list[str]) -> list[Finding]:
    """Findings about a call that deletes files, by the paths the code names."""
    found: list[Finding] = []
    recursive = _RECURSIVE.search(code)
    targets = [lit for lit in literals if lit.strip()]
    if _HOME_CALL.search(code):
        targets.append("~")
    for target in targets + _BARE_TARGET.findall(code):
        finding = deletion_finding(target, "deletes")
        if finding is not None and (recursive or finding.rule != "fs-wipe" or target in ("/", "~")):
            found.append(finding)
            break
    if _DRIVE_WIPE.search(code):
        found.append(block("fs-wipe", "deletes every file of a drive"))
    return found


def _decoded(literal: str) -> str | None:
    if len(literal) >= 8 and len(literal) % 2 == 0 and re.fullmatch(r"[0-9a-fA-F]+", literal):
        return bytes.fromhex(literal).decode("utf-8", "replace")
    if len(literal) >= 8 and re.fullmatch(r"[A-Za-z0-9+/]+={0,2}", literal):
        try:
            out = base64.b64decode(literal + "=" * (-len(literal) % 4)).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            return None
        return out if out.isprintable() else None
    return None
