"""The two memory plugins share their Python through ``toolang_core.memory.kit``, not by
copy.

toolang-memory-sqlite and toolang-memory-postgres differ in their SQL, their full-text
index (FTS5, ``tsvector``) and their threads and transactions; what both do alike — a
query's terms, ranking, uses, failures, settings, entries in and out — lives once in
the core's public ``toolang_core.memory.kit``. This test reads both plugins' sources as
text (it imports neither) and fails on any run of ``WINDOW`` lines of Python of one
shape that stands in both, naming the two places: the check
tests/test_store_backends_share_code.py makes for the store backends. Each plugin's
``__init__.py`` is left out: its hook implementations (``toolang_register_settings``,
``toolang_register_memory``) are the registration every plugin writes alike.
"""

from __future__ import annotations

from pathlib import Path

from test_store_backends_share_code import WINDOW, code_lines, shape

ROOT = Path(__file__).resolve().parent.parent
SQLITE = ROOT / "plugins" / "toolang-memory-sqlite" / "toolang_memory_sqlite"
POSTGRES = ROOT / "plugins" / "toolang-memory-postgres" / "toolang_memory_postgres"


def windows(folder: Path) -> dict[tuple[str, ...], str]:
    """Every run of ``WINDOW`` counted lines of the plugin's modules but its
    ``__init__.py``, by shape, and where it is."""
    found: dict[tuple[str, ...], str] = {}
    for path in sorted(folder.glob("*.py")):
        if path.name == "__init__.py":
            continue
        lines = code_lines(path)
        for i in range(len(lines) - WINDOW + 1):
            run = tuple(shape(text) for _, text in lines[i : i + WINDOW])
            found.setdefault(run, f"{path.name}:{lines[i][0]}-{lines[i + WINDOW - 1][0]}")
    return found


def test_no_run_of_python_lines_stands_in_both_memory_plugins():
    assert SQLITE.is_dir() and POSTGRES.is_dir()
    one, other = windows(SQLITE), windows(POSTGRES)
    shared = [f"sqlite {one[run]} ~ postgres {other[run]}" for run in one if run in other]
    assert not shared, (
        f"{len(shared)} run(s) of {WINDOW} lines stand in both memory plugins; move the "
        "logic into toolang_core.memory.kit and call it from both:\n" + "\n".join(shared)
    )
