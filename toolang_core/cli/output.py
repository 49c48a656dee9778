"""Small helpers for human-readable CLI output."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from typing import Any

import attrs
import click


def when(ts: float | None) -> str:
    """A local timestamp, to the second (``-`` when absent)."""
    if ts is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


def ago(ts: float | None, now: float | None = None) -> str:
    if ts is None:
        return "-"
    seconds = (now if now is not None else time.time()) - ts
    if seconds < 60:
        return f"{seconds:.0f}s ago"
    if seconds < 3600:
        return f"{seconds / 60:.0f}m ago"
    if seconds < 86400:
        return f"{seconds / 3600:.1f}h ago"
    return f"{seconds / 86400:.1f}d ago"


def short(text: str | None, width: int = 60) -> str:
    if not text:
        return ""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def table(rows: Sequence[Sequence[str]], headers: Sequence[str]) -> None:
    """Print rows as aligned columns (the last column is never padded)."""
    all_rows = [list(headers), *[list(r) for r in rows]]
    widths = [max(len(r[i]) for r in all_rows) for i in range(len(headers))]
    for row in all_rows:
        cells = [cell.ljust(widths[i]) if i < len(row) - 1 else cell for i, cell in enumerate(row)]
        click.echo("  ".join(cells).rstrip())


def as_json(value: Any) -> str:
    def default(obj: Any) -> Any:
        if attrs.has(type(obj)):
            return attrs.asdict(obj)
        if isinstance(obj, frozenset | set):
            return sorted(obj)
        return str(obj)

    return json.dumps(value, indent=2, default=default, ensure_ascii=False)


def echo_json(value: Any) -> None:
    click.echo(as_json(value))


def lines(items: Iterable[str]) -> None:
    for item in items:
        click.echo(item)
