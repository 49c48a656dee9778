"""Token usage as the execution store sums it: the values of :meth:`ExecutionStore.usage`.

Every completed model call step — a turn's ``model_call`` and a summarising
``compaction`` (:data:`USAGE_STEP_KINDS`) — whose model reported usage carries it normalised
under ``data["tokens"]`` (``input``, ``output``, ``cached``; see
:func:`toolang_core.spend.tokens_of`). A store sums those over the turns a
:class:`UsageFilter` selects; it never reads the provider's own keys.
"""

from __future__ import annotations

from typing import Any, Final

import attrs

TOKEN_KINDS: Final = ("input", "output", "cached")
"""The keys of a model call step's ``data["tokens"]``."""
USAGE_STEP_KINDS: Final = ("model_call", "compaction")
"""The kinds of step that are model calls a store sums (a compaction's summarising call
is spent like any other)."""
USAGE_STEPS_SQL: Final = (
    "s.kind IN (" + ", ".join(f"'{kind}'" for kind in USAGE_STEP_KINDS) + ") "
    "AND s.status = 'completed'"
)
"""A usage sum's condition on its steps ``s``, for SQL backends."""
TASK_THREAD_PREFIX: Final = "task:"
"""A task run's thread is ``task:<its id>`` (``toolang_core.taskruns`` uses this one)."""
TASK_RUN_THREADS_SQL: Final = (
    "WITH RECURSIVE run_threads(thread_id) AS ("
    "SELECT CAST({mark} AS TEXT) UNION "
    "SELECT c.thread_id FROM {turns} c JOIN {turns} p ON p.id = c.parent "
    "JOIN run_threads r ON p.thread_id = r.thread_id "
    f"WHERE c.source = 'task' AND c.thread_id = '{TASK_THREAD_PREFIX}' || c.id"
    ") SELECT thread_id FROM run_threads"
)
"""The threads of a task run, for SQL backends (``{mark}``: the placeholder of the
run's thread ``task:<id>``; ``{turns}``: the turn requests table): its own, then the
thread of every task run a turn on one of those threads spawned (its ``parent``) — a
child run's, a grandchild's, … Task runs are turns of source ``task`` on the thread
``task:<their id>`` (:mod:`toolang_core.taskruns`)."""


@attrs.frozen
class Usage:
    """Tokens and model calls. ``total`` (what limits count) is input plus output;
    ``cached`` is the part of the input the provider served from its cache (reported
    by some providers only; never counted twice)."""

    input: int = 0
    output: int = 0
    cached: int = 0
    model_calls: int = 0

    @property
    def total(self) -> int:
        return self.input + self.output

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input + other.input,
            self.output + other.output,
            self.cached + other.cached,
            self.model_calls + other.model_calls,
        )

    def to_json(self) -> dict[str, int]:
        """As the CLI's ``--json`` and the HTTP API show it."""
        return {
            "input_tokens": self.input,
            "output_tokens": self.output,
            "cached_tokens": self.cached,
            "total_tokens": self.total,
            "model_calls": self.model_calls,
        }

    def describe(self) -> str:
        """One line for people: ``"120 tokens (100 input, 20 output) in 1 model call"``
        (the cached part named only when there is one)."""
        cached = f", {self.cached} cached" if self.cached else ""
        calls = "model call" if self.model_calls == 1 else "model calls"
        return (
            f"{self.total} tokens ({self.input} input, {self.output} output{cached}) "
            f"in {self.model_calls} {calls}"
        )

    @classmethod
    def of_row(cls, row: Any) -> Usage:
        """From a store's ``(model_calls, input, output, cached)`` row (sums may be NULL)."""
        calls, inputs, outputs, cached = row
        return cls(int(inputs or 0), int(outputs or 0), int(cached or 0), int(calls or 0))


@attrs.frozen
class UsageFilter:
    """Which model calls :meth:`ExecutionStore.usage` sums; every field set must match.

    ``turn_id``, ``thread_id`` (one thread, e.g. a task run's own ``task:<id>``),
    ``task_run`` (a task run's id: every turn of its thread and of the threads of the
    task runs it spawned, theirs in turn — :data:`TASK_RUN_THREADS_SQL`),
    ``owner`` (the turn request's owner), ``budget`` (the scope of the spend budget its
    turn draws on, e.g. ``team:<id>``: ``meta["budget"]["scope"]``), ``since`` (steps
    finished at or after this time, seconds since the epoch). ``exclude_turn`` leaves
    one turn out (a running turn counts its own calls itself: some are not stored yet).
    """

    turn_id: str | None = None
    thread_id: str | None = None
    owner: str | None = None
    task_run: str | None = None
    budget: str | None = None
    since: float | None = None
    exclude_turn: str | None = None
