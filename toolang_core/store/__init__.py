"""Execution stores: the contract between the runtime and the plugins that keep its state.

A backend plugin (``toolang_register_stores``) implements :class:`ExecutionStore` with
the values defined here and proves itself with
``toolang_core.testing.store_conformance.StoreConformance``. This module is public API
for store backends; the SQLite backend under it is not.
"""

from toolang_core.store.errors import (
    RecordConflict,
    StoreBusy,
    StoreCorrupt,
    StoreError,
    StoreMissing,
    StoreNeedsMigration,
    StoreReplaced,
    StoreSchemaTooNew,
    StoreUnavailable,
    SubmitRejected,
    TurnNotFound,
)
from toolang_core.store.migrations import migrate_guarded, pending_migrations
from toolang_core.store.protocol import ExecutionStore, Waker
from toolang_core.store.submit_plan import (
    SubmitPlan,
    ThreadState,
    plan_submit,
    wrong_group,
    wrong_owner,
)
from toolang_core.store.types import (
    ACTIVE,
    TERMINAL,
    CancelResult,
    Finish,
    GroupCount,
    Heartbeat,
    NewTurnRequest,
    Overflow,
    Record,
    Recovery,
    RunRecord,
    StepRecord,
    Strategy,
    SubmitResult,
    SubmitRules,
    ThreadInfo,
    TurnFilter,
    TurnRequest,
    TurnStatus,
    rank_for,
)

__all__ = [
    "ACTIVE",
    "TERMINAL",
    "CancelResult",
    "ExecutionStore",
    "Finish",
    "GroupCount",
    "Heartbeat",
    "NewTurnRequest",
    "Overflow",
    "Record",
    "RecordConflict",
    "Recovery",
    "RunRecord",
    "StepRecord",
    "StoreBusy",
    "StoreCorrupt",
    "StoreError",
    "StoreMissing",
    "StoreNeedsMigration",
    "StoreReplaced",
    "StoreSchemaTooNew",
    "StoreUnavailable",
    "Strategy",
    "SubmitPlan",
    "SubmitRejected",
    "SubmitResult",
    "SubmitRules",
    "ThreadInfo",
    "ThreadState",
    "TurnFilter",
    "TurnNotFound",
    "TurnRequest",
    "TurnStatus",
    "Waker",
    "migrate_guarded",
    "pending_migrations",
    "plan_submit",
    "rank_for",
    "wrong_group",
    "wrong_owner",
]
