"""Interpreters' inline code judged as code.

Python is parsed (``ast``): calls are resolved to what they name (``shutil.rmtree``,
``__import__('os').system``), and arguments that are statically known — literals,
``bytes.fromhex(…)``, ``base64.b64decode(…)``, ``Path.home()`` — are evaluated, so
``os.system(bytes.fromhex('726d…').decode())`` is judged as the shell command it runs.
JavaScript, Perl, Ruby, PHP and PowerShell are judged by their string literals (each
one judged as the shell command it may be, hex and base64 ones decoded first) and by
the calls that delete trees, open sockets or fork.
"""

from __future__ import annotations

import ast
import base64
import binascii
import re
from typing import Final

from toolang_hook_security_filter.analysis.judges import Judges
from toolang_hook_security_filter.analysis.paths import classify
from toolang_hook_security_filter.analysis.verdicts import Finding, approve, block

_RUNNERS: Final = frozenset(
    [
        "os.system",
        "os.popen",
        "os.execl",
        "os.execlp",
        "os.execv",
        "os.execvp",
        "os.spawnl",
        "os.spawnlp",
        "pty.spawn",
        "subprocess.run",
        "subprocess.call",
        "subprocess.check_call",
        "subprocess.check_output",
        "subprocess.Popen",
        "subprocess.getoutput",
        "subprocess.getstatusoutput",
        "commands.getoutput",
    ]
)
_TREE_DELETERS: Final = frozenset(
    ["shutil.rmtree", "os.removedirs", "os.remove", "os.unlink", "os.rmdir", "pathlib.Path.unlink"]
)
_NETWORK: Final = re.compile(
    r"\b(requests\.(post|put|patch)|urlopen|http\.client|smtplib|ftplib|socket\.|gethostbyname|"
    r"getaddrinfo|urllib\.request|httpx\.(post|put))"
)
_LITERAL: Final = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"|`([^`]*)`", re.S)
_TREE_CALL: Final = re.compile(
    r"(rmSync|rmdirSync|rm_rf|rm_r|rmtree|remove_tree|Remove-Item|\brd\b|\bdel\b|rimraf|"
    r"fs\.rm\b|FileUtils\.rm|unlink)",
    re.I,
)
_HOME_CALL: Final = re.compile(
    r"homedir\(\)|Dir\.home|ENV\[.HOME.\]|(\$env:USERPROFILE|\$HOME)(?![\\/\w])|getenv\(.HOME.\)",
    re.I,
)
_SOCKET: Final = re.compile(
    r"TCPSocket|fsockopen|Net\.Sockets\.TCPClient|socket\(S,|IO::Socket|net\.connect|new net\.Socket|"  # noqa: E501
    r"stream_socket_client",
    re.I,
)
_SPAWN: Final = re.compile(
    r"exec|spawn|system|/bin/(ba)?sh|cmd\.exe|GetStream|popen|proc_open", re.I
)


def judge_code(lang: str, code: str, depth: int, judges: Judges) -> list[Finding]:
    """Findings about inline ``code`` in ``lang`` (python, js, perl, ruby, php, powershell)."""
    if lang == "python":
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return _generic(code, depth, lang, judges)
        return _Python(code, depth, judges).judge(tree)
    return _generic(code, depth, lang, judges)


def _path_finding(path: str, what: str) -> Finding | None:
    cls = classify(path)
    if cls in ("root", "home", "system"):
        return block("fs-wipe", f"{what} the {cls} directory")
    if cls == "data":
        return approve("data-dir-delete", f"{what} a data directory")
    if cls in ("log", "history"):
        return block("log-wipe", f"{what} logs")
    return None


