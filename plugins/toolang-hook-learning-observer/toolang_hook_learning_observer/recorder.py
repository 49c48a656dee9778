"""Recording tool outcomes: one row per executed call, written in batches, pruned by age."""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from toolang_core import BatchWriter, ToolCall, ToolCallContext, ToolResult, redact_text
from toolang_hook_learning_observer.schema import (
    COLUMNS,
    MIGRATIONS,
    ROWS_PER_INSERT,
    SUCCESS_COLUMNS,
    TABLE,
    insert_rows,
)
from toolang_hook_learning_observer.settings import NAME, LearningSettings

if TYPE_CHECKING:
    from toolang_core import PluginDatabase, RuntimeView

SuccessRow = tuple[float, str, str, int, float, str, str, str]
"""The values of :data:`~.schema.SUCCESS_COLUMNS`."""
FailureRow = tuple[float, str, str, int, str, str | None, float, str, str, str]
"""The values of :data:`~.schema.COLUMNS`."""
OutcomeRow = SuccessRow | FailureRow

MASK_MARGIN: Final = 2_000
PRUNE_BATCH: Final = 5_000
PRUNE_EVERY_SECONDS: Final = 3_600.0


def settings_of(runtime: RuntimeView) -> LearningSettings:
    """The validated ``[plugins.hook-learning-observer]`` section (defaults when absent)."""
    return runtime.settings_for(NAME, LearningSettings)


def short_error(value: Any, limit: int) -> str | None:
    """The error text to keep: secrets masked first (so no half-cut key survives), then cut.

    Masking costs time per character, so a huge error is first cut with a margin wider
    than any credential shape: what the margin cuts is never kept anyway.
    """
    if value is None:
        return None
    text = redact_text(" ".join(str(value)[: limit + MASK_MARGIN].split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _label(value: Any, default: str = "?") -> str:
    return value if isinstance(value, str) and value else default


def _milliseconds(value: Any) -> float:
    try:
        ms = float(value)
    except (TypeError, ValueError):
        return 0.0
    return ms if math.isfinite(ms) and ms >= 0 else 0.0


def outcome_row(
    call: Any, result: Any, ctx: Any, *, now: float, max_error_chars: int
) -> OutcomeRow:
    """The row for one executed call: a :data:`SuccessRow` or a :data:`FailureRow`.
    Tolerates missing or ill-typed fields (never raises)."""
    typed = type(result) is ToolResult and type(call) is ToolCall
    if typed and type(ctx) is ToolCallContext and result.ok:  # the usual case: one tuple
        return (
            now,
            ctx.agent or "?",
            call.name or "?",
            1,
            _milliseconds(result.duration_ms),
            ctx.turn_id,
            ctx.thread_id,
            call.call_id,
        )
    agent = _label(getattr(ctx, "agent", None))
    tool = _label(getattr(call, "name", None))
    duration_ms = _milliseconds(getattr(result, "duration_ms", 0.0))
    turn_id = _label(getattr(ctx, "turn_id", None), "")
    thread_id = _label(getattr(ctx, "thread_id", None), "")
    call_id = _label(getattr(call, "call_id", None), "")
    if getattr(result, "ok", False) is True:
        return (now, agent, tool, 1, duration_ms, turn_id, thread_id, call_id)
    return (
        now,
        agent,
        tool,
        0,
        _label(getattr(result, "error_type", None), "error"),
        short_error(getattr(result, "error", None), max_error_chars),
        duration_ms,
        turn_id,
        thread_id,
        call_id,
    )


class Recorder:
    """One runtime's outcome recording (kept in ``runtime.plugin_state``)."""

    def __init__(self, runtime: RuntimeView, settings: LearningSettings) -> None:
        self.runtime = runtime
        self.settings = settings
        self.writer: BatchWriter[OutcomeRow] = BatchWriter(
            self._write,
            flush_seconds=settings.flush_seconds,
            batch_size=settings.batch_size,
            name=NAME,
        )
        self._pruned_at: float | None = None
        self._failures = 0
        """Failed calls observed by this runtime: only a failure can make a note appear."""
        self._quiet: dict[str, int] = {}
        """Agents whose note was none, with ``_failures`` at the time."""

    def database(self) -> PluginDatabase:
        """The plugin's database (created and migrated on first use in this runtime)."""
        return self.runtime.plugin_database(NAME, MIGRATIONS)

    def observe(self, call: Any, result: Any, ctx: Any) -> None:
        """Queue the outcome of one executed call (the per-call path: no I/O)."""
        row = outcome_row(
            call,
            result,
            ctx,
            now=self.runtime.clock(),
            max_error_chars=self.settings.max_error_chars,
        )
        if row[3] == 0:
            self._failures += 1
        self.writer.add(row)

    def note(self, agent: str) -> str | None:
        """The failure note for ``agent``'s next prompt (see :mod:`.notes`).

        An agent whose note was none keeps none until a call fails (successes and
        time only ever take failures out of a note), so the usual turn asks the
        database nothing and leaves the outcomes to be written in batches.
        """
        if self._quiet.get(agent) == self._failures:
            return None
        from toolang_hook_learning_observer.notes import failure_note

        self.writer.flush()  # outcomes of this runtime's last turn count already
        text = failure_note(self.database(), agent, self.settings, self.runtime.clock())
        if text is None:
            self._quiet[agent] = self._failures
        else:
            self._quiet.pop(agent, None)
        return text

    def prune(self) -> int:
        """Delete outcomes older than ``keep_days``, a few thousand rows per transaction."""
        cutoff = self.runtime.clock() - self.settings.keep_days * 86_400
        db = self.database()
        deleted = 0
        while True:
            # Rows are appended in time order: the oldest come first by rowid, so this
            # reads only what it deletes (no index on `at` to maintain on every insert).
            cursor = db.execute(
                f"DELETE FROM {TABLE} WHERE id IN (SELECT id FROM {TABLE} ORDER BY id "
                f"LIMIT {PRUNE_BATCH}) AND at < ?",
                [cutoff],
            )
            deleted += cursor.rowcount
            if cursor.rowcount < PRUNE_BATCH:
                break
        self._pruned_at = time.monotonic()
        return deleted

    def _write(self, rows: Sequence[OutcomeRow]) -> None:
        db = self.database()
        with db.transaction():
            # In order: each run of successes or of failures, ROWS_PER_INSERT at a time.
            for length, run in itertools.groupby(rows, len):
                columns = SUCCESS_COLUMNS if length == len(SUCCESS_COLUMNS) else COLUMNS
                same_shape = list(run)
                for start in range(0, len(same_shape), ROWS_PER_INSERT):
                    chunk = same_shape[start : start + ROWS_PER_INSERT]
                    db.execute(
                        insert_rows(columns, len(chunk)),
                        list(itertools.chain.from_iterable(chunk)),
                    )
        # A runtime that runs for weeks prunes as it goes, not only at start-up.
        if self._pruned_at is None or time.monotonic() - self._pruned_at > PRUNE_EVERY_SECONDS:
            self.prune()
