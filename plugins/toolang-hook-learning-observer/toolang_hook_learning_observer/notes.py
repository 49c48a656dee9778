"""The prompt note: which of an agent's tools failed recently, in one short factual line.

Two indexed queries: the agent's tools with a failure in the last ``recent_hours``
(a partial index holds failures only), then the last ``window_calls`` calls of each
such tool. A tool is named when ``min_failures`` of those calls failed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from toolang_hook_learning_observer.schema import TABLE
from toolang_hook_learning_observer.settings import LearningSettings

if TYPE_CHECKING:
    from toolang_core import PluginDatabase


def ago(seconds: float) -> str:
    """``just now``, ``40 s ago``, ``2 min ago``, ``3 h ago``, ``2 days ago``."""
    if seconds < 5:
        return "just now"
    if seconds < 60:
        return f"{seconds:.0f} s ago"
    if seconds < 3_600:
        return f"{seconds / 60:.0f} min ago"
    if seconds < 86_400:
        return f"{seconds / 3_600:.0f} h ago"
    days = seconds / 86_400
    return f"{days:.0f} day ago" if round(days) == 1 else f"{days:.0f} days ago"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_error(error_type: str | None, error: str | None) -> str:
    """``PermissionError: …`` — the type once, even when the text already starts with it."""
    text = (error or "").strip()
    kind = (error_type or "").strip()
    if not kind or text.startswith(kind):
        return text or kind or "error"
    return f"{kind}: {text}" if text else kind


def tool_line(tool: str, calls: Sequence[Any], now: float) -> str:
    """``fs_write failed 3 of its last 5 calls (most recently 2 min ago: PermissionError: …)``.

    ``calls`` are ``(ok, error_type, error, at)`` rows, newest first, at least one failed.
    """
    failed = [c for c in calls if not c[0]]
    latest = failed[0]
    where = (
        f"most recently {ago(now - latest[3])}: {_cut(describe_error(latest[1], latest[2]), 120)}"
    )
    if len(calls) == 1:
        return f"{tool} failed its last call ({where})"
    return f"{tool} failed {len(failed)} of its last {len(calls)} calls ({where})"


def failure_note(
    db: PluginDatabase, agent: str, settings: LearningSettings, now: float
) -> str | None:
    """The note for ``agent``'s next prompt, or ``None`` when no tool failed often enough."""
    if settings.max_notes == 0:
        return None
    candidates = db.execute(
        f"SELECT tool FROM {TABLE} WHERE agent = ? AND ok = 0 AND at >= ? "
        "GROUP BY tool ORDER BY MAX(at) DESC LIMIT ?",
        [agent, now - settings.recent_hours * 3_600, settings.max_notes * 4],
    ).fetchall()
    lines: list[str] = []
    for (tool,) in candidates:
        calls = db.execute(
            f"SELECT ok, error_type, error, at FROM {TABLE} WHERE agent = ? AND tool = ? "
            "ORDER BY at DESC, id DESC LIMIT ?",
            [agent, tool, settings.window_calls],
        ).fetchall()
        if sum(1 for c in calls if not c[0]) >= settings.min_failures:
            lines.append(tool_line(str(tool), calls, now))
        if len(lines) == settings.max_notes:
            break
    if not lines:
        return None
    return _cut("Recent tool failures: " + "; ".join(lines) + ".", settings.max_note_chars)
