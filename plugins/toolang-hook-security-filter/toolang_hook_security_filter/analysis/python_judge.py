"""Inline Python judged as code, through ``ast``.

Calls are resolved to what they name (``shutil.rmtree``, ``__import__('os').system``),
and arguments that are statically known — literals, ``bytes.fromhex(…)``,
``base64.b64decode(…)``, ``Path.home()`` — are evaluated (:class:`StaticValue`), so
``os.system(bytes.fromhex('726d…').decode())`` is judged as the shell command it runs.
Python that does not parse is judged like the other languages (:mod:`.script_judge`).
"""

from __future__ import annotations

import ast
import base64
import binascii
import re
from collections.abc import Callable
from typing import Final

from toolang_hook_security_filter.analysis.judges import Judges
from toolang_hook_security_filter.analysis.paths import classify
from toolang_hook_security_filter.analysis.script_judge import deletion_finding, judge_script
from toolang_hook_security_filter.analysis.verdicts import Finding, block

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
_EVALUATORS: Final = frozenset(["exec", "eval", "compile"])
_WALKERS: Final = frozenset(["os.walk", "os.scandir", "glob.glob", "pathlib.Path.rglob"])
_OPENERS: Final = frozenset(["open", "pathlib.Path.read_text", "io.open"])
_NETWORK: Final = re.compile(
    r"\b(requests\.(post|put|patch)|urlopen|http\.client|smtplib|ftplib|socket\.|gethostbyname|"
    r"getaddrinfo|urllib\.request|httpx\.(post|put))"
)
_DOWNLOAD: Final = re.compile(r"urlopen|requests\.get|urllib")
_BARE_NAMES: Final = {"rmtree": "shutil.rmtree", "system": "os.system", "run": "subprocess.run"}


