"""What a store backend shares with the built-in ones: the namespace for backend authors.

An ordinary plugin needs only :mod:`toolang_core.store` (the contract: the
:class:`~toolang_core.store.ExecutionStore` protocol, its values and errors, the owner
rules). A plugin that *implements* that contract — a ``toolang_register_stores``
backend such as ``toolang-store-postgres`` — also imports the helpers here, which the
SQLite store and toolang-store-postgres both use so that every decision they make is
made once (docs/store.md, "Writing a backend"):

- **base** — :class:`StoreBase` (``claim``, ``finish``, ``finish_many``, ``put_record``,
  ``put_records``, ``thread_history`` around a backend's narrower primitives),
  :class:`ClaimRequest`, :class:`FencedOut`, :func:`insert_each`, :func:`numbered_together`,
  :func:`finished_records` and the status checks;
- **rows** — the column lists and rows to records (:func:`turn_from_row` …), a new
  row's values (:func:`new_turn_values`, :func:`new_run_values`) and a turn listing's
  ``WHERE`` (:func:`turn_filter_sql`) and a usage sum's (:func:`usage_filter_sql`);
- **submission** — :func:`plan_submit` over a :class:`ThreadState`, giving a
  :class:`SubmitPlan` that :func:`carry_out` applies (:func:`make_room`,
  :func:`is_simple`); the refusals :func:`wrong_group` and :func:`wrong_owner`;
- **owners** — :func:`check_owner`, the rule every submission is held to, and
  :func:`not_thread_owner`, its one refusal (a backend's own constraint reports it);
- **lifecycle** — how queued requests end (:class:`QueuedEnd`), how many crashes
  while parked spend no attempt (:func:`parked_crashes_free`), the cancellation
  cascade (:func:`cancel_tree`) and steering (:func:`take_steering`);
- **JSON and text** — :func:`stored_json`, the text every JSON value is stored as
  (``NaN`` and the infinities refused, a NUL written out as ``\\x00``: every store
  keeps the same text), and :func:`stored_text`, a text column's value (a NUL written
  out the same way);
- **migrations** — the guarded procedure (:func:`migrate_guarded`,
  :func:`pending_migrations`);
- **snapshots** — the checked-in schema check (:func:`stale_snapshot`,
  :func:`snapshot_main`).

These names change with the backends' needs more often than the contract; they are
public for backends only, and listed in :data:`__all__`.
"""

from toolang_core.store.base import (
    ClaimRequest,
    FencedOut,
    StoreBase,
    check_active_status,
    check_finish_status,
    finished_records,
    insert_each,
    numbered_together,
)
from toolang_core.store.json_text import dumps as stored_json, nul_written_out as stored_text
from toolang_core.store.lifecycle import (
    INTERRUPTED,
    PARKED_CRASHES_FREE_PER_ATTEMPT,
    EndQueued,
    QueuedEnd,
    cancel_tree,
    canceled,
    dropped_by,
    parked_crashes_free,
    steered_into,
    take_steering,
)
from toolang_core.store.migrations import migrate_guarded, pending_migrations
from toolang_core.store.owners import check_owner, not_thread_owner
from toolang_core.store.rows import (
    OPTIONAL_COLUMNS,
    RECORD_COLUMNS,
    RUN_COLUMNS,
    STEP_COLUMNS,
    TURN_COLUMNS,
    NewTurnValues,
    from_json,
    heartbeat_from_rows,
    new_run_values,
    new_turn_values,
    record_from_row,
    run_from_row,
    step_from_row,
    turn_filter_sql,
    turn_from_row,
    usage_filter_sql,
)
from toolang_core.store.snapshot import snapshot_main, stale_snapshot
from toolang_core.store.submit_plan import (
    SubmitPlan,
    ThreadState,
    carry_out,
    is_simple,
    make_room,
    plan_submit,
    wrong_group,
    wrong_owner,
)
from toolang_core.store.usage import USAGE_STEPS_SQL

__all__ = [
    "INTERRUPTED",
    "OPTIONAL_COLUMNS",
    "PARKED_CRASHES_FREE_PER_ATTEMPT",
    "RECORD_COLUMNS",
    "RUN_COLUMNS",
    "STEP_COLUMNS",
    "TURN_COLUMNS",
    "USAGE_STEPS_SQL",
    "ClaimRequest",
    "EndQueued",
    "FencedOut",
    "NewTurnValues",
    "QueuedEnd",
    "StoreBase",
    "SubmitPlan",
    "ThreadState",
    "cancel_tree",
    "canceled",
    "carry_out",
    "check_active_status",
    "check_finish_status",
    "check_owner",
    "dropped_by",
    "finished_records",
    "from_json",
    "heartbeat_from_rows",
    "insert_each",
    "is_simple",
    "make_room",
    "migrate_guarded",
    "new_run_values",
    "new_turn_values",
    "not_thread_owner",
    "numbered_together",
    "parked_crashes_free",
    "pending_migrations",
    "plan_submit",
    "record_from_row",
    "run_from_row",
    "snapshot_main",
    "stale_snapshot",
    "steered_into",
    "step_from_row",
    "stored_json",
    "stored_text",
    "take_steering",
    "turn_filter_sql",
    "turn_from_row",
    "usage_filter_sql",
    "wrong_group",
    "wrong_owner",
]