class _Python:
    def __init__(self, code: str, depth: int, judges: Judges) -> None:
        self.code = code
        self.depth = depth
        self.judges = judges
        self.found: list[Finding] = []

    def judge(self, tree: ast.AST) -> list[Finding]:  # noqa: PLR0912
        reads_secret = False
        connects = dups = False
        walks_root = removes = False
        for node in ast.walk(tree):
            if isinstance(node, ast.While | ast.For) and any(
                self.name(c.func).endswith("fork")
                for c in ast.walk(node)
                if isinstance(c, ast.Call)
            ):
                self.found.append(block("fork-bomb", "forks in a loop"))
            if not isinstance(node, ast.Call):
                continue
            name = self.name(node.func)
            args = [self.value(a) for a in node.args]
            first = args[0] if args else None
            if name in _RUNNERS and first is not None:
                self.found.extend(self.judges.shell(first, self.depth + 1))
            elif name in _TREE_DELETERS:
                removes = True
                found = _path_finding(first, "deletes") if first is not None else None
                if found is not None and (
                    name == "shutil.rmtree" or found.risk == "approve" or first in ("/", "~")
                ):
                    self.found.append(found)
            elif name in ("exec", "eval", "compile") and node.args:
                if first is not None:
                    self.found.extend(judge_code("python", first, self.depth + 1, self.judges))
                elif re.search(r"urlopen|requests\.get|urllib", ast.unparse(node.args[0])):
                    self.found.append(block("download-exec", "runs code fetched from the network"))
            elif (
                name in ("os.walk", "os.scandir", "glob.glob", "pathlib.Path.rglob")
                and first is not None
            ):
                walks_root = walks_root or classify(first) in ("root", "home", "system")
            elif name in ("open", "pathlib.Path.read_text", "io.open") and first is not None:
                reads_secret = reads_secret or classify(first) in ("credential", "system")
                mode = args[1] if len(args) > 1 else None
                if (
                    mode
                    and ("w" in mode or "a" in mode)
                    and classify(first) in ("device", "system", "credential")
                ):
                    self.found.append(block("fs-wipe", f"overwrites {first}"))
            elif name.endswith(".connect") or name == "socket.create_connection":
                connects = True
            elif name.endswith("dup2"):
                dups = True
        if walks_root and removes:
            self.found.append(block("fs-wipe", "walks the root or home and deletes what it finds"))
        if connects and dups:
            self.found.append(block("reverse-shell", "connects a socket to the standard streams"))
        if reads_secret and _NETWORK.search(self.code):
            self.found.append(block("credential-exfil", "reads credentials and sends them out"))
        return self.found

    def name(self, func: ast.expr) -> str:
        """The dotted name a call resolves to (``__import__('os').system`` → ``os.system``)."""
        if isinstance(func, ast.Name):
            return {"rmtree": "shutil.rmtree", "system": "os.system", "run": "subprocess.run"}.get(
                func.id, func.id
            )
        if isinstance(func, ast.Attribute):
            base = func.value
            if (
                isinstance(base, ast.Call)
                and isinstance(base.func, ast.Name)
                and base.func.id == "__import__"
            ):
                module = self.value(base.args[0]) if base.args else None
                return f"{module}.{func.attr}"
            if isinstance(base, ast.Call):  # Path(x).unlink(), Path.home().rglob()
                inner = self.name(base.func)
                if inner in ("pathlib.Path", "Path"):
                    return f"pathlib.Path.{func.attr}"
            prefix = self.name(base) if isinstance(base, ast.Attribute | ast.Name) else ""
            if prefix in ("Path", "pathlib.Path") or prefix.endswith("Path"):
                prefix = "pathlib.Path"
            return f"{prefix}.{func.attr}" if prefix else func.attr
        return ""

    def value(self, node: ast.expr, depth: int = 0) -> str | None:  # noqa: PLR0912
        """The string ``node`` evaluates to, when that is static."""
        if depth > 8:
            return None
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                return node.value
            if isinstance(node.value, bytes):
                return node.value.decode("utf-8", "replace")
            return None
        if isinstance(node, ast.List | ast.Tuple):
            parts = [self.value(e, depth + 1) for e in node.elts]
            return (
                " ".join(p for p in parts if p is not None)
                if all(p is not None for p in parts)
                else None
            )
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.value(node.left, depth + 1), self.value(node.right, depth + 1)
            return left + right if left is not None and right is not None else None
        if isinstance(node, ast.JoinedStr):
            parts = [
                self.value(v, depth + 1) if not isinstance(v, ast.FormattedValue) else None
                for v in node.values
            ]
            return (
                "".join(p for p in parts if p is not None)
                if all(p is not None for p in parts)
                else None
            )
        if isinstance(node, ast.Call):
            name = self.name(node.func)
            arg = self.value(node.args[0], depth + 1) if node.args else None
            if name.endswith(("Path.home", "expanduser", "home")) and (
                arg is None or arg.startswith("~")
            ):
                return "~" if arg is None else arg
            if name.endswith("getenv") and arg == "HOME":
                return "~"
            if name in ("Path", "pathlib.Path", "os.path.join", "str") and arg is not None:
                return arg
            if isinstance(node.func, ast.Attribute) and node.func.attr == "decode":
                return self.value(node.func.value, depth + 1)
            if name.endswith("fromhex") and arg is not None:
                try:
                    return bytes.fromhex(arg).decode("utf-8", "replace")
                except ValueError:
                    return None
            if name.endswith(("b64decode", "decodebytes", "b32decode")) and arg is not None:
                try:
                    decode = base64.b32decode if "b32" in name else base64.b64decode
                    return decode(arg + "=" * (-len(arg) % 4 if "b32" not in name else 0)).decode(
                        "utf-8", "replace"
                    )
                except (binascii.Error, ValueError):
                    return None
            if (
                name == "chr"
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, int)
            ):
                return chr(node.args[0].value) if 0 <= node.args[0].value < 0x110000 else None
            if isinstance(node.func, ast.Attribute) and node.func.attr == "join" and node.args:
                sep = self.value(node.func.value, depth + 1)
                items = node.args[0]
                if sep is not None and isinstance(items, ast.List | ast.Tuple):
                    parts = [self.value(e, depth + 1) for e in items.elts]
                    if all(p is not None for p in parts):
                        return sep.join(p for p in parts if p is not None)
        return None


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


