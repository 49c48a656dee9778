"""The two store backends share their Python through ``toolang_core.store``, not by copy.

The SQLite store (``toolang_core/store/sqlite``) and ``toolang-store-postgres`` differ in
their SQL and their locking; every decision both make lives once in the core's public
store modules (``rows``, ``submit_plan``, ``lifecycle``, ``migrations``). This test reads
both backends' sources as text (it imports no plugin) and fails on any run of
``WINDOW`` lines of Python that stands in both, naming the two places — the check the
``duplicates`` tool makes, without needing it. SQL (and any other text in string
literals), comments, blank lines, imports and lone brackets are not counted.
"""

from __future__ import annotations

import ast
import io
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


def windows(folder: Path) -> dict[tuple[str, ...], str]:
    """Every run of ``WINDOW`` counted lines of the folder's modules, and where it is."""
    found: dict[tuple[str, ...], str] = {}
    for path in sorted(folder.glob("*.py")):
        lines = code_lines(path)
        for i in range(len(lines) - WINDOW + 1):
            run = tuple(text for _, text in lines[i : i + WINDOW])
            where = f"{path.parent.name}/{path.name}:{lines[i][0]}-{lines[i + WINDOW - 1][0]}"
            found.setdefault(run, where)
    return found


def test_no_run_of_python_lines_stands_in_both_store_backends():
    sqlite, postgres = windows(SQLITE), windows(POSTGRES)
    shared = [f"{sqlite[run]} ~ {postgres[run]}" for run in sqlite if run in postgres]
    assert not shared, (
        f"{len(shared)} run(s) of {WINDOW} lines stand in both store backends; move the "
        "logic into a public module of toolang_core.store that both call:\n" + "\n".join(shared)
    )


def test_the_check_sees_a_copied_block(tmp_path):
    """The checker itself: a function copied between two modules is found; the same SQL
    text and imports are not."""
    body = (
        "import json\nfrom typing import Any\n\n\ndef f(rows):\n    out = []\n"
        "    for row in rows:\n        if row[1]:\n            out.append(row[0])\n"
        "        else:\n            out.append(None)\n    return out\n"
    )
    sql = 'Q = (\n    "SELECT a, b, c FROM t "\n    "WHERE a = ? "\n    "ORDER BY b"\n)\n'
    (tmp_path / "a.py").write_text(body + sql)
    (tmp_path / "b.py").write_text(sql * 3)
    assert [text for _, text in code_lines(tmp_path / "a.py")] == [
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
    assert code_lines(tmp_path / "b.py") == [(1, "Q = ("), (6, "Q = ("), (11, "Q = (")]
    assert len(windows(tmp_path)) == 4  # a.py's nine lines; b.py has too few to count
    (tmp_path / "b.py").write_text("def g(rows):\n    out = []\n" + body[body.index("    for") :])
    assert (
        "a.py:"
        in windows(tmp_path)[
            (
                "out = []",
                "for row in rows:",
                "if row[1]:",
                "out.append(row[0])",
                "else:",
                "out.append(None)",
            )
        ]
    )
