"""Checked-in schema snapshots: what a backend's migrations build, kept as text.

Each backend renders the schema its migrations build on an empty database and keeps
the result beside its code (``toolang_core/store/sqlite/schema.sql``, the PostgreSQL
plugin's ``schema.sql``). A test renders it again and fails with a diff when the file
is stale, so a schema change is read in review as a diff of plain SQL, not only as a
new migration. Refresh a snapshot with the command its module names (``--write``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path


def stale_snapshot(path: Path, rendered: str, refresh: str) -> str | None:
    """``None`` when ``path`` holds ``rendered``; else what differs, as a unified diff
    from the file to the migrations' schema, and the command ``refresh`` to update it."""
    import difflib  # here: every runtime imports toolang_core.store, few check snapshots

    kept = path.read_text(encoding="utf-8") if path.exists() else ""
    if kept == rendered:
        return None
    diff = difflib.unified_diff(
        kept.splitlines(keepends=True),
        rendered.splitlines(keepends=True),
        fromfile=f"{path} (checked in)",
        tofile="the schema the migrations build",
    )
    return f"{path} is stale; refresh it with `{refresh}` and review the diff:\n" + "".join(diff)


def snapshot_main(
    argv: Sequence[str] | None, *, render: Callable[[], str], path: Path, refresh: str
) -> int:
    """The command line of a snapshot module: ``--write`` refreshes ``path`` from
    ``render()``, no option checks it (exit 1 and the diff when stale)."""
    import argparse

    parser = argparse.ArgumentParser(description=f"the schema snapshot {path.name}")
    parser.add_argument("--write", action="store_true", help=f"rewrite {path}")
    args = parser.parse_args(argv)
    rendered = render()
    if args.write:
        path.write_text(rendered, encoding="utf-8")
        print(f"wrote {path}")
        return 0
    problem = stale_snapshot(path, rendered, refresh)
    if problem is None:
        print(f"{path} is up to date")
        return 0
    print(problem, file=sys.stderr)
    return 1
