"""Execution stores: the contract between the runtime and the plugins that keep its state.

What every plugin may use: the :class:`ExecutionStore` protocol, the values and errors
it speaks in, and the owner rules (:func:`is_own`, :func:`check_thread`, :func:`may_see`,
:func:`threads_seen_by`; see :mod:`toolang_core.store.owners`). A backend plugin
(``toolang_register_stores``) implements :class:`ExecutionStore` with these values,
takes the helpers the built-in backends share from :mod:`toolang_core.store.backend`
(the namespace for backend authors), and proves itself with
``toolang_core.testing.store_conformance.StoreConformance``. The SQLite backend under
this package is not public.
"""

from typing import Any

from toolang_core.store.errors import (
    NotThreadOwner,
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
from toolang_core.store.owners import (
    check_thread,
    is_own,
    may_see,
    sees_every_owner,
    threads_seen_by,
)
from toolang_core.store.protocol import ExecutionStore, Waker
from toolang_core.store.types import (
    ACTIVE,
    TERMINAL,
    CancelResult,
    Finish,
    GroupCount,
    Heartbeat,
    NewTurnRequest,
    Overflow,
    PastTurn,
    Record,
    RecordWrite,
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
from toolang_core.store.usage import Usage, UsageFilter

__all__ = [
    "ACTIVE",
    "TERMINAL",
    "CancelResult",
    "ExecutionStore",
    "Finish",
    "GroupCount",
    "Heartbeat",
    "NewTurnRequest",
    "NotThreadOwner",
    "Overflow",
    "PastTurn",
    "Record",
    "RecordConflict",
    "RecordWrite",
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
    "SubmitRejected",
    "SubmitResult",
    "SubmitRules",
    "ThreadInfo",
    "TurnFilter",
    "TurnNotFound",
    "TurnRequest",
    "TurnStatus",
    "Usage",
    "UsageFilter",
    "Waker",
    "check_thread",
    "is_own",
    "may_see",
    "rank_for",
    "sees_every_owner",
    "threads_seen_by",
]


def __getattr__(name: str) -> Any:
    # Deprecated since 0.2, removed in 0.3: a backend's helpers (StoreBase, the row
    # helpers, plan_submit, …) were exported here; they moved to the backends' namespace.
    import importlib
    import warnings

    backend = importlib.import_module("toolang_core.store.backend")
    if name not in backend.__all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

    warnings.warn(
        f"toolang_core.store.{name} is deprecated since toolang-core 0.2 and removed in "
        f"0.3: import it from toolang_core.store.backend (the namespace for store "
        "backends, docs/store.md)",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(backend, name)