def _generic(code: str, depth: int, lang: str, judges: Judges) -> list[Finding]:  # noqa: PLR0912
    found: list[Finding] = []
    literals = [next(g for g in m.groups() if g is not None) for m in _LITERAL.finditer(code)]
    for literal in literals[:64]:
        for text in (literal, _decoded(literal)):
            if text and " " in text.strip():
                found.extend(f for f in judges.shell(text, depth + 1) if f.risk == "block")
    if _TREE_CALL.search(code):
        recursive = re.search(r"recurs|rm_rf|rmtree|remove_tree|/s\b|rimraf|-r\b", code, re.I)
        targets = [lit for lit in literals if lit.strip()]
        if _HOME_CALL.search(code):
            targets.append("~")
        bare = re.findall(r"(?:-Path\s+|\s)([A-Za-z]:\\\S*|/)(?=\s|$|\))", code)
        for target in targets + bare:
            finding = _path_finding(target, "deletes")
            if finding is not None and (
                recursive or finding.rule != "fs-wipe" or target in ("/", "~")
            ):
                found.append(finding)
                break
        if re.search(r"Get-ChildItem\s+[A-Za-z]:\\?\s.*-Recurse.*\|\s*Remove-Item", code, re.I):
            found.append(block("fs-wipe", "deletes every file of a drive"))
    if _SOCKET.search(code) and _SPAWN.search(code):
        found.append(block("reverse-shell", "connects a socket to a shell"))
    if re.search(r"for\s*\(;;\)|while\s*\(\s*\$true\s*\)", code, re.I) and re.search(
        r"start-process\s+(powershell|pwsh)|\$PSCommandPath|\$MyInvocation", code, re.I
    ):
        found.append(block("fork-bomb", "starts copies of itself in an endless loop"))
    if re.search(
        r"fork\s+while|while\s*\(?\s*(1|true)\s*\)?\s*\{?\s*fork|fork\s*\(\s*\)\s*while", code, re.I
    ):
        found.append(block("fork-bomb", "forks in an endless loop"))
    if re.search(r"\b(IEX|Invoke-Expression)\b", code, re.I) and re.search(
        r"DownloadString|Invoke-WebRequest|\biwr\b|Net\.WebClient|curl|wget", code, re.I
    ):
        found.append(block("download-exec", "runs code fetched from the network"))
    if re.search(r"\b(Format-Volume|Clear-Disk|Initialize-Disk)\b", code, re.I):
        found.append(block("disk-destroy", "formats or clears a disk"))
    if re.search(r"\b(Clear-EventLog|Remove-EventLog|wevtutil\s+cl)\b", code, re.I):
        found.append(block("log-wipe", "clears Windows event logs"))
    if re.search(r"Set-MpPreference\s+.*-Disable\w*\s+\$?true", code, re.I):
        found.append(approve("security-off", "turns Windows Defender protection off"))
    if re.search(r"Set-NetFirewallProfile\b.*-Enabled\s+\$?false", code, re.I):
        found.append(approve("security-off", "turns the Windows firewall off"))
    if re.search(
        r"\b(Stop-Computer|Restart-Computer)\b|Get-Process\s*\|\s*Stop-Process|Get-ScheduledTask\s*\|\s*Unregister",
        code,
        re.I,
    ):
        found.append(approve("system-halt", "stops the computer, its processes or its tasks"))
    if re.search(r"-InFile\s+\S*(\.ssh|\.aws|credentials|id_rsa|\.kube)", code, re.I):
        found.append(block("credential-exfil", "uploads credentials"))
    if re.search(r"Invoke-WebRequest|\biwr\b|DownloadFile", code, re.I) and re.search(
        r"Start-Process|&\s*\$", code, re.I
    ):
        found.append(block("download-exec", "downloads a program and starts it"))
    if (
        lang == "js"
        and re.search(r"https?'?\)?\.get\(|fetch\(", code)
        and re.search(r"\beval\(|new Function|vm\.run", code)
    ):
        found.append(block("download-exec", "evaluates code fetched from the network"))
    if (
        lang == "js"
        and re.search(r"fetch\(|https?'?\)?\.request|net'?\)?\.connect", code)
        and re.search(
            r"readFileSync\(.*(\.ssh|\.aws|credentials)|(body|data)\s*:\s*[^,}]*process\.env", code
        )
    ):
        found.append(block("credential-exfil", "reads secrets and sends them out"))
    if (
        lang == "ruby"
        and re.search(r"\beval\b", code)
        and re.search(r"open-uri|URI\.open|Net::HTTP", code)
    ):
        found.append(block("download-exec", "evaluates code fetched from the network"))
    return found
