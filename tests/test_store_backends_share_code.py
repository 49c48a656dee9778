"""The two store backends share their Python through ``toolang_core.store``, not by copy.

The SQLite store (``toolang_core/store/sqlite``) and ``toolang-store-postgres`` differ in
their SQL and their locking; every decision both make lives once in the core's public
store modules (``base``, ``rows``, ``submit_plan``, ``lifecycle``, ``migrations``). This
test reads both backends' sources as text (it imports no plugin) and fails on any run of
``WINDOW`` lines of Python of one shape (the same but for names, strings and numbers)
that stands in both, naming the two places — the check the ``duplicates`` tool makes,
without needing it. SQL (and any other text in string literals), comments, blank lines,
imports and lone brackets are not counted.
"""

from __future__ import annotations

import ast
import io
import keyword
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SQLITE = ROOT / "toolang_core" / "store" / "sqlite"
POSTGRES = ROOT / "plugins" / "toolang-store-postgres" / "toolang_store_postgres"
WINDOW = 6
PUNCTUATION = set("()[]{},:;+ ")


def code_lines(path: Path) -> list[tuple[int, str]]:
    """``(line number, line with white space folded)`` for each line that counts."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    text = [[False] * (len(line) + 1) for line in lines]  # characters inside strings
    skipped: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            (row, col), _ = token.start, token.end
            lines[row - 1] = lines[row - 1][:col]
        elif token.type == tokenize.STRING:
            (first, start), (last, end) = token.start, token.end
            for row in range(first, last + 1):
                begin = start if row == first else 0
                stop = end if row == last else len(lines[row - 1])
                for col in range(begin, stop):
                    text[row - 1][col] = True
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            skipped.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    kept = []
    for number, line in enumerate(lines, start=1):
        rest = "".join(ch for col, ch in enumerate(line) if not text[number - 1][col])
        if number in skipped or not set(rest) - PUNCTUATION:
            continue  # an import, a blank line, a lone bracket, or text (SQL) only
        kept.append((number, " ".join(line.split())))
    return kept


STRING = re.compile(r"""[rbfu]*("[^"]*"|'[^']*')""")
NUMBER = re.compile(r"\b\d[\d_.]*\b")
NAME = re.compile(r"\b[A-Za-z_]\w*\b")


def shape(line: str) -> str:
    """``line`` with its names, strings and numbers made alike (keywords kept): two
    lines of one shape do the same with other names."""
    line = NUMBER.sub("0", STRING.sub("S", line))
    return NAME.sub(lambda m: m[0] if keyword.iskeyword(m[0]) else "N", line)


def windows(folder: Path) -> dict[tuple[str, ...], str]:
    """Every run of ``WINDOW`` counted lines of the folder's modules, by shape, and
    where it is."""
    found: dict[tuple[str, ...], str] = {}
    for path in sorted(folder.glob("*.py")):
        lines = code_lines(path)
        for i in range(len(lines) - WINDOW + 1):
            run = tuple(shape(text) for _, text in lines[i : i + WINDOW])
            where = f"{path.parent.name}/{path.name}:{lines[i][0]}-{lines[i + WINDOW - 1][0]}"
            found.setdefault(run, where)
    return found


def shared_runs(first: Path, second: Path) -> list[str]:
    """Where each run of ``WINDOW`` lines that stands in both folders is."""
    one, other = windows(first), windows(second)
    return [f"{one[run]} ~ {other[run]}" for run in one if run in other]


def test_no_run_of_python_lines_stands_in_both_store_backends():
    shared = shared_runs(SQLITE, POSTGRES)
    assert not shared, (
        f"{len(shared)} run(s) of {WINDOW} lines stand in both store backends; move the "
        "logic into a public module of toolang_core.store that both call:\n" + "\n".join(shared)
    )


FUNCTION = """
import json
from typing import Any


def f(rows):  # a comment
    out = []
    for row in rows:
        if row[1]:
            out.append(row[0])
        else:
            out.append(None)
    return out
"""
SQL = """
Q = (
    "SELECT a, b, c FROM t "
    "WHERE a = ? "
    "ORDER BY b"
)
"""


def folders(tmp_path: Path, one: str, other: str) -> tuple[Path, Path]:
    for name, text in (("one", one), ("other", other)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "m.py").write_text(text)
    return tmp_path / "one", tmp_path / "other"


def test_the_check_counts_code_lines_only(tmp_path):
    (tmp_path / "m.py").write_text(FUNCTION + SQL)
    assert [text for _, text in code_lines(tmp_path / "m.py")] == [
        "def f(rows):",
        "out = []",
        "for row in rows:",
        "if row[1]:",
        "out.append(row[0])",
        "else:",
        "out.append(None)",
        "return out",
        "Q = (",
    ]


def test_the_check_finds_a_function_copied_with_other_names(tmp_path):
    renamed = FUNCTION.replace("def f", "def g").replace("row", "item").replace("[0]", "[2]")
    one, other = folders(tmp_path, FUNCTION, renamed)
    assert shared_runs(one, other) == [  # the function's eight lines: three runs of six
        "one/m.py:6-11 ~ other/m.py:6-11",
        "one/m.py:7-12 ~ other/m.py:7-12",
        "one/m.py:8-13 ~ other/m.py:8-13",
    ]


def test_the_check_passes_over_the_same_sql_and_imports(tmp_path):
    one, other = folders(tmp_path, "import json\n" + SQL * 3, "import json\n" + SQL * 3)
    assert shared_runs(one, other) == []