def judge_python(code: str, depth: int, judges: Judges) -> list[Finding]:
    """Findings about inline Python ``code``."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return judge_script(code, depth, "python", judges)
    return _Python(code, depth, judges).judge(tree)


def call_name(func: ast.expr) -> str:
    """The dotted name a call resolves to (``__import__('os').system`` → ``os.system``)."""
    if isinstance(func, ast.Name):
        return _BARE_NAMES.get(func.id, func.id)
    if isinstance(func, ast.Attribute):
        return _attribute_name(func)
    return ""


def _attribute_name(func: ast.Attribute) -> str:
    base = func.value
    if (
        isinstance(base, ast.Call)
        and isinstance(base.func, ast.Name)
        and base.func.id == "__import__"
    ):
        module = static_value(base.args[0]) if base.args else None
        return f"{module}.{func.attr}"
    if isinstance(base, ast.Call):  # Path(x).unlink(), Path.home().rglob()
        inner = call_name(base.func)
        if inner in ("pathlib.Path", "Path"):
            return f"pathlib.Path.{func.attr}"
    prefix = call_name(base) if isinstance(base, ast.Attribute | ast.Name) else ""
    if prefix in ("Path", "pathlib.Path") or prefix.endswith("Path"):
        prefix = "pathlib.Path"
    return f"{prefix}.{func.attr}" if prefix else func.attr


def static_value(node: ast.expr, depth: int = 0) -> str | None:
    """The string ``node`` evaluates to, when that is static."""
    if depth > 8:
        return None
    for kind, value_of in _VALUES:
        if isinstance(node, kind):
            return value_of(node, depth)
    return None


def _constant(node: ast.Constant, depth: int) -> str | None:
    if isinstance(node.value, str):
        return node.value
    if isinstance(node.value, bytes):
        return node.value.decode("utf-8", "replace")
    return None


def _joined(parts: list[str | None], separator: str) -> str | None:
    """The parts joined, when every one is known."""
    if all(p is not None for p in parts):
        return separator.join(p for p in parts if p is not None)
    return None


def _sequence(node: ast.List | ast.Tuple, depth: int) -> str | None:
    return _joined([static_value(e, depth + 1) for e in node.elts], " ")


def _sum(node: ast.BinOp, depth: int) -> str | None:
    if not isinstance(node.op, ast.Add):
        return None
    left, right = static_value(node.left, depth + 1), static_value(node.right, depth + 1)
    return left + right if left is not None and right is not None else None


def _f_string(node: ast.JoinedStr, depth: int) -> str | None:
    parts = [
        static_value(v, depth + 1) if not isinstance(v, ast.FormattedValue) else None
        for v in node.values
    ]
    return _joined(parts, "")


def _call(node: ast.Call, depth: int) -> str | None:
    """What a call returns, for the calls that build paths, decode or join strings.

    The conditions are told apart by the name the call ends with, so the first that
    gives a value is the only one that could."""
    name = call_name(node.func)
    arg = static_value(node.args[0], depth + 1) if node.args else None
    for returned in _CALL_VALUES:
        value = returned(node, name, arg, depth)
        if value is not None:
            return value
    return None


def _home(node: ast.Call, name: str, arg: str | None, depth: int) -> str | None:
    if name.endswith(("Path.home", "expanduser", "home")) and (arg is None or arg.startswith("~")):
        return "~" if arg is None else arg
    if name.endswith("getenv") and arg == "HOME":
        return "~"
    return None


def _path(node: ast.Call, name: str, arg: str | None, depth: int) -> str | None:
    return arg if name in ("Path", "pathlib.Path", "os.path.join", "str") else None


def _decode(node: ast.Call, name: str, arg: str | None, depth: int) -> str | None:
    if isinstance(node.func, ast.Attribute) and node.func.attr == "decode":
        return static_value(node.func.value, depth + 1)
    return None


def _from_hex(node: ast.Call, name: str, arg: str | None, depth: int) -> str | None:
    if not name.endswith("fromhex") or arg is None:
        return None
    try:
        return bytes.fromhex(arg).decode("utf-8", "replace")
    except ValueError:
        return None


def _from_base64(node: ast.Call, name: str, arg: str | None, depth: int) -> str | None:
    if not name.endswith(("b64decode", "decodebytes", "b32decode")) or arg is None:
        return None
    try:
        decode = base64.b32decode if "b32" in name else base64.b64decode
        return decode(arg + "=" * (-len(arg) % 4 if "b32" not in name else 0)).decode(
            "utf-8", "replace"
        )
    except (binascii.Error, ValueError):
        return None


def _chr(node: ast.Call, name: str, arg: str | None, depth: int) -> str | None:
    if (
        name == "chr"
        and node.args  # chr() alone: Python's TypeError, no character
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, int)
    ):
        return chr(node.args[0].value) if 0 <= node.args[0].value < 0x110000 else None
    return None


def _join(node: ast.Call, name: str, arg: str | None, depth: int) -> str | None:
    if not (isinstance(node.func, ast.Attribute) and node.func.attr == "join" and node.args):
        return None
    sep = static_value(node.func.value, depth + 1)
    items = node.args[0]
    if sep is not None and isinstance(items, ast.List | ast.Tuple):
        return _joined([static_value(e, depth + 1) for e in items.elts], sep)
    return None


_CALL_VALUES: Final[tuple[Callable[[ast.Call, str, str | None, int], str | None], ...]] = (
    _home,
    _path,
    _decode,
    _from_hex,
    _from_base64,
    _chr,
    _join,
)
_VALUES: Final[tuple[tuple[type[ast.expr], Callable[..., str | None]], ...]] = (
    (ast.Constant, _constant),
    (ast.List, _sequence),
    (ast.Tuple, _sequence),
    (ast.BinOp, _sum),
    (ast.JoinedStr, _f_string),
    (ast.Call, _call),
)


class _Python:
    """One walk over a parsed piece of Python: the findings of its calls, and what the
    calls together amount to (walking the root and deleting, a socket on the standard
    streams, reading credentials and sending)."""

    def __init__(self, code: str, depth: int, judges: Judges) -> None:
        self.code = code
        self.depth = depth
        self.judges = judges
        self.found: list[Finding] = []
        self.reads_secret = self.connects = self.dups = False
        self.walks_root = self.removes = False

    def judge(self, tree: ast.AST) -> list[Finding]:
        for node in ast.walk(tree):
            if isinstance(node, ast.While | ast.For) and _forks(node):
                self.found.append(block("fork-bomb", "forks in a loop"))
            if isinstance(node, ast.Call):
                self.call(node)
        if self.walks_root and self.removes:
            self.found.append(block("fs-wipe", "walks the root or home and deletes what it finds"))
        if self.connects and self.dups:
            self.found.append(block("reverse-shell", "connects a socket to the standard streams"))
        if self.reads_secret and _NETWORK.search(self.code):
            self.found.append(block("credential-exfil", "reads credentials and sends them out"))
        return self.found

    def call(self, node: ast.Call) -> None:
        name = call_name(node.func)
        args = [static_value(a) for a in node.args]
        first = args[0] if args else None
        if name in _RUNNERS:
            if first is not None:
                self.found.extend(self.judges.shell(first, self.depth + 1))
        elif name in _TREE_DELETERS:
            self.deletes(name, first)
        elif name in _EVALUATORS:
            self.evaluates(node, first)
        elif name in _WALKERS:
            self.walks_root = self.walks_root or (
                first is not None and classify(first) in ("root", "home", "system")
            )
        elif name in _OPENERS:
            self.opens(first, args)
        elif name.endswith(".connect") or name == "socket.create_connection":
            self.connects = True
        elif name.endswith("dup2"):
            self.dups = True

    def deletes(self, name: str, first: str | None) -> None:
        self.removes = True
        found = deletion_finding(first, "deletes") if first is not None else None
        if found is not None and (
            name == "shutil.rmtree" or found.risk == "approve" or first in ("/", "~")
        ):
            self.found.append(found)

    def evaluates(self, node: ast.Call, first: str | None) -> None:
        if not node.args:
            return
        if first is not None:
            self.found.extend(judge_python(first, self.depth + 1, self.judges))
        elif _DOWNLOAD.search(ast.unparse(node.args[0])):
            self.found.append(block("download-exec", "runs code fetched from the network"))

    def opens(self, first: str | None, args: list[str | None]) -> None:
        if first is None:
            return
        self.reads_secret = self.reads_secret or classify(first) in ("credential", "system")
        mode = args[1] if len(args) > 1 else None
        if (
            mode
            and ("w" in mode or "a" in mode)
            and classify(first) in ("device", "system", "credential")
        ):
            self.found.append(block("fs-wipe", f"overwrites {first}"))


def _forks(loop: ast.While | ast.For) -> bool:
    return any(
        call_name(c.func).endswith("fork") for c in ast.walk(loop) if isinstance(c, ast.Call)
    )
